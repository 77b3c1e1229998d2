// Reads and validates every setting at once (a valibot schema per setting, the
// types derived from them), so /healthz can name all problems together and
// nothing runs on a half-valid configuration. A message names the setting and
// what is wrong, never its value (URLs excepted, without any credentials or
// query in them).
import * as v from "valibot";
import { DNS_LABEL } from "../model/shapes.ts";
import { blankIsUnset, commaList, eachStopsAtFirst, flag, LOOPBACK_HOSTS, messagesOf, required, wholeNumber, withDefault } from "./env-schema.ts";
import { CLUSTER_HOME_SETTINGS, readHome, type Home } from "./home.ts";

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

export interface Settings {
  /** A runner ARC marked Failed at least this long ago is deleted; undefined: never. */
  failedSeconds?: number;
  /** Finish a stuck deletion (remove ARC's finalizers) once GitHub says its job completed. */
  finishStuck: boolean;
  /**
   * REAPER_IDLE_ALERT_SECONDS: a runner online and without a job this long after it was created never
   * got one (a runner version GitHub no longer assigns to, labels nobody asks for): counted per scale
   * set, shown and alerted, never deleted.
   */
  idleAlertSeconds: number;
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
  /** REAPER_MAX_DELETIONS_PER_MINUTE (or the old _PER_SWEEP name): deletions in any 60 s, shared by the sweep and the alarm. */
  maxDeletionsPerMinute: number;
  /** REAPER_MAX_GITHUB_CALLS_PER_MINUTE (or the old _PER_SWEEP name): GitHub requests in any 60 s. */
  maxGithubCallsPerMinute: number;
  redeliveryLookbackSeconds: number;
  /** How often a sweep lists the App's deliveries for redelivery. */
  deliveriesEverySeconds: number;
  /** A job in progress this long with no completion is re-read from GitHub, once per interval. */
  recheckSeconds: number;
  /**
   * How a recheck of a job whose run the repository lists in progress is answered: `read`, one page of the run's
   * attempt's jobs once per interval (a completion lost inside a run that goes on is found then); `listing`, the
   * listing's "still running" (found when the run ends, fewer calls).
   */
  recheckListedRuns: (typeof LISTED_RUNS)[number];
  /** Closed runners stay listed this many days, then are pruned. */
  historyDays: number;
  /** A runner we deleted that is still there this long after is "stuck" (shown, counted, never deleted again). */
  stuckSeconds: number;
  adminToken: string;
  /** Bearer for /metrics; ADMIN_TOKEN when unset. */
  metricsToken: string;
  /** The ledger's Durable Object name: one ledger per name. */
  ledgerName: string;
  /** Settings that work but should change (old names): logged once and shown in /healthz/deep. */
  warnings: string[];
  /** On Cloudflare, or in the cluster on workerd (its sweep period and client address source). */
  home: Home;
}

/** Invalid settings still carry the home when it is valid: the front door and the in-cluster sweep clock read it. */
export type SettingsResult = { ok: true; settings: Settings } | { ok: false; errors: string[]; home?: Home };

/** Where arc-reaper runs, as the settings say, valid or not (undefined: the home itself is invalid). */
export function homeOf(result: SettingsResult): Home | undefined {
  return result.ok ? result.settings.home : result.home;
}

type Source = Readonly<Record<string, unknown>>;

const MIN_ADMIN_TOKEN_LENGTH = 16;
/** RFC 6750's b64token: what an Authorization: Bearer header can carry (hono/bearer-auth refuses anything else). */
const BEARER_TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;
const BEARER_TOKEN_RULE = "may hold only letters, digits and - . _ ~ + / (then = padding), as a bearer token does (RFC 6750); openssl rand -hex 32 makes one";
const MIN_AGENT_TOKEN_LENGTH = 32;
const LABEL_WORDS = "(lowercase letters, digits and dashes, at most 63)";

/** A URL as an error message may show it: scheme, host and path, never user info, query or fragment. */
function shownUrl(u: URL): string {
  return JSON.stringify(`${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`);
}

/** https only; http:// to a loopback host (the stand-ins, a local tunnel) and nowhere else. No trailing slash. */
function httpsUrl(name: string, fallback?: string) {
  return v.pipe(
    fallback === undefined ? required(name) : withDefault(name, fallback),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      let parsed: URL;
      try {
        parsed = new URL(dataset.value);
      } catch {
        addIssue({ message: `${name} must be an https URL` });
        return NEVER;
      }
      if (parsed.protocol === "http:" && !LOOPBACK_HOSTS.has(parsed.hostname)) {
        addIssue({ message: `${name} must be an https URL (http only to 127.0.0.1, localhost or [::1]), got ${shownUrl(parsed)}` });
        return NEVER;
      }
      if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
        addIssue({ message: `${name} must be an https URL, got ${shownUrl(parsed)}` });
        return NEVER;
      }
      return dataset.value.replace(/\/+$/, "");
    }),
  );
}

/** A token of at least `min` characters (a bearer token: RFC 6750's characters only); its value is never shown. */
const token = (name: string, min: number, o: { fallback?: string; bearer?: boolean } = {}) =>
  v.pipe(
    o.fallback === undefined ? required(name) : withDefault(name, o.fallback),
    v.check((t) => t === "" || t.length >= min, `${name} must be at least ${min} characters`),
    v.check((t) => t === "" || !o.bearer || BEARER_TOKEN.test(t), `${name} ${BEARER_TOKEN_RULE}`),
  );

/** A comma-separated list of DNS labels: each bad entry named by its position, never shown. */
function labelList(name: string, what: string, opts: { required: boolean; unique: boolean }) {
  return v.pipe(
    opts.required ? required(name) : withDefault(name, ""),
    v.transform(commaList),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const names = dataset.value;
      if (opts.required && names.length === 0) addIssue({ message: `${name} names no ${what}` });
      names.forEach((n, i) => {
        if (!DNS_LABEL.test(n)) addIssue({ message: `${name}: entry ${i + 1} is not a valid ${what} name ${LABEL_WORDS}` });
      });
      const dup = opts.unique ? names.find((n, i) => names.indexOf(n) !== i) : undefined;
      if (dup !== undefined && DNS_LABEL.test(dup)) addIssue({ message: `${name} names ${dup} twice` });
    }),
  );
}

/** Smallest REAPER_FAILED_SECONDS: ARC retries a pod for a while; deleting sooner would race its own controller. */
const MIN_FAILED_SECONDS = 60;

const CLUSTER_MODES = ["direct", "agent"] as const;
const LISTED_RUNS = ["read", "listing"] as const;
const TRUE_FALSE = ["true", "false", "1", "0"];
const clusterMode = v.pipe(withDefault("CLUSTER_MODE", "direct"), v.toLowerCase());

// CLUSTER_MODE=direct needs KUBE_API_URL and KUBE_TOKEN (and optionally the Access
// pair); agent needs AGENT_TOKEN. The other mode's settings are not read.
const DIRECT = {
  KUBE_API_URL: httpsUrl("KUBE_API_URL"),
  KUBE_TOKEN: required("KUBE_TOKEN"),
  KUBE_ACCESS_CLIENT_ID: withDefault("KUBE_ACCESS_CLIENT_ID", ""),
  KUBE_ACCESS_CLIENT_SECRET: withDefault("KUBE_ACCESS_CLIENT_SECRET", ""),
  KUBE_CLUSTER_NAME: v.pipe(withDefault("KUBE_CLUSTER_NAME", "default"), v.regex(DNS_LABEL, `KUBE_CLUSTER_NAME must be a DNS label ${LABEL_WORDS}`)),
};
const AGENT = {
  AGENT_TOKEN: token("AGENT_TOKEN", MIN_AGENT_TOKEN_LENGTH),
  // Optional: /healthz/deep and the alert name the ones not connected.
  AGENT_CLUSTERS: labelList("AGENT_CLUSTERS", "cluster", { required: false, unique: true }),
};

/** The per-minute caps, each under its name or the old `..._PER_SWEEP` one (the same number, with a warning; both set: the stricter). */
const CAPS = {
  REAPER_MAX_DELETIONS_PER_MINUTE: wholeNumber("REAPER_MAX_DELETIONS_PER_MINUTE", 50),
  REAPER_MAX_DELETIONS_PER_SWEEP: wholeNumber("REAPER_MAX_DELETIONS_PER_SWEEP", 50),
  REAPER_MAX_GITHUB_CALLS_PER_MINUTE: wholeNumber("REAPER_MAX_GITHUB_CALLS_PER_MINUTE", 100),
  REAPER_MAX_GITHUB_CALLS_PER_SWEEP: wholeNumber("REAPER_MAX_GITHUB_CALLS_PER_SWEEP", 100),
};

// In the order the errors are listed.
const BEFORE_CLUSTER = {
  GITHUB_WEBHOOK_SECRET: required("GITHUB_WEBHOOK_SECRET"),
  GITHUB_APP_ID: v.pipe(required("GITHUB_APP_ID"), v.regex(/^[1-9]\d*$/, "GITHUB_APP_ID must be the App's numeric id")),
  GITHUB_APP_PRIVATE_KEY: v.pipe(
    required("GITHUB_APP_PRIVATE_KEY"),
    v.transform((k) => k.replace(/\\n/g, "\n")),
    // Never echo the value: it is a secret.
    v.regex(
      /^-----BEGIN (RSA )?PRIVATE KEY-----\n[\s\S]+\n-----END (RSA )?PRIVATE KEY-----\s*$/,
      "GITHUB_APP_PRIVATE_KEY must be a PEM RSA private key (PKCS#1 or PKCS#8)",
    ),
  ),
  GITHUB_API_URL: httpsUrl("GITHUB_API_URL", "https://api.github.com"),
  CLUSTER_MODE: v.pipe(clusterMode, v.picklist(CLUSTER_MODES, "CLUSTER_MODE must be direct or agent")),
};
const AFTER_CLUSTER = {
  REAPER_NAMESPACES: labelList("REAPER_NAMESPACES", "namespace", { required: true, unique: false }),
  REAPER_GRACE_SECONDS: wholeNumber("REAPER_GRACE_SECONDS", 300),
  REAPER_MAX_JOB_SECONDS: wholeNumber("REAPER_MAX_JOB_SECONDS", 432_000, 1),
  // Unset is dry run: a settings source that forgets it (a ConfigMap of your own) deletes nothing (fail safe).
  REAPER_DRY_RUN: flag("REAPER_DRY_RUN", TRUE_FALSE, "REAPER_DRY_RUN must be true or false", "true"),
  ...CAPS,
  REAPER_REDELIVERY_LOOKBACK_SECONDS: v.pipe(
    wholeNumber("REAPER_REDELIVERY_LOOKBACK_SECONDS", 3600),
    v.maxValue(3 * 86_400, "REAPER_REDELIVERY_LOOKBACK_SECONDS must be at most 259200 (GitHub keeps deliveries for 3 days)"),
  ),
  REAPER_DELIVERIES_EVERY_SECONDS: wholeNumber("REAPER_DELIVERIES_EVERY_SECONDS", 300, 1),
  REAPER_RECHECK_SECONDS: wholeNumber("REAPER_RECHECK_SECONDS", 3600, 60),
  REAPER_RECHECK_LISTED_RUNS: v.pipe(
    withDefault("REAPER_RECHECK_LISTED_RUNS", "read"),
    v.toLowerCase(),
    v.picklist(LISTED_RUNS, "REAPER_RECHECK_LISTED_RUNS must be read or listing"),
  ),
  REAPER_HISTORY_DAYS: wholeNumber("REAPER_HISTORY_DAYS", 7, 1),
  REAPER_STUCK_SECONDS: wholeNumber("REAPER_STUCK_SECONDS", 900, 1),
  LEDGER_NAME: v.pipe(
    withDefault("LEDGER_NAME", "ledger"),
    v.regex(/^[a-z0-9][-a-z0-9]{0,62}$/, "LEDGER_NAME must be 1 to 63 lowercase letters, digits and dashes"),
  ),
  ADMIN_TOKEN: token("ADMIN_TOKEN", MIN_ADMIN_TOKEN_LENGTH, { bearer: true }),
  METRICS_TOKEN: token("METRICS_TOKEN", MIN_ADMIN_TOKEN_LENGTH, { fallback: "", bearer: true }),
  // Unset: never delete a Failed runner. At least a minute: ARC retries a pod for a while, and deleting sooner would race it.
  REAPER_FAILED_SECONDS: v.pipe(
    withDefault("REAPER_FAILED_SECONDS", ""),
    v.check(
      (t) => t === "" || (/^\d+$/.test(t) && Number(t) >= MIN_FAILED_SECONDS && Number(t) <= 30 * 86_400),
      `REAPER_FAILED_SECONDS must be a whole number of seconds from ${MIN_FAILED_SECONDS} to 2592000, or unset (never delete a Failed runner)`,
    ),
  ),
  REAPER_FINISH_STUCK: flag("REAPER_FINISH_STUCK", TRUE_FALSE, "REAPER_FINISH_STUCK must be true or false"),
  // An hour: a job waits seconds to minutes for a runner, and an ephemeral runner takes the first job it can.
  REAPER_IDLE_ALERT_SECONDS: wholeNumber("REAPER_IDLE_ALERT_SECONDS", 3600, 300),
};

const directSchema = v.pipe(
  v.object(eachStopsAtFirst({ ...BEFORE_CLUSTER, ...DIRECT, ...AFTER_CLUSTER })),
  v.forward(
    v.partialCheck(
      [["KUBE_ACCESS_CLIENT_ID"], ["KUBE_ACCESS_CLIENT_SECRET"]],
      (s) => (s.KUBE_ACCESS_CLIENT_ID === "") === (s.KUBE_ACCESS_CLIENT_SECRET === ""),
      "KUBE_ACCESS_CLIENT_ID and KUBE_ACCESS_CLIENT_SECRET must be set together",
    ),
    ["KUBE_ACCESS_CLIENT_ID"],
  ),
);
const agentSchema = v.object(eachStopsAtFirst({ ...BEFORE_CLUSTER, ...AGENT, ...AFTER_CLUSTER }));
const ORDER = [...Object.keys(BEFORE_CLUSTER), ...Object.keys(DIRECT), ...Object.keys(AGENT), ...Object.keys(AFTER_CLUSTER)];

/** Every setting the Worker reads from its env, by name (the in-cluster server binds each from its environment). */
export const SETTING_NAMES: readonly string[] = [...ORDER, ...CLUSTER_HOME_SETTINGS];

type Common = v.InferOutput<v.ObjectSchema<typeof BEFORE_CLUSTER & typeof AFTER_CLUSTER, undefined>>;

/** The cap under its new name, else under its old name (with a warning), else the default. */
function perMinute<N extends keyof typeof CAPS, O extends keyof typeof CAPS>(env: Source, vars: Common, now: N, old: O, warnings: string[]): number {
  const given = (k: string) => v.is(required(k), env[k]);
  if (!given(old)) return vars[now];
  if (!given(now)) {
    warnings.push(`${old} is the old name of ${now} (the same number: a cap per minute, shared by the sweep and the alarm); rename it`);
    return vars[old];
  }
  // Both set (an upgraded config beside a merged one): a cap the user set never loosens, so the stricter holds.
  const [a, b] = [vars[old], vars[now]];
  warnings.push(
    a === b
      ? `${old} is the old name of ${now}, both set to ${a}: drop ${old}`
      : `${old}=${a} and ${now}=${b} are both set and differ: the stricter, ${Math.min(a, b)}, holds (a cap never loosens on upgrade); set ${now} alone`,
  );
  return Math.min(a, b);
}

export function readSettings(env: Source): SettingsResult {
  const mode = v.parse(clusterMode, typeof env.CLUSTER_MODE === "string" ? env.CLUSTER_MODE : undefined);
  const input = Object.fromEntries(ORDER.map((k) => [k, env[k]]));
  const parsed = mode === "agent" ? v.safeParse(agentSchema, input) : v.safeParse(directSchema, input);
  const home = readHome(env);
  if (!parsed.success || !home.ok) {
    const errors = [...(parsed.success ? [] : messagesOf(parsed.issues, ORDER)), ...(home.ok ? [] : home.errors)];
    return home.ok ? { ok: false, errors, home: home.home } : { ok: false, errors };
  }
  const s = parsed.output;
  const cluster: ClusterSettings =
    "AGENT_TOKEN" in s
      ? { mode: "agent", agentToken: s.AGENT_TOKEN, expectedClusters: s.AGENT_CLUSTERS }
      : {
          mode: "direct",
          apiUrl: s.KUBE_API_URL,
          token: s.KUBE_TOKEN,
          ...(s.KUBE_ACCESS_CLIENT_ID ? { access: { clientId: s.KUBE_ACCESS_CLIENT_ID, clientSecret: s.KUBE_ACCESS_CLIENT_SECRET } } : {}),
          name: s.KUBE_CLUSTER_NAME,
        };
  const warnings: string[] = [...home.warnings];
  if (blankIsUnset(env.REAPER_DRY_RUN) === undefined)
    warnings.push("REAPER_DRY_RUN is unset: dry run, the default since 0.2.0 (it deleted before); set it to true or false to say which you want");
  return {
    ok: true,
    settings: {
      webhookSecret: s.GITHUB_WEBHOOK_SECRET,
      appId: s.GITHUB_APP_ID,
      privateKey: s.GITHUB_APP_PRIVATE_KEY,
      githubApiUrl: s.GITHUB_API_URL,
      cluster,
      namespaces: s.REAPER_NAMESPACES,
      graceSeconds: s.REAPER_GRACE_SECONDS,
      maxJobSeconds: s.REAPER_MAX_JOB_SECONDS,
      dryRun: s.REAPER_DRY_RUN,
      maxDeletionsPerMinute: perMinute(env, s, "REAPER_MAX_DELETIONS_PER_MINUTE", "REAPER_MAX_DELETIONS_PER_SWEEP", warnings),
      maxGithubCallsPerMinute: perMinute(env, s, "REAPER_MAX_GITHUB_CALLS_PER_MINUTE", "REAPER_MAX_GITHUB_CALLS_PER_SWEEP", warnings),
      redeliveryLookbackSeconds: s.REAPER_REDELIVERY_LOOKBACK_SECONDS,
      deliveriesEverySeconds: s.REAPER_DELIVERIES_EVERY_SECONDS,
      recheckSeconds: s.REAPER_RECHECK_SECONDS,
      recheckListedRuns: s.REAPER_RECHECK_LISTED_RUNS,
      historyDays: s.REAPER_HISTORY_DAYS,
      stuckSeconds: s.REAPER_STUCK_SECONDS,
      adminToken: s.ADMIN_TOKEN,
      metricsToken: s.METRICS_TOKEN || s.ADMIN_TOKEN,
      ledgerName: s.LEDGER_NAME,
      warnings,
      ...(s.REAPER_FAILED_SECONDS !== "" ? { failedSeconds: Number(s.REAPER_FAILED_SECONDS) } : {}),
      finishStuck: s.REAPER_FINISH_STUCK,
      idleAlertSeconds: s.REAPER_IDLE_ALERT_SECONDS,
      home: home.home,
    },
  };
}
