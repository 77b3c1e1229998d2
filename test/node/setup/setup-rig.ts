// What the setup tests share: running `npm run setup` as a user would (its own
// process, flags, no TTY), the stand-ins it talks to (GitHub's web and API,
// Cloudflare's API through wrangler's CLOUDFLARE_API_BASE_URL, Kubernetes), and
// headless Chromium as in the admin page's test.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../../scripts/lib/local-stack.ts";

export interface SetupRun {
  child: ChildProcess;
  output(): string;
  /** Resolves when the output matches (the match), rejects on exit first or after timeoutMs. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  exited: Promise<number>;
}

/** Setup as a user runs it; never on the repository's own wrangler.toml (a copy, unless --wrangler-config, the kept answers or --target cluster say otherwise). */
export function runSetup(args: string[], env: NodeJS.ProcessEnv): SetupRun {
  const stateDir = args[args.indexOf("--state-dir") + 1];
  const kept = args.includes("--state-dir") && stateDir !== undefined && existsSync(join(stateDir, "answers.json"));
  // The in-cluster target writes no wrangler config (no Cloudflare on that path).
  const config =
    args.includes("--target") ||
    args.includes("--wrangler-config") ||
    (kept && readFileSync(join(stateDir, "answers.json"), "utf8").includes('"wrangler-config"'))
      ? []
      : ["--wrangler-config", configCopy(mkdtempSync(join(tmpdir(), "arc-reaper-config-")))];
  const child = spawn(process.execPath, [join(ROOT, "scripts/setup/main.ts"), ...config, ...args], {
    cwd: ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  child.stdin?.end();
  let out = "";
  const listeners = new Set<() => void>();
  const feed = (d: Buffer) => {
    out += d.toString("utf8");
    for (const l of listeners) l();
  };
  child.stdout?.on("data", feed);
  child.stderr?.on("data", feed);
  // Setup's own exit is not the end: wrangler, its child in the same process
  // group, may still be writing its logs under HOME, so a test that removes its
  // folder at once races it. Exited means the whole group has gone.
  const exited = new Promise<number>((resolve) =>
    child.on("close", (code, signal) => {
      const status = code ?? (signal === "SIGINT" ? 130 : 1);
      void groupGone(child.pid).then(() => resolve(status));
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out);
          if (m) {
            done();
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${pattern} in setup's output:\n${out}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        exited.then((code) => {
          if (!pattern.test(out)) {
            done();
            reject(new Error(`setup exited (${code}) before ${pattern}:\n${out}`));
          }
        });
        check();
      });
    },
  };
}

/**
 * Resolves once no process of the group `pid` leads is left; after 15 s it
 * kills what remains. A real process must pass real time, so this polls.
 */
async function groupGone(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (let waited = 0; alive(); waited += 25) {
    if (waited >= 15_000) {
      process.kill(-pid, "SIGKILL");
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every file under `dir` (recursively), for a scan for secrets. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

export function filesContaining(files: string[], secrets: string[]): string[] {
  return files.filter((f) => {
    const text = readFileSync(f, "utf8");
    return secrets.some((s) => text.includes(s));
  });
}

/**
 * A copy of the repository's wrangler.toml in `dir` (its paths made absolute),
 * for setup to write its environment into, as it writes into a clone's own.
 */
export function configCopy(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const text = readFileSync(join(ROOT, "wrangler.toml"), "utf8")
    .replace(/^main = "([^"]+)"$/m, (_m, p: string) => `main = ${JSON.stringify(join(ROOT, p))}`)
    .replace(/^undici = "\.\/([^"]+)"$/m, (_m, p: string) => `undici = ${JSON.stringify(join(ROOT, p))}`);
  const path = join(dir, "wrangler.toml");
  writeFileSync(path, text);
  return path;
}
