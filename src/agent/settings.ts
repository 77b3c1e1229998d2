// The agent's settings, from the environment. Every bad setting is named; the
// token's value is never echoed (only its length).

export interface AgentSettings {
  /** ARC_REAPER_URL as given (https, or http for 127.0.0.1/localhost only). */
  reaperUrl: string;
  /** Where the agent dials: ws(s)://…/agent. */
  agentUrl: string;
  /** AGENT_TOKEN: sent as `Authorization: Bearer …`, never logged (surrounding whitespace dropped, as the Worker does). */
  token: string;
  /** AGENT_CLUSTER: the cluster this agent serves (a DNS label, "default" when unset); its token is made for it. */
  cluster: string;
  /** REAPER_NAMESPACES: the namespaces the agent watches and may delete in. */
  namespaces: string[];
  /** AGENT_DRY_RUN: check orders but never delete. */
  dryRun: boolean;
  /** AGENT_HEALTH_PORT: where /livez and /readyz answer the kubelet (0: any free port). */
  healthPort: number;
}

export type SettingsResult = { ok: true; settings: AgentSettings } | { ok: false; problems: string[] };

export const MIN_TOKEN_LENGTH = 32;
/** The placeholder in infra/agent's Secret: an agent started with it refuses to run. */
export const TOKEN_PLACEHOLDER_PREFIX = "REPLACE_ME";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

function readUrl(raw: string | undefined, problems: string[]): { reaperUrl: string; agentUrl: string } | undefined {
  if (raw === undefined || raw.trim() === "") {
    problems.push("ARC_REAPER_URL is required (the Worker's https:// address)");
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    // Never echoed: a value that does not parse may still hold credentials.
    problems.push(`ARC_REAPER_URL is not a URL (${raw.trim().length} characters; the value is not shown)`);
    return undefined;
  }
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    problems.push(`ARC_REAPER_URL must use https:// (http:// only for 127.0.0.1 or localhost), got ${JSON.stringify(url.protocol)}`);
    return undefined;
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    problems.push("ARC_REAPER_URL must not carry credentials, a query or a fragment");
    return undefined;
  }
  const base = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  return { reaperUrl: base, agentUrl: `${base.replace(/^http/, "ws")}/agent` };
}

/** The cluster a single-cluster install has: its token may be the Worker's AGENT_TOKEN itself. */
export const DEFAULT_CLUSTER = "default";

// Surrounding whitespace (a Secret written with `echo`) is dropped on both sides, as the Worker trims its AGENT_TOKEN.
function readToken(raw: string | undefined, problems: string[]): string {
  const token = (raw ?? "").trim();
  if (token === "") problems.push("AGENT_TOKEN is required (the same secret as the Worker's AGENT_TOKEN)");
  else if (token.startsWith(TOKEN_PLACEHOLDER_PREFIX)) problems.push("AGENT_TOKEN is still the placeholder from infra/agent: set the real secret");
  else if (/\s/.test(token)) problems.push("AGENT_TOKEN must not contain whitespace");
  else if (token.length < MIN_TOKEN_LENGTH) problems.push(`AGENT_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters, got ${token.length}`);
  return token;
}

function readCluster(raw: string | undefined, problems: string[]): string {
  const cluster = (raw ?? "").trim() || DEFAULT_CLUSTER;
  if (!DNS_LABEL.test(cluster)) problems.push(`AGENT_CLUSTER must be a DNS label (lowercase letters, digits and dashes, at most 63), got ${JSON.stringify(raw)}`);
  return cluster;
}

function readNamespaces(raw: string | undefined, problems: string[]): string[] {
  const namespaces = (raw ?? "").split(",").map((n) => n.trim()).filter((n) => n !== "");
  if (namespaces.length === 0) problems.push("REAPER_NAMESPACES is required: a comma-separated list of runner namespaces");
  for (const ns of namespaces) {
    if (!DNS_LABEL.test(ns)) problems.push(`REAPER_NAMESPACES: ${JSON.stringify(ns)} is not a valid namespace name`);
  }
  const dup = namespaces.find((ns, i) => namespaces.indexOf(ns) !== i);
  if (dup !== undefined) problems.push(`REAPER_NAMESPACES names ${JSON.stringify(dup)} twice`);
  return namespaces;
}

function readDryRun(raw: string | undefined, problems: string[]): boolean {
  const text = (raw ?? "false").trim().toLowerCase();
  if (text !== "true" && text !== "false") problems.push(`AGENT_DRY_RUN must be true or false, got ${JSON.stringify(raw)}`);
  return text === "true";
}

export const DEFAULT_HEALTH_PORT = 8080;

function readHealthPort(raw: string | undefined, problems: string[]): number {
  const text = (raw ?? "").trim();
  if (text === "") return DEFAULT_HEALTH_PORT;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) problems.push(`AGENT_HEALTH_PORT must be a port number from 0 to 65535, got ${JSON.stringify(raw)}`);
  return port;
}

export function readSettings(env: Record<string, string | undefined>): SettingsResult {
  const problems: string[] = [];
  const url = readUrl(env["ARC_REAPER_URL"], problems);
  const token = readToken(env["AGENT_TOKEN"], problems);
  const cluster = readCluster(env["AGENT_CLUSTER"], problems);
  const namespaces = readNamespaces(env["REAPER_NAMESPACES"], problems);
  const dryRun = readDryRun(env["AGENT_DRY_RUN"], problems);
  const healthPort = readHealthPort(env["AGENT_HEALTH_PORT"], problems);
  if (problems.length > 0 || url === undefined) return { ok: false, problems };
  return { ok: true, settings: { ...url, token, cluster, namespaces, dryRun, healthPort } };
}
