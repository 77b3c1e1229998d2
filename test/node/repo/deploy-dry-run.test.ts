// `wrangler deploy --dry-run` builds the Worker exactly as `npm run deploy`
// would, offline and without credentials, and the bundle must fit Cloudflare's
// size limits.
//
// Limits, as documented (developers.cloudflare.com/workers/platform/limits):
// until 2026-09-04 a Worker had to be at most 3 MiB after gzip on the Workers
// Free plan (10 MiB on Paid); since then the compressed limits are gone and a
// Worker may be up to 64 MiB uncompressed on every plan (cloudflare-docs #33241,
// workers-sdk #14001). We hold the bundle to both: the 64 MiB limit in force
// and the former 3 MiB free-plan gzip limit as our own budget, which keeps the
// Worker deployable on accounts and tools that still apply it and keeps its
// start-up (1 s limit) short.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");
const MiB = 1024 * 1024;
const GZIP_BUDGET_BYTES = 3 * MiB;
const UNCOMPRESSED_LIMIT_BYTES = 64 * MiB;

const run = promisify(execFile);

// Only what wrangler needs to run, and nothing that could hold an account's
// credentials: no CLOUDFLARE_API_TOKEN, CLOUDFLARE_ACCOUNT_ID, CF_*, HOME config.
function offlineEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(CLOUDFLARE_|CF_|WRANGLER_)/.test(key)) continue;
    env[key] = value;
  }
  return {
    ...env,
    // The node running this test (Node 24), ahead of any older node on PATH.
    PATH: [dirname(process.execPath), join(ROOT, "node_modules/.bin"), process.env["PATH"] ?? ""].join(delimiter),
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_LOG_PATH: join(home, "logs"),
    CI: "true",
    NO_COLOR: "1",
  };
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(2)} KiB`;
}

describe("wrangler deploy --dry-run", () => {
  const work = mkdtempSync(join(tmpdir(), "arc-reaper-dry-run-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("builds the Worker offline, within the size limits", async () => {
    const outdir = join(work, "out");
    let stdout = "";
    let stderr = "";
    try {
      ({ stdout, stderr } = await run(WRANGLER, ["deploy", "--dry-run", "--outdir", outdir], {
        cwd: ROOT,
        env: offlineEnv(work),
        timeout: 110_000,
        maxBuffer: 16 * MiB,
      }));
    } catch (err) {
      const detail = err instanceof Error && "stderr" in err ? `${String(err.stderr)}\n${String("stdout" in err ? err.stdout : "")}` : "";
      throw new Error(`wrangler deploy --dry-run failed:\n${detail}`, { cause: err });
    }
    expect(stdout).toContain("--dry-run: exiting now.");

    // The modules wrangler would upload: everything in outdir but source maps and its README.
    const modules = readdirSync(outdir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && !e.name.endsWith(".map") && e.name !== "README.md")
      .map((e) => join(e.parentPath, e.name));
    expect(modules.length).toBeGreaterThan(0);
    let size = 0;
    let gzipSize = 0;
    for (const file of modules) {
      const bytes = readFileSync(file);
      size += bytes.byteLength;
      gzipSize += gzipSync(bytes).byteLength;
    }
    const reported = /Total Upload: ([\d.]+ KiB) \/ gzip: ([\d.]+ KiB)/.exec(stdout);
    console.log(
      `Worker bundle: ${modules.length} module(s), ${kib(size)} (${size} bytes), gzip ${kib(gzipSize)} (${gzipSize} bytes)` +
        (reported ? `; wrangler reports ${reported[1]} / gzip ${reported[2]}` : "") +
        `; limits: ${kib(UNCOMPRESSED_LIMIT_BYTES)} uncompressed, budget ${kib(GZIP_BUDGET_BYTES)} gzip`,
    );
    if (stderr.trim() !== "") console.log(`wrangler stderr:\n${stderr}`);
    expect(size).toBeLessThan(UNCOMPRESSED_LIMIT_BYTES);
    expect(gzipSize).toBeLessThan(GZIP_BUDGET_BYTES);
  });
});
