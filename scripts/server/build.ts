// `node scripts/server/build.ts [--outdir DIR] [--kube-ca PATH] [--github-ca PATH]`: the in-cluster
// server's files in one directory (dist/server unless told): the Worker's
// bundle as `wrangler deploy --dry-run` makes it (wrangler's bundler, offline,
// no account), the front door's limiter and the way out (src/server) with
// their types stripped, and the
// workerd config made from wrangler.toml. --kube-ca names the cluster's CA
// file as the running server will see it (the image passes the
// ServiceAccount's ca.crt), trusted for the API server alone; --github-ca a
// GitHub Enterprise Server's private CA, trusted beside the browsers' CAs for
// GitHub (never for the API server). Both are embedded when workerd starts.
//
// Plain Node (type stripping): erasable TypeScript only.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { unstable_readConfig } from "wrangler";
import { SETTING_NAMES } from "../../src/config/settings.ts";
import { LIMITER_FILE, OUTBOUND_FILE, workerdConfig, type WranglerConfig } from "./workerd-config.ts";

export const ROOT = resolve(import.meta.dirname, "../..");
export const CONFIG_FILE = "config.capnp";

/** The environment wrangler builds in: no account, no metrics, nothing from the caller's CLOUDFLARE_* settings. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(CLOUDFLARE_|CF_)/.test(k)) env[k] = v;
  return { ...env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true", NO_COLOR: "1" };
}

/** wrangler.toml as wrangler reads it (validated, defaults filled in). */
export function readWranglerConfig(): WranglerConfig {
  return unstable_readConfig({ config: join(ROOT, "wrangler.toml") }) as unknown as WranglerConfig;
}

export function buildServer(outdir: string, opts: { kubeCa?: string; githubCa?: string } = {}): string {
  const out = resolve(outdir);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  execFileSync(process.execPath, [join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", out], {
    cwd: ROOT,
    env: offlineEnv(),
    stdio: ["ignore", "ignore", "inherit"],
  });
  rmSync(join(out, "README.md"), { force: true });
  rmSync(join(out, "index.js.map"), { force: true });
  const embedded: [string, string][] = [
    ["front-door-limiter.ts", LIMITER_FILE],
    ["kube-token-outbound.ts", OUTBOUND_FILE],
  ];
  for (const [from, to] of embedded) writeFileSync(join(out, to), stripTypeScriptTypes(readFileSync(join(ROOT, "src/server", from), "utf8")));
  const caFile = opts.kubeCa === undefined ? undefined : relative(out, resolve(opts.kubeCa));
  const githubCaFile = opts.githubCa === undefined ? undefined : relative(out, resolve(opts.githubCa));
  writeFileSync(
    join(out, CONFIG_FILE),
    workerdConfig(readWranglerConfig(), { settingNames: SETTING_NAMES, ...(caFile ? { caFile } : {}), ...(githubCaFile ? { githubCaFile } : {}) }),
  );
  return out;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { outdir: { type: "string", default: join(ROOT, "dist/server") }, "kube-ca": { type: "string" }, "github-ca": { type: "string" } },
  });
  const out = buildServer(values.outdir, {
    ...(values["kube-ca"] === undefined ? {} : { kubeCa: values["kube-ca"] }),
    ...(values["github-ca"] === undefined ? {} : { githubCa: values["github-ca"] }),
  });
  process.stdout.write(`built the in-cluster server in ${out}\n`);
}
