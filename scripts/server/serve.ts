// `npm run serve`: the in-cluster server on this machine, as the image runs it:
// the bundle and config built (scripts/server/build.ts; --no-build to skip),
// then the pinned workerd serving them. Settings come from the environment
// under the names used on Cloudflare; wrangler.toml's [vars] fill in what is
// unset (in Kubernetes the ConfigMap carries them). The ledger lives in
// ARC_REAPER_DATA (.server-state/ unless set); PORT (8787) on 127.0.0.1, or
// ARC_REAPER_LISTEN (e.g. 0.0.0.0:8080).
//   set -a; . ./.dev.vars; set +a; npm run serve
//
// Plain Node (type stripping): erasable TypeScript only.
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildServer, CONFIG_FILE, readWranglerConfig, ROOT } from "./build.ts";
import { LEDGER_DIRECTORY, SERVICE_ACCOUNT_DIRECTORY, SOCKET } from "./workerd-config.ts";

export const WORKERD = join(ROOT, "node_modules/.bin/workerd");

/** wrangler.toml's [vars] under the caller's environment: what is set wins. */
export function serverEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const vars = Object.fromEntries(Object.entries(readWranglerConfig().vars).map(([k, v]) => [k, String(v)]));
  return { ...vars, ...env };
}

/** workerd's arguments: the config, the ledger's directory and the listening address. */
/** workerd's arguments: the config, the ledger's directory, the ServiceAccount's (its token file) and the listening address. */
export function workerdArgs(outdir: string, dataDir: string, listen: string, serviceAccountDir: string): string[] {
  return [
    "serve",
    join(outdir, CONFIG_FILE),
    "-d",
    `${LEDGER_DIRECTORY}=${dataDir}`,
    "-d",
    `${SERVICE_ACCOUNT_DIRECTORY}=${serviceAccountDir}`,
    "-s",
    `${SOCKET}=${listen}`,
  ];
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { "no-build": { type: "boolean", default: false } } });
  const outdir = join(ROOT, "dist/server");
  if (!values["no-build"]) buildServer(outdir);
  const dataDir = resolve(process.env.ARC_REAPER_DATA ?? join(ROOT, ".server-state"));
  mkdirSync(dataDir, { recursive: true });
  // Off the cluster there is no ServiceAccount: KUBE_TOKEN=service-account-token-file reads ARC_REAPER_SERVICE_ACCOUNT/token.
  const serviceAccountDir = resolve(process.env.ARC_REAPER_SERVICE_ACCOUNT ?? join(ROOT, ".server-service-account"));
  mkdirSync(serviceAccountDir, { recursive: true });
  const listen = process.env.ARC_REAPER_LISTEN ?? `127.0.0.1:${process.env.PORT ?? "8787"}`;
  process.stdout.write(`arc-reaper on http://${listen} (ledger in ${dataDir})\n`);
  const child = spawn(WORKERD, workerdArgs(outdir, dataDir, listen, serviceAccountDir), { stdio: "inherit", env: serverEnv(process.env) });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
