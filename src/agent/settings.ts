// The agent's settings, from the environment: a valibot schema per setting.
// Every bad setting is named; the token's value is never echoed (only its length).
import * as v from "valibot";
import { commaList, eachStopsAtFirst, flag, LOOPBACK_HOSTS, messagesOf, withDefault } from "../config/env-schema.ts";
import { DNS_LABEL } from "../model/shapes.ts";
import type { ProxySettings } from "./proxy.ts";

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
  /** HTTPS_PROXY, HTTP_PROXY, NO_PROXY (or their lowercase spellings, which win): see proxy.ts. */
  proxy: ProxySettings;
}

export type SettingsResult = { ok: true; settings: AgentSettings } | { ok: false; problems: string[] };

const MIN_TOKEN_LENGTH = 32;
/** The placeholder in infra/agent's Secret: an agent started with it refuses to run. */
export const TOKEN_PLACEHOLDER_PREFIX = "REPLACE_ME";
/** The cluster a single-cluster install has: its token may be the Worker's AGENT_TOKEN itself. */
const DEFAULT_CLUSTER = "default";
const DEFAULT_HEALTH_PORT = 8080;

const shown = (raw: unknown): string => JSON.stringify(raw);

const reaperUrl = v.pipe(
  withDefault("ARC_REAPER_URL", ""),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const raw = dataset.value;
    if (raw === "") {
      addIssue({ message: "ARC_REAPER_URL is required (the Worker's https:// address)" });
      return NEVER;
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      // Never echoed: a value that does not parse may still hold credentials.
      addIssue({ message: `ARC_REAPER_URL is not a URL (${raw.length} characters; the value is not shown)` });
      return NEVER;
    }
    if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
      addIssue({ message: `ARC_REAPER_URL must use https:// (http:// only for 127.0.0.1 or localhost), got ${shown(url.protocol)}` });
      return NEVER;
    }
    if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
      addIssue({ message: "ARC_REAPER_URL must not carry credentials, a query or a fragment" });
      return NEVER;
    }
    const base = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
    return { reaperUrl: base, agentUrl: `${base.replace(/^http/, "ws")}/agent` };
  }),
);

// Surrounding whitespace (a Secret written with `echo`) is dropped, as the Worker trims its AGENT_TOKEN.
const token = v.pipe(
  withDefault("AGENT_TOKEN", ""),
  v.check((t) => t !== "", "AGENT_TOKEN is required (the same secret as the Worker's AGENT_TOKEN)"),
  v.check((t) => !t.startsWith(TOKEN_PLACEHOLDER_PREFIX), "AGENT_TOKEN is still the placeholder from infra/agent: set the real secret"),
  v.check((t) => !/\s/.test(t), "AGENT_TOKEN must not contain whitespace"),
  v.minLength(MIN_TOKEN_LENGTH, (issue) => `AGENT_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters, got ${issue.received}`),
);

const cluster = v.pipe(
  withDefault("AGENT_CLUSTER", DEFAULT_CLUSTER),
  v.regex(DNS_LABEL, (issue) => `AGENT_CLUSTER must be a DNS label (lowercase letters, digits and dashes, at most 63), got ${shown(issue.input)}`),
);

const namespaces = v.pipe(
  withDefault("REAPER_NAMESPACES", ""),
  v.transform(commaList),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const list = dataset.value;
    if (list.length === 0) addIssue({ message: "REAPER_NAMESPACES is required: a comma-separated list of runner namespaces" });
    for (const ns of list) if (!DNS_LABEL.test(ns)) addIssue({ message: `REAPER_NAMESPACES: ${shown(ns)} is not a valid namespace name` });
    const dup = list.find((ns, i) => list.indexOf(ns) !== i);
    if (dup !== undefined) addIssue({ message: `REAPER_NAMESPACES names ${shown(dup)} twice` });
  }),
);

const dryRun = flag("AGENT_DRY_RUN", ["true", "false"], (issue) => `AGENT_DRY_RUN must be true or false, got ${shown(issue.input)}`);

const healthPort = v.pipe(
  withDefault("AGENT_HEALTH_PORT", String(DEFAULT_HEALTH_PORT)),
  v.regex(/^\d+$/, (issue) => `AGENT_HEALTH_PORT must be a port number from 0 to 65535, got ${shown(issue.input)}`),
  v.transform(Number),
  v.maxValue(65535, (issue) => `AGENT_HEALTH_PORT must be a port number from 0 to 65535, got ${shown(String(issue.input))}`),
);

/** An optional proxy URL: http:// or https://, nothing after the host but `/`. Never echoed: it may hold credentials. */
const proxyUrl = (name: string) =>
  v.pipe(
    v.optional(v.string()),
    v.transform((x) => (x === undefined || x.trim() === "" ? undefined : x.trim())),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const raw = dataset.value;
      if (raw === undefined) return undefined;
      const problem = `${name} (or ${name.toLowerCase()}) must be the proxy's http:// or https:// URL, e.g. http://proxy.example.com:3128 (${raw.length} characters; the value is not shown)`;
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        addIssue({ message: problem });
        return NEVER;
      }
      if ((url.protocol !== "http:" && url.protocol !== "https:") || (url.pathname !== "/" && url.pathname !== "") || url.search !== "") {
        addIssue({ message: problem });
        return NEVER;
      }
      return url.href;
    }),
  );

const noProxy = v.pipe(
  v.optional(v.string(), ""),
  v.transform((x) => x.split(/[\s,]+/).flatMap((e) => (e === "" ? [] : [e.toLowerCase()]))),
);

const SETTINGS = {
  ARC_REAPER_URL: reaperUrl,
  AGENT_TOKEN: token,
  AGENT_CLUSTER: cluster,
  REAPER_NAMESPACES: namespaces,
  AGENT_DRY_RUN: dryRun,
  AGENT_HEALTH_PORT: healthPort,
  HTTPS_PROXY: proxyUrl("HTTPS_PROXY"),
  HTTP_PROXY: proxyUrl("HTTP_PROXY"),
  NO_PROXY: noProxy,
};
/** The lowercase spelling first (as curl reads it), then the uppercase one; blank is unset. */
const PROXY_NAMES = ["HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"];
const either = (env: Record<string, string | undefined>, name: string): string | undefined =>
  [env[name.toLowerCase()], env[name]].find((x) => x !== undefined && x.trim() !== "");
const ORDER = Object.keys(SETTINGS);
const schema = v.object(eachStopsAtFirst(SETTINGS));

export function readSettings(env: Record<string, string | undefined>): SettingsResult {
  const parsed = v.safeParse(schema, Object.fromEntries(ORDER.map((k) => [k, PROXY_NAMES.includes(k) ? either(env, k) : env[k]])));
  if (!parsed.success) return { ok: false, problems: messagesOf(parsed.issues, ORDER) };
  const s = parsed.output;
  return {
    ok: true,
    settings: {
      ...s.ARC_REAPER_URL,
      token: s.AGENT_TOKEN,
      cluster: s.AGENT_CLUSTER,
      namespaces: s.REAPER_NAMESPACES,
      dryRun: s.AGENT_DRY_RUN,
      healthPort: s.AGENT_HEALTH_PORT,
      proxy: { httpsProxy: s.HTTPS_PROXY, httpProxy: s.HTTP_PROXY, noProxy: s.NO_PROXY },
    },
  };
}
