// Reads and validates every setting at once, so /healthz can name all problems
// together and nothing runs on a half-valid configuration.
export interface Settings {
  webhookSecret: string;
  appId: string;
  privateKey: string; // PEM, newlines restored; PKCS#1 or PKCS#8
  githubApiUrl: string;
  kubeApiUrl: string;
  kubeToken: string;
  /** Optional Cloudflare Access service token in front of the API server. */
  kubeAccess?: { clientId: string; clientSecret: string };
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
  adminToken: string;
  /** Bearer for /metrics; ADMIN_TOKEN when unset. */
  metricsToken: string;
  /** The ledger's Durable Object name: one ledger per name. */
  ledgerName: string;
}

export type SettingsResult = { ok: true; settings: Settings } | { ok: false; errors: string[] };

type Source = Readonly<Record<string, unknown>>;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const MIN_ADMIN_TOKEN_LENGTH = 16;

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
      errors.push(`${name} must be a whole number >= ${min}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return Number(raw);
  };
  const url = (name: string, fallback?: string): string => {
    const raw = text(name, fallback);
    if (raw === "") return "";
    try {
      const parsed = new URL(raw);
      if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new Error("scheme");
      return raw.replace(/\/+$/, "");
    } catch {
      errors.push(`${name} must be an http(s) URL, got ${JSON.stringify(raw)}`);
      return "";
    }
  };

  const webhookSecret = text("GITHUB_WEBHOOK_SECRET");
  const appId = text("GITHUB_APP_ID");
  if (appId !== "" && !/^[1-9]\d*$/.test(appId)) {
    errors.push(`GITHUB_APP_ID must be the App's numeric id, got ${JSON.stringify(appId)}`);
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
  const kubeApiUrl = url("KUBE_API_URL");
  const kubeToken = text("KUBE_TOKEN");
  const accessId = text("KUBE_ACCESS_CLIENT_ID", "");
  const accessSecret = text("KUBE_ACCESS_CLIENT_SECRET", "");
  if ((accessId === "") !== (accessSecret === "")) {
    errors.push("KUBE_ACCESS_CLIENT_ID and KUBE_ACCESS_CLIENT_SECRET must be set together");
  }
  const namespaces = text("REAPER_NAMESPACES")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  if (env.REAPER_NAMESPACES && namespaces.length === 0) errors.push("REAPER_NAMESPACES names no namespace");
  for (const ns of namespaces) {
    if (!DNS_LABEL.test(ns)) errors.push(`REAPER_NAMESPACES: ${JSON.stringify(ns)} is not a valid namespace name`);
  }
  const graceSeconds = count("REAPER_GRACE_SECONDS", 300);
  const maxJobSeconds = count("REAPER_MAX_JOB_SECONDS", 432_000, 1);
  const dryRunText = text("REAPER_DRY_RUN", "false").toLowerCase();
  if (!["true", "false", "1", "0"].includes(dryRunText)) {
    errors.push(`REAPER_DRY_RUN must be true or false, got ${JSON.stringify(dryRunText)}`);
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
  const ledgerName = text("LEDGER_NAME", "ledger");
  if (!/^[a-z0-9][-a-z0-9]{0,62}$/.test(ledgerName)) errors.push("LEDGER_NAME must be 1 to 63 lowercase letters, digits and dashes");
  const adminToken = text("ADMIN_TOKEN");
  if (adminToken !== "" && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    errors.push(`ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  }

  const metricsToken = text("METRICS_TOKEN", "");
  if (metricsToken !== "" && metricsToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    errors.push(`METRICS_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  }

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: {
      webhookSecret,
      appId,
      privateKey,
      githubApiUrl,
      kubeApiUrl,
      kubeToken,
      ...(accessId ? { kubeAccess: { clientId: accessId, clientSecret: accessSecret } } : {}),
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
      adminToken,
      metricsToken: metricsToken || adminToken,
      ledgerName,
    },
  };
}
