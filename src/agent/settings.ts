// The agent's settings, from the environment. Every bad setting is named; the
// token's value is never echoed (only its length).

export interface AgentSettings {
  /** ARC_REAPER_URL as given (https, or http for 127.0.0.1/localhost only). */
  reaperUrl: string;
  /** Where the agent dials: ws(s)://…/agent. */
  agentUrl: string;
  /** AGENT_TOKEN: sent as `Authorization: Bearer …`, never logged. */
  token: string;
  /** REAPER_NAMESPACES: the namespaces the agent watches and may delete in. */
  namespaces: string[];
  /** AGENT_DRY_RUN: check orders but never delete. */
  dryRun: boolean;
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

function readToken(raw: string | undefined, problems: string[]): string {
  const token = raw ?? "";
  if (token === "") problems.push("AGENT_TOKEN is required (the same secret as the Worker's AGENT_TOKEN)");
  else if (token.startsWith(TOKEN_PLACEHOLDER_PREFIX)) problems.push("AGENT_TOKEN is still the placeholder from infra/agent: set the real secret");
  else if (/\s/.test(token)) problems.push("AGENT_TOKEN must not contain whitespace");
  else if (token.length < MIN_TOKEN_LENGTH) problems.push(`AGENT_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters, got ${token.length}`);
  return token;
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

export function readSettings(env: Record<string, string | undefined>): SettingsResult {
  const problems: string[] = [];
  const url = readUrl(env["ARC_REAPER_URL"], problems);
  const token = readToken(env["AGENT_TOKEN"], problems);
  const namespaces = readNamespaces(env["REAPER_NAMESPACES"], problems);
  const dryRun = readDryRun(env["AGENT_DRY_RUN"], problems);
  if (problems.length > 0 || url === undefined) return { ok: false, problems };
  return { ok: true, settings: { ...url, token, namespaces, dryRun } };
}
