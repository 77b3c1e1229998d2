// Starts the baseline Worker (bench/baseline-worker.ts) under `wrangler dev`
// on 127.0.0.1, in its own process group, the way scripts/lib/local-stack.ts
// starts arc-reaper, so both run in the same kind of workerd.
import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, ROOT, waitFor } from "../scripts/lib/local-stack.ts";

export interface BaselineStack {
  url: string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `config`: bench/baseline.wrangler.toml (signature only) or bench/durable-baseline.wrangler.toml (the durable minimum). */
export async function startBaselineStack(secret: string, startTimeoutMs = 90_000, config = "bench/baseline.wrangler.toml"): Promise<BaselineStack> {
  const stateDir = await mkdtemp(join(tmpdir(), "arc-reaper-bench-baseline-"));
  let child: ChildProcess | undefined;
  let exited = false;
  const lines: string[] = [];
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      if (child?.pid) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const onExit = () => killGroup("SIGKILL");
  const stop = async () => {
    process.off("exit", onExit);
    if (child && !exited) {
      const gone = new Promise<void>((resolve) => child?.once("exit", () => resolve()));
      killGroup("SIGTERM");
      if (!(await Promise.race([gone.then(() => true), sleep(5_000).then(() => false)]))) killGroup("SIGKILL");
    }
    killGroup("SIGKILL"); // workerd may outlive wrangler by a moment
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    // The secret goes in a file only this user reads, as local-stack does.
    const secrets = join(stateDir, "secrets.env");
    await writeFile(secrets, `GITHUB_WEBHOOK_SECRET="${secret}"\n`, { mode: 0o600 });
    await chmod(secrets, 0o600);
    const [port, inspectorPort] = [await freePort(), await freePort()];
    child = spawn(
      process.execPath,
      [
        join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
        "dev",
        "--config",
        join(ROOT, config),
        "--ip",
        "127.0.0.1",
        "--port",
        String(port),
        "--inspector-port",
        String(inspectorPort),
        "--env-file",
        secrets,
        "--persist-to",
        join(stateDir, "wrangler-state"),
        "--show-interactive-dev-session=false",
      ],
      {
        cwd: ROOT,
        detached: true, // own process group: stop() kills wrangler and workerd together
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
      },
    );
    process.once("exit", onExit);
    child.once("exit", () => (exited = true));
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8").on("data", (chunk: string) => {
        lines.push(...chunk.split("\n"));
        if (lines.length > 200) lines.splice(0, lines.length - 200);
      });
    }
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      "the baseline Worker to answer",
      async () => {
        if (exited) throw new Error(`wrangler dev exited:\n${lines.slice(-30).join("\n")}`);
        const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
        await res.arrayBuffer();
        return res.status === 405 ? true : undefined;
      },
      startTimeoutMs,
      250,
    );
    return { url, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
