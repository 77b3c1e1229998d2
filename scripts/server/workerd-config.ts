// The in-cluster server's workerd config, made from wrangler.toml (the one
// source of bindings): the same entry's bundle, compatibility date and flags;
// each [vars] entry and every setting the Worker reads bound from the process
// environment (a Kubernetes ConfigMap and Secret, under the names used on
// Cloudflare); the ledger's Durable Object on a directory with a stable
// uniqueKey; FRONT_DOOR as the server's own limiter with wrangler.toml's limit
// and period. Cron Triggers have no counterpart: the ledger's alarm sweeps
// (src/durable/sweep-clock.ts). test/node/server/server-config.test.ts fails when this
// drifts from wrangler.toml.
//
// Plain Node (type stripping): erasable TypeScript only.

/** What of wrangler's config the server needs (a subset of unstable_readConfig's answer). */
export interface WranglerConfig {
  compatibility_date?: string;
  compatibility_flags: string[];
  vars: Record<string, unknown>;
  durable_objects: { bindings: { name: string; class_name: string }[] };
  ratelimits?: { name: string; simple: { limit: number; period: number } }[];
  migrations: { new_sqlite_classes?: string[] }[];
}

export interface ServerOptions {
  /** Every setting the Worker reads (src/config/settings.ts SETTING_NAMES). */
  settingNames: readonly string[];
  /** The cluster's CA bundle, as a path relative to the config file (embedded when workerd starts): trusted for the API server alone. */
  caFile?: string;
  /** A GitHub Enterprise Server's private CA, likewise: trusted, beside the browsers' CAs, for everything but the API server. */
  githubCaFile?: string;
}

/** The bundle's module, the limiter's module and the disk service, as the config names them. */
export const BUNDLE_FILE = "index.js";
export const LIMITER_FILE = "front-door-limiter.js";
export const OUTBOUND_FILE = "kube-token-outbound.js";
export const SERVICE_ACCOUNT_DIRECTORY = "service-account";
export const LEDGER_DIRECTORY = "ledger-storage";
export const SOCKET = "http";
/** The drain's socket (src/http/drain-entrypoint.ts): the pod's preStop calls GET /drain on it before SIGTERM. */
export const DRAIN_SOCKET = "drain";
/** Never change this: the ledger's files on the volume are found by it. */
export const LEDGER_UNIQUE_KEY = "arc-reaper-ledger";
/** The default directory and address; `workerd serve -d ledger-storage=… -s http=…` overrides them. */
const DEFAULT_DIRECTORY = "/var/lib/arc-reaper";
const SERVICE_ACCOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";
const DEFAULT_ADDRESS = "*:8080";
const DEFAULT_DRAIN_ADDRESS = "*:8081";
const LIMITER_MODULE = "arc-reaper:front-door";

const text = (s: string): string => JSON.stringify(s);
const list = (items: readonly string[], indent: string): string =>
  items.length === 0 ? "[]" : `[\n${items.map((i) => `${indent}  ${i},`).join("\n")}\n${indent}]`;

/** The names the server binds, by kind: what the drift test compares with wrangler.toml. */
export function serverBindings(
  config: WranglerConfig,
  opts: ServerOptions,
): { environment: string[]; durableObjects: string[]; limiters: string[]; text: string[] } {
  const environment = [...new Set([...Object.keys(config.vars), ...opts.settingNames])];
  return {
    environment,
    durableObjects: config.durable_objects.bindings.map((b) => b.name),
    limiters: (config.ratelimits ?? []).map((r) => r.name),
    text: ["ARC_REAPER_HOME"],
  };
}

export function workerdConfig(config: WranglerConfig, opts: ServerOptions): string {
  if (!config.compatibility_date) throw new Error("wrangler.toml has no compatibility_date: the server must run the same date");
  const sqlite = new Set(config.migrations.flatMap((m) => m.new_sqlite_classes ?? []));
  for (const b of config.durable_objects.bindings) {
    if (!sqlite.has(b.class_name)) throw new Error(`Durable Object class ${b.class_name} is not a SQLite class in wrangler.toml's migrations`);
  }
  const names = serverBindings(config, opts);
  const bindings = [
    `(name = "ARC_REAPER_HOME", text = "cluster")`,
    ...config.durable_objects.bindings.map((b) => `(name = ${text(b.name)}, durableObjectNamespace = ${text(b.class_name)})`),
    ...(config.ratelimits ?? []).map(
      (r) =>
        `(name = ${text(r.name)}, wrapped = (moduleName = ${text(LIMITER_MODULE)}, innerBindings = [(name = "limit", json = ${text(String(r.simple.limit))}), (name = "period", json = ${text(String(r.simple.period))})]))`,
    ),
    ...names.environment.map((n) => `(name = ${text(n)}, fromEnvironment = ${text(n)})`),
  ];
  const namespaces = config.durable_objects.bindings.map(
    (b, i) =>
      `(className = ${text(b.class_name)}, uniqueKey = ${text(i === 0 ? LEDGER_UNIQUE_KEY : `${LEDGER_UNIQUE_KEY}-${b.class_name}`)}, enableSql = true)`,
  );
  // Two ways out, each with its own trust: the API server under the cluster's CA alone (the browsers' CAs only
  // when no CA was given, for an API server with a public certificate), and everything else (GitHub) under the
  // browsers' CAs and a GitHub Enterprise Server's own CA, never the cluster's: a certificate the cluster's CA
  // signed for api.github.com is not believed.
  const kubeTls = opts.caFile ? `trustedCertificates = [embed ${text(opts.caFile)}]` : "trustBrowserCas = true";
  const publicTls = [`trustBrowserCas = true`, ...(opts.githubCaFile ? [`trustedCertificates = [embed ${text(opts.githubCaFile)}]`] : [])].join(", ");
  return `# Made by scripts/server/build.ts from wrangler.toml: do not edit (npm run serve remakes it).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "arc-reaper", worker = .arcReaper),
    (name = ${text(LEDGER_DIRECTORY)}, disk = (path = ${text(DEFAULT_DIRECTORY)}, writable = true)),
    (name = ${text(SERVICE_ACCOUNT_DIRECTORY)}, disk = (path = ${text(SERVICE_ACCOUNT_PATH)})),
    # Every request the Worker sends: to the API server (with the projected token when KUBE_TOKEN says so) or elsewhere.
    (name = "outbound", worker = .outbound),
    # The API server alone, under the cluster's CA; "private" reaches its address.
    (name = "kube-api", network = (allow = ["public", "private"], tlsOptions = (${kubeTls}))),
    # GitHub's API (a GitHub Enterprise Server may be on a private address), under the browsers' CAs.
    (name = "internet", network = (allow = ["public", "private"], tlsOptions = (${publicTls}))),
  ],
  sockets = [
    (name = ${text(SOCKET)}, address = ${text(DEFAULT_ADDRESS)}, http = (), service = "arc-reaper"),
    # GET /drain, for the pod's preStop alone: agents told to reconnect before SIGTERM (workerd's drain has no timeout).
    (name = ${text(DRAIN_SOCKET)}, address = ${text(DEFAULT_DRAIN_ADDRESS)}, http = (), service = (name = "arc-reaper", entrypoint = "Drain")),
  ],
  extensions = [(modules = [(name = ${text(LIMITER_MODULE)}, esModule = embed ${text(LIMITER_FILE)}, internal = true)])],
);

const arcReaper :Workerd.Worker = (
  modules = [(name = ${text(BUNDLE_FILE)}, esModule = embed ${text(BUNDLE_FILE)})],
  compatibilityDate = ${text(config.compatibility_date)},
  compatibilityFlags = ${list(config.compatibility_flags.map(text), "  ")},
  bindings = ${list(bindings, "  ")},
  # One replica, one directory: a second server would be a second ledger.
  durableObjectNamespaces = ${list(namespaces, "  ")},
  durableObjectStorage = (localDisk = ${text(LEDGER_DIRECTORY)}),
  globalOutbound = "outbound",
);

const outbound :Workerd.Worker = (
  modules = [(name = ${text(OUTBOUND_FILE)}, esModule = embed ${text(OUTBOUND_FILE)})],
  compatibilityDate = ${text(config.compatibility_date)},
  bindings = [
    (name = "SERVICE_ACCOUNT", service = ${text(SERVICE_ACCOUNT_DIRECTORY)}),
    (name = "KUBE_NET", service = "kube-api"),
    (name = "KUBE_API_URL", fromEnvironment = "KUBE_API_URL"),
    (name = "KUBE_TOKEN", fromEnvironment = "KUBE_TOKEN"),
  ],
  globalOutbound = "internet",
);
`;
}
