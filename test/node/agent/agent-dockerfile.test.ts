// The agent's Dockerfile and .dockerignore, checked without docker (`npm run images`
// builds and starts the image itself, where buildah is): node 24 slim pinned by
// digest, the OCI labels, production dependencies only and no TypeScript, a
// non-root numeric user, nothing written at run time, every file the agent
// imports copied, and the agent starting from exactly the copied files on a
// read-only tree.
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { installedPackages, type Omitted } from "../../../scripts/images/installed-packages.ts";

/** A Dockerfile's reference to an ARG, as written: ${NAME}. */
const ref = (name: string): string => `\${${name}}`;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions (continuations joined, comments dropped), each with its stage index. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  const joined = text.replace(/\\\r?\n/g, " ");
  for (const raw of joined.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^(\S+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const op = (m[1] ?? "").toUpperCase();
    if (op === "FROM") stage += 1;
    out.push({ op, args: m[2] ?? "", stage });
  }
  return out;
}

const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const steps = instructions(dockerfile);
const lastStage = Math.max(...steps.map((s) => s.stage));
const final = steps.filter((s) => s.stage === lastStage);
// The global ARGs' defaults (before the first FROM): what FROM lines expand with, a default naming others expanded too.
const argDefaults = new Map(
  steps
    .filter((s) => s.op === "ARG" && s.stage === -1 && s.args.includes("="))
    .map((s) => [s.args.slice(0, s.args.indexOf("=")), s.args.slice(s.args.indexOf("=") + 1)]),
);
const expand = (s: string): string =>
  s.replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a: string | undefined, b: string | undefined) => expand(argDefaults.get(a ?? b ?? "") ?? ""));

/** Sources of the final stage's COPY lines from the build context (not --from). */
function contextCopies(): string[] {
  return final
    .filter((s) => s.op === "COPY" && !s.args.includes("--from"))
    .flatMap((s) => {
      const parts = s.args.split(/\s+/).filter((p) => !p.startsWith("--"));
      return parts.slice(0, -1);
    });
}

/** Every file the agent loads, following relative imports from src/agent/main.ts; and the packages it imports. */
function importGraph(): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\("([^"]+)"\)/g)) {
      const spec = m[1] ?? m[2] ?? "";
      if (/^import\s+type\s/.test(m[0].trim())) continue; // erased by type stripping
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      else if (!spec.startsWith("node:")) packages.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : (spec.split("/")[0] ?? spec));
    }
  };
  visit(join(ROOT, "src/agent/main.ts"));
  return { files, packages };
}

/** Whether a path in the build context survives .dockerignore (the allow-list form it uses: `*` then `!path`). */
function rules(): string[] {
  return readFileSync(join(ROOT, ".dockerignore"), "utf8")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

function allowedByDockerignore(path: string): boolean {
  let allowed = true;
  for (const rule of rules()) {
    const negate = rule.startsWith("!");
    const pattern = negate ? rule.slice(1) : rule;
    const matches = pattern === "*" || path === pattern || path.startsWith(`${pattern}/`);
    if (matches) allowed = negate;
  }
  return allowed;
}

/** Every file the final stage copies from the build context: the COPY sources as .dockerignore filters them. */
function copiedFiles(): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    if (!allowedByDockerignore(rel) && !rules().some((r) => r.startsWith(`!${rel}/`))) return;
    const abs = join(ROOT, rel);
    if (statSync(abs).isDirectory()) for (const f of readdirSync(abs)) walk(`${rel}/${f}`);
    else if (allowedByDockerignore(rel)) out.push(rel);
  };
  for (const c of contextCopies()) walk(c);
  return out;
}

const packageJson = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  license: string;
  repository: { url: string };
  devDependencies: Record<string, string>;
  dependencies: Record<string, string>;
};

describe("Dockerfile", () => {
  it("builds from node 24 slim in every stage, pinned by digest", () => {
    const froms = steps.filter((s) => s.op === "FROM").map((s) => expand(s.args.split(/\s+/)[0] ?? ""));
    expect(froms.length).toBeGreaterThan(0);
    for (const image of froms) expect(image).toMatch(/^docker\.io\/library\/node:24(\.\d+){0,2}-slim@sha256:[0-9a-f]{64}$/);
    // The same Node the project pins for the agent.
    const pinned = packageJson.devDependencies["node"];
    expect(froms[froms.length - 1]).toMatch(new RegExp(`^docker\\.io/library/node:${pinned}-slim@`));
    // Every stage names the one ARG, so `npm run images` (and a mirror) replaces the base in one place.
    for (const from of steps.filter((s) => s.op === "FROM")) expect(from.args).toMatch(/^\$\{NODE_IMAGE\}( AS \w+)?$/);
    expect(argDefaults.get("NODE_IMAGE")).toBe(`${ref("NODE_BASE")}@${ref("NODE_DIGEST")}`);
  });

  it("labels the image (OCI): source, version, revision, licenses, title, and the base it was built on", () => {
    const labels = Object.fromEntries(
      final.filter((s) => s.op === "LABEL").flatMap((s) => [...s.args.matchAll(/([\w.-]+)="([^"]*)"/g)].map((m) => [m[1] ?? "", m[2] ?? ""])),
    );
    const source = packageJson.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
    expect(labels).toEqual({
      "org.opencontainers.image.title": "arc-reaper-agent",
      "org.opencontainers.image.description": expect.any(String),
      "org.opencontainers.image.source": source,
      "org.opencontainers.image.licenses": packageJson.license,
      "org.opencontainers.image.version": ref("VERSION"),
      "org.opencontainers.image.revision": ref("REVISION"),
      "org.opencontainers.image.base.name": ref("NODE_BASE"),
      "org.opencontainers.image.base.digest": ref("NODE_DIGEST"),
    });
    // The stage declares the ARGs its labels use (a global ARG is not seen inside a stage otherwise).
    const declared = final.filter((s) => s.op === "ARG").map((s) => s.args.split("=")[0]);
    expect(declared).toEqual(expect.arrayContaining(["VERSION", "REVISION", "NODE_BASE", "NODE_DIGEST"]));
  });

  it("installs production dependencies only, from the lock file, without install scripts", () => {
    const runs = steps.filter((s) => s.op === "RUN").map((s) => s.args);
    expect(runs.some((r) => /\bnpm ci\b/.test(r) && /--omit=dev\b/.test(r) && /--ignore-scripts\b/.test(r))).toBe(true);
    for (const r of runs) expect(r).not.toMatch(/\bnpm (install|i)\b|\byarn\b|\bpnpm\b/);
  });

  it("runs as a non-root numeric user (runAsNonRoot can verify it) and writes nothing at run time", () => {
    const users = final.filter((s) => s.op === "USER").map((s) => s.args.trim());
    expect(users.length).toBeGreaterThan(0);
    const user = users[users.length - 1] ?? "";
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
    // The final stage only copies: no RUN (no chown, chmod or mkdir of writable places), no VOLUME.
    expect(final.map((s) => s.op).filter((op) => ["RUN", "VOLUME", "ADD"].includes(op))).toEqual([]);
    expect(dockerfile).not.toMatch(/--chown|--chmod|chmod\s/);
  });

  it("starts the agent in exec form", () => {
    const entry = final.filter((s) => s.op === "ENTRYPOINT" || s.op === "CMD");
    expect(entry.map((s) => [s.op, JSON.parse(s.args) as unknown])).toEqual([["ENTRYPOINT", ["node", "src/agent/main.ts"]]]);
  });

  it("copies exactly what the agent loads: its import graph is covered, nothing else of the repository", () => {
    const copies = contextCopies();
    expect(copies).not.toContain(".");
    for (const c of copies) expect(existsSync(join(ROOT, c)), c).toBe(true);
    const copied = new Set(copiedFiles().map((f) => join(ROOT, f)));
    const { files, packages } = importGraph();
    expect(files.size).toBeGreaterThan(5);
    for (const f of files) expect(copied.has(f), `${relative(ROOT, f)} is imported by the agent but not copied (list it in .dockerignore)`).toBe(true);
    for (const f of copied) {
      if (f === join(ROOT, "package.json")) continue;
      expect(files.has(f), `${relative(ROOT, f)} is copied but the agent never loads it`).toBe(true);
    }
    // Packages the agent imports are production dependencies (npm ci --omit=dev installs only those).
    const deps = packageJson.dependencies;
    expect(packages.size).toBeGreaterThan(0);
    for (const p of packages) expect(Object.keys(deps), `${p} must be in dependencies`).toContain(p);
  });

  it("installs no package the agent does not load: no TypeScript, and --omit=optional costs it nothing else", () => {
    const omit = steps
      .filter((s) => s.op === "RUN" && /\bnpm ci\b/.test(s.args))
      .flatMap((s) => [...s.args.matchAll(/--omit=(\w+)/g)].map((m) => m[1] as Omitted));
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as Parameters<typeof installedPackages>[0];
    const installed = installedPackages(lock, omit);
    // TypeScript is valibot's optional peer: --omit=dev alone keeps it (31 MB with its native binary).
    expect(installedPackages(lock, ["dev"])).toContain("node_modules/typescript");
    expect(installed.filter((p) => /(^|\/)node_modules\/(typescript|@typescript\/)/.test(p))).toEqual([]);
    // What the Dockerfile's flags leave out beyond --omit=dev is TypeScript's alone; every package the agent imports stays.
    const dropped = installedPackages(lock, ["dev"]).filter((p) => !installed.includes(p));
    for (const p of dropped) expect(p).toMatch(/^node_modules\/(typescript|@typescript\/)/);
    for (const p of importGraph().packages) expect(installed, p).toContain(`node_modules/${p}`);
  });

  it(".dockerignore lets in what the Dockerfile copies and keeps secrets and host files out", () => {
    for (const c of [...copiedFiles(), "package-lock.json"]) expect(allowedByDockerignore(c), c).toBe(true);
    for (const p of [".dev.vars", ".env", ".git", "node_modules", ".wrangler", "test", "src/index.ts", "infra", "wrangler.toml"]) {
      expect(allowedByDockerignore(p), p).toBe(false);
    }
  });
});

describe("the image's files", () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-image-"));
  afterAll(() => {
    const writable = (p: string): void => {
      if (statSync(p, { throwIfNoEntry: false })?.isDirectory()) {
        chmodSync(p, 0o755);
        for (const f of readdirSync(p)) writable(join(p, f));
      }
    };
    writable(dir);
    rmSync(dir, { recursive: true, force: true });
  });

  it("run the agent from a read-only tree holding only the copied files", () => {
    // Lay out /app as the final stage does (node_modules linked from the host: the dependency check above covers production-only).
    const app = join(dir, "app");
    mkdirSync(app);
    for (const c of copiedFiles()) {
      const target = join(app, c);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(ROOT, c), target);
    }
    symlinkSync(join(ROOT, "node_modules"), join(app, "node_modules"));
    const readOnly = (p: string): void => {
      if (statSync(p).isDirectory()) {
        for (const f of readdirSync(p)) readOnly(join(p, f));
        chmodSync(p, 0o555);
      } else chmodSync(p, 0o444);
    };
    for (const f of readdirSync(app)) if (f !== "node_modules") readOnly(join(app, f));
    chmodSync(app, 0o555);
    const r = spawnSync(process.execPath, ["src/agent/main.ts"], {
      cwd: app,
      env: {
        PATH: process.env["PATH"] ?? "",
        HOME: dir,
        NODE_ENV: "production",
        ARC_REAPER_URL: "https://arc-reaper.example.workers.dev",
        REAPER_NAMESPACES: "arc-runners",
      },
      encoding: "utf8",
      timeout: 30_000,
    });
    // Every module loaded (no ERR_MODULE_NOT_FOUND); only the missing token stops it.
    expect(r.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find/);
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/AGENT_TOKEN is required/);
    expect(r.stdout).not.toMatch(/ARC_REAPER_URL|REAPER_NAMESPACES/);
  });
});
