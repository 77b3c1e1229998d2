// Reads and validates every setting at once, so /healthz can name all problems
// together and nothing runs on a half-valid configuration. A message names the
// setting and what is wrong, never its value (URLs excepted, without any
// credentials or query in them).
import { DNS_LABEL } from "../model/dns-label.ts";
import { readSlotSettings, type SlotSettings } from "./slot-settings.ts";

/** How arc-reaper reaches the cluster: the API server directly, or an in-cluster agent that dials out. */
export type ClusterSettings =
  | {
      mode: "direct";
      /** KUBE_API_URL: https (http only to a loopback host), no trailing slash. */
      apiUrl: string;
      /** KUBE_TOKEN, sent as bearer. */
      token: string;
      /** Optional Cloudflare Access service token in front of the API server. */
      access?: { clientId: string; clientSecret: string };
      /** KUBE_CLUSTER_NAME: the one cluster's name in rows, /admin and /metrics ("default"). */
      name: string;
    }
  | {
      mode: "agent";
      /** AGENT_TOKEN: admits the cluster "default"; keys the HMAC that makes every other cluster's token. */
      agentToken: string;
      /** AGENT_CLUSTERS: the clusters whose agents should be connected (empty: not said). */
      expectedClusters: string[];
    };

export interface Settings extends SlotSettings {
  webhookSecret: string;
  appId: string;
  privateKey: string; // PEM, newlines restored; PKCS#1 or PKCS#8
  githubApiUrl: string;
  /** CLUSTER_MODE and what it needs. */
  cluster: ClusterSettings;
  namespaces: string[];
  graceSeconds: number;
  maxJobSeconds: number;
  dryRun: boolean;
  maxDeletionsPerSweep: number;
  maxGithubCallsPerSweep: number;
  redeliveryLookbackSeconds: number;
  /** How often a sweep lists the App's deliveries for redelivery. */
  deliveriesEverySeconds: number;
  /** A job in progress this long with no completion is re-read from GitHub, once per interval. */
  recheckSeconds: number;
  /** Closed runners stay listed this many days, then are pruned. */
  historyDays: number;
  /** A runner we deleted that is still there this long after is "stuck" (shown, counted, never deleted again). */
  stuckSeconds: number;
  adminToken: string;
  /** Bearer for /metrics; ADMIN_TOKEN when unset. */
  metricsToken: string;
  /** The ledger's Durable Object name: one ledger per name. */
  ledgerName: string;
}

export type SettingsResult = { ok: true; settings: Settings } | { ok: false; errors: string[] };

type Source = Readonly<Record<string, unknown>>;

const MIN_ADMIN_TOKEN_LENGTH = 16;
/** RFC 6750's b64token: what an Authorization: Bearer header can carry (hono/bearer-auth refuses anything else). */
const BEARER_TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;
const BEARER_TOKEN_RULE = "may hold only letters, digits and - . _ ~ + / (then = padding), as a bearer token does (RFC 6750); openssl rand -hex 32 makes one";
const MIN_AGENT_TOKEN_LENGTH = 32;
/** The hosts http:// may go to: a token sent in clear never leaves the machine. */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** A URL as an error message may show it: scheme, host and path, never user info, query or fragment. */
function shownUrl(u: URL): string {
  return JSON.stringify(`${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`);
}

export function readSettings(env: Source): SettingsResult {
  const errors: string[] = [];
  const text = (name: string, fallback?: string): string => {
    const raw = env[name];
    if (raw === undefined || raw === null || raw === "") {
      if (fallback !== undefined) return fallback;
      errors.push(`${name} is missing`);
      return "";
    }
    if (typeof raw !== "string") {
      errors.push(`${name} must be a string, got ${typeof raw}`);
      return "";
    }
    return raw.trim();
  };
  const count = (name: string, fallback: number, min = 0): number => {
    const raw = text(name, String(fallback));
    if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
      errors.push(`${name} must be a whole number >= ${min}`);
      return fallback;
    }
    return Number(raw);
  };
  // https only; http:// to a loopback host (the stand-ins, a local tunnel) and nowhere else.
  const url = (name: string, fallback?: string): string => {
    const raw = text(name, fallback);
    if (raw === "") return "";
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      errors.push(`${name} must be an https URL`);
      return "";
    }
    if (parsed.protocol === "http:" && !LOOPBACK_HOSTS.has(parsed.hostname)) {
      errors.push(`${name} must be an https URL (http only to 127.0.0.1, localhost or [::1]), got ${shownUrl(parsed)}`);
      return "";
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
      errors.push(`${name} must be an https URL, got ${shownUrl(parsed)}`);
      return "";
    }
    return raw.replace(/\/+$/, "");
  };

  // CLUSTER_MODE=direct needs KUBE_API_URL and KUBE_TOKEN (and optionally the Access
  // pair); agent needs AGENT_TOKEN. The other mode's settings are not read.
  function clusterSettings(): ClusterSettings {
    const mode = text("CLUSTER_MODE", "direct").toLowerCase();
    if (mode === "agent") {
      const agentToken = text("AGENT_TOKEN");
      if (agentToken !== "" && agentToken.length < MIN_AGENT_TOKEN_LENGTH) {
        errors.push(`AGENT_TOKEN must be at least ${MIN_AGENT_TOKEN_LENGTH} characters`);
      }
      return { mode: "agent", agentToken, expectedClusters: clusterNames() };
    }
    if (mode !== "direct") errors.push("CLUSTER_MODE must be direct or agent");
    const apiUrl = url("KUBE_API_URL");
    const token = text("KUBE_TOKEN");
    const clientId = text("KUBE_ACCESS_CLIENT_ID", "");
    const clientSecret = text("KUBE_ACCESS_CLIENT_SECRET", "");
    if ((clientId === "") !== (clientSecret === "")) {
      errors.push("KUBE_ACCESS_CLIENT_ID and KUBE_ACCESS_CLIENT_SECRET must be set together");
    }
    const name = text("KUBE_CLUSTER_NAME", "default");
    if (!DNS_LABEL.test(name)) errors.push("KUBE_CLUSTER_NAME must be a DNS label (lowercase letters, digits and dashes, at most 63)");
    return { mode: "direct", apiUrl, token, ...(clientId ? { access: { clientId, clientSecret } } : {}), name };
  }

  // AGENT_CLUSTERS: optional; /healthz/deep and the alert name the ones not connected.
  function clusterNames(): string[] {
    const names = text("AGENT_CLUSTERS", "").split(",").map((n) => n.trim()).filter((n) => n !== "");
    names.forEach((n, i) => {
      if (!DNS_LABEL.test(n)) errors.push(`AGENT_CLUSTERS: entry ${i + 1} is not a valid cluster name (lowercase letters, digits and dashes, at most 63)`);
    });
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined && DNS_LABEL.test(dup)) errors.push(`AGENT_CLUSTERS names ${dup} twice`);
    return names;
  }

  const webhookSecret = text("GITHUB_WEBHOOK_SECRET");
  const appId = text("GITHUB_APP_ID");
  if (appId !== "" && !/^[1-9]\d*$/.test(appId)) {
    errors.push("GITHUB_APP_ID must be the App's numeric id");
  }
  const privateKey = text("GITHUB_APP_PRIVATE_KEY").replace(/\\n/g, "\n");
  if (
    privateKey !== "" &&
    !/^-----BEGIN (RSA )?PRIVATE KEY-----\n[\s\S]+\n-----END (RSA )?PRIVATE KEY-----\s*$/.test(privateKey)
  ) {
    // Never echo the value: it is a secret.
    errors.push("GITHUB_APP_PRIVATE_KEY must be a PEM RSA private key (PKCS#1 or PKCS#8)");
  }
  const githubApiUrl = url("GITHUB_API_URL", "https://api.github.com");
  const cluster = clusterSettings();
  const namespaces = text("REAPER_NAMESPACES")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  if (env.REAPER_NAMESPACES && namespaces.length === 0) errors.push("REAPER_NAMESPACES names no namespace");
  namespaces.forEach((ns, i) => {
    if (!DNS_LABEL.test(ns)) errors.push(`REAPER_NAMESPACES: entry ${i + 1} is not a valid namespace name (lowercase letters, digits and dashes, at most 63)`);
  });
  const graceSeconds = count("REAPER_GRACE_SECONDS", 300);
  const maxJobSeconds = count("REAPER_MAX_JOB_SECONDS", 432_000, 1);
  const dryRunText = text("REAPER_DRY_RUN", "false").toLowerCase();
  if (!["true", "false", "1", "0"].includes(dryRunText)) {
    errors.push("REAPER_DRY_RUN must be true or false");
  }
  const dryRun = dryRunText === "true" || dryRunText === "1";
  const maxDeletionsPerSweep = count("REAPER_MAX_DELETIONS_PER_SWEEP", 50);
  const maxGithubCallsPerSweep = count("REAPER_MAX_GITHUB_CALLS_PER_SWEEP", 100);
  const redeliveryLookbackSeconds = count("REAPER_REDELIVERY_LOOKBACK_SECONDS", 3600);
  if (redeliveryLookbackSeconds > 3 * 86_400) {
    errors.push("REAPER_REDELIVERY_LOOKBACK_SECONDS must be at most 259200 (GitHub keeps deliveries for 3 days)");
  }
  const deliveriesEverySeconds = count("REAPER_DELIVERIES_EVERY_SECONDS", 300, 1);
  const recheckSeconds = count("REAPER_RECHECK_SECONDS", 3600, 60);
  const historyDays = count("REAPER_HISTORY_DAYS", 7, 1);
  const stuckSeconds = count("REAPER_STUCK_SECONDS", 900, 1);
  const ledgerName = text("LEDGER_NAME", "ledger");
  if (!/^[a-z0-9][-a-z0-9]{0,62}$/.test(ledgerName)) errors.push("LEDGER_NAME must be 1 to 63 lowercase letters, digits and dashes");
  const adminToken = text("ADMIN_TOKEN");
  if (adminToken !== "" && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    errors.push(`ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  }
  if (adminToken !== "" && !BEARER_TOKEN.test(adminToken)) errors.push(`ADMIN_TOKEN ${BEARER_TOKEN_RULE}`);

  const slots = readSlotSettings(env, errors);
  const metricsToken = text("METRICS_TOKEN", "");
  if (metricsToken !== "" && metricsToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    errors.push(`METRICS_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  }
  if (metricsToken !== "" && !BEARER_TOKEN.test(metricsToken)) errors.push(`METRICS_TOKEN ${BEARER_TOKEN_RULE}`);

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: {
      webhookSecret,
      appId,
      privateKey,
      githubApiUrl,
      cluster,
      namespaces,
      graceSeconds,
      maxJobSeconds,
      dryRun,
      maxDeletionsPerSweep,
      maxGithubCallsPerSweep,
      redeliveryLookbackSeconds,
      deliveriesEverySeconds,
      recheckSeconds,
      historyDays,
      stuckSeconds,
      adminToken,
      metricsToken: metricsToken || adminToken,
      ledgerName,
      ...slots,
    },
  };
}
