// `npm run serve`: the in-cluster server on this machine, as the image runs it:
// the bundle and config built (scripts/server/build.ts; --no-build to skip),
// then the pinned workerd serving them. Settings come from the environment
// under the names used on Cloudflare; wrangler.toml's [vars] fill in what is
// unset (in Kubernetes the ConfigMap carries them). Missing or invalid
// settings are listed at start, by name, and it exits 2 before workerd runs.
// The ledger lives in ARC_REAPER_DATA (.server-state/ unless set); it listens
// on 127.0.0.1:PORT (8080, the pod's port; not 8787, where `npm start`'s
// wrangler dev listens), or ARC_REAPER_LISTEN (e.g. 0.0.0.0:8080).
//   set -a; . ./.dev.vars; set +a; npm run serve
//
// Plain Node (type stripping): erasable TypeScript only.
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readSettings } from "../../src/config/settings.ts";
import { buildServer, CONFIG_FILE, readWranglerConfig, ROOT } from "./build.ts";
import { DRAIN_SOCKET, LEDGER_DIRECTORY, SERVICE_ACCOUNT_DIRECTORY, SOCKET } from "./workerd-config.ts";

export const WORKERD = join(ROOT, "node_modules/.bin/workerd");

/** wrangler.toml's [vars] under the caller's environment: what is set wins. */
export function serverEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const vars = Object.fromEntries(Object.entries(readWranglerConfig().vars).map(([k, v]) => [k, String(v)]));
  return { ...vars, ...env };
}

/** The drain's address beside `listen`: the next port (8081 beside 8080), on 127.0.0.1 alone off the cluster (in the pod, the config's *:8081, for the kubelet). */
export function drainAddress(listen: string): string {
  return `127.0.0.1:${Number(listen.slice(listen.lastIndexOf(":") + 1)) + 1}`;
}

/** workerd's arguments: the config, the ledger's directory, the ServiceAccount's (its token file), the listening address and the drain's beside it. */
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
    "-s",
    `${DRAIN_SOCKET}=${drainAddress(listen)}`,
  ];
}

const HELP = `npm run serve [-- --no-build]
The in-cluster server on this machine, as the image runs it: the Worker's bundle (rebuilt at each
start unless --no-build) on the pinned workerd. Its settings come from the environment under the
names docs/deploy.md's tables give; wrangler.toml's [vars] fill in what is unset.

  --no-build                  serve the bundle built last time (dist/server)
  --help, -h                  this text

  PORT                        the port on 127.0.0.1 (default 8080; npm start's wrangler dev has 8787)
  ARC_REAPER_LISTEN           the address instead, e.g. 0.0.0.0:8080
                              (GET /drain listens on 127.0.0.1 at the next port: a signal calls it, then
                              stops workerd, killing it 20 s later if it has not stopped)
  ARC_REAPER_DATA             the ledger's directory (default .server-state/); keep it to keep the ledger
  ARC_REAPER_SERVICE_ACCOUNT  with KUBE_TOKEN=service-account-token-file: the directory holding the
                              token file "token" (default .server-service-account/); or set KUBE_TOKEN itself
A fresh ledger's sweeps start with its first request (GET /healthz wakes it).
`;

/** The settings the Worker would refuse, by name: empty when it can start. */
export function settingsProblems(env: NodeJS.ProcessEnv): string[] {
  const result = readSettings({ ...serverEnv(env), ARC_REAPER_HOME: "cluster" });
  return result.ok ? [] : result.errors;
}

/** How long `npm run serve` lets workerd drain after a signal before it kills it (the pod's grace period is 30 s). */
const STOP_BOUND_MS = 20_000;

async function stop(child: ReturnType<typeof spawn>, listen: string, signal: NodeJS.Signals): Promise<void> {
  await fetch(`http://${drainAddress(listen)}/drain`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
  child.kill(signal);
  setTimeout(() => child.kill("SIGKILL"), STOP_BOUND_MS).unref();
}

if (import.meta.main) {
  let values: { "no-build"?: boolean; help?: boolean };
  try {
    values = parseArgs({ options: { "no-build": { type: "boolean", default: false }, help: { type: "boolean", short: "h", default: false } } }).values;
  } catch (e) {
    process.stderr.write(`serve: ${e instanceof Error ? e.message : String(e)}\n${HELP}`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const problems = settingsProblems(process.env);
  if (problems.length > 0) {
    process.stderr.write(
      `serve: arc-reaper cannot start; these settings are missing or invalid (set them in the environment, e.g. set -a; . ./.dev.vars; set +a):\n${problems.map((p) => `  - ${p}`).join("\n")}\n`,
    );
    process.exit(2);
  }
  const outdir = join(ROOT, "dist/server");
  if (!values["no-build"]) buildServer(outdir);
  const dataDir = resolve(process.env.ARC_REAPER_DATA ?? join(ROOT, ".server-state"));
  mkdirSync(dataDir, { recursive: true });
  // Off the cluster there is no ServiceAccount: KUBE_TOKEN=service-account-token-file reads ARC_REAPER_SERVICE_ACCOUNT/token.
  const serviceAccountDir = resolve(process.env.ARC_REAPER_SERVICE_ACCOUNT ?? join(ROOT, ".server-service-account"));
  mkdirSync(serviceAccountDir, { recursive: true });
  const listen = process.env.ARC_REAPER_LISTEN ?? `127.0.0.1:${process.env.PORT ?? "8080"}`;
  process.stdout.write(`arc-reaper on http://${listen} (ledger in ${dataDir})\n`);
  const child = spawn(WORKERD, workerdArgs(outdir, dataDir, listen, serviceAccountDir), { stdio: "inherit", env: serverEnv(process.env) });
  // As the pod's preStop does: agents told to reconnect, then workerd's own drain, bounded (it has no bound of its own).
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void stop(child, listen, signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
