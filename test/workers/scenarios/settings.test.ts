// Settings: a bad value is named, never echoed (URLs excepted, shown without
// credentials or query); http:// goes only to a loopback host; CLUSTER_MODE
// decides what the cluster needs (direct: KUBE_API_URL and KUBE_TOKEN; agent:
// AGENT_TOKEN of at least 32 characters).
import { describe, expect, it } from "vitest";
import { readSettings, type SettingsResult } from "../../../src/config/settings.ts";
import { testEnv } from "../support/worker.ts";

const AGENT_TOKEN = "agent-token-0123456789abcdef-0123456789";

function errorsOf(result: SettingsResult): string[] {
  return result.ok ? [] : result.errors;
}

describe("a bad value is named, never echoed", () => {
  // Each value carries a marker that must appear nowhere in the result.
  it.each([
    ["GITHUB_APP_ID", "app-marker-7f3a", "GITHUB_APP_ID must be the App's numeric id"],
    ["REAPER_GRACE_SECONDS", "-marker-7f3a", "REAPER_GRACE_SECONDS must be a whole number >= 0"],
    ["REAPER_MAX_JOB_SECONDS", "5 days marker-7f3a", "REAPER_MAX_JOB_SECONDS must be a whole number >= 1"],
    ["REAPER_MAX_DELETIONS_PER_SWEEP", "1.5marker-7f3a", "REAPER_MAX_DELETIONS_PER_SWEEP must be a whole number >= 0"],
    ["REAPER_MAX_GITHUB_CALLS_PER_SWEEP", "marker-7f3a", "REAPER_MAX_GITHUB_CALLS_PER_SWEEP must be a whole number >= 0"],
    ["REAPER_MAX_DELETIONS_PER_MINUTE", "1.5marker-7f3a", "REAPER_MAX_DELETIONS_PER_MINUTE must be a whole number >= 0"],
    ["REAPER_MAX_GITHUB_CALLS_PER_MINUTE", "marker-7f3a", "REAPER_MAX_GITHUB_CALLS_PER_MINUTE must be a whole number >= 0"],
    ["ADMIN_TOKEN", "   ", "ADMIN_TOKEN is missing"],
    ["REAPER_REDELIVERY_LOOKBACK_SECONDS", "marker-7f3a", "REAPER_REDELIVERY_LOOKBACK_SECONDS must be a whole number >= 0"],
    ["REAPER_DELIVERIES_EVERY_SECONDS", "marker-7f3a", "REAPER_DELIVERIES_EVERY_SECONDS must be a whole number >= 1"],
    ["REAPER_RECHECK_SECONDS", "marker-7f3a", "REAPER_RECHECK_SECONDS must be a whole number >= 60"],
    ["REAPER_RECHECK_LISTED_RUNS", "marker-7f3a", "REAPER_RECHECK_LISTED_RUNS must be read or listing"],
    ["REAPER_HISTORY_DAYS", "marker-7f3a", "REAPER_HISTORY_DAYS must be a whole number >= 1"],
    ["REAPER_DRY_RUN", "marker-7f3a", "REAPER_DRY_RUN must be true or false"],
    [
      "REAPER_NAMESPACES",
      "arc-runners,Marker-7f3a",
      "REAPER_NAMESPACES: entry 2 is not a valid namespace name (lowercase letters, digits and dashes, at most 63)",
    ],
    ["CLUSTER_MODE", "marker-7f3a", "CLUSTER_MODE must be direct or agent"],
    ["KUBE_API_URL", "marker-7f3a not a url", "KUBE_API_URL must be an https URL"],
    ["GITHUB_API_URL", "marker-7f3a", "GITHUB_API_URL must be an https URL"],
  ])("%s", (name, value, message) => {
    const result = readSettings(testEnv({ [name]: value }));
    expect(errorsOf(result)).toEqual([message]);
    expect(JSON.stringify(result).toLowerCase()).not.toContain("marker-7f3a");
  });

  it("secrets too, all at once: no value of any setting appears in the errors", () => {
    const values: Record<string, string> = {
      GITHUB_APP_PRIVATE_KEY: "private-key-marker-7f3a",
      ADMIN_TOKEN: "short-7f3a",
      METRICS_TOKEN: "short-7f3a",
      LEDGER_NAME: "Ledger_Marker-7f3a",
      KUBE_ACCESS_CLIENT_ID: "access-id-marker-7f3a",
      GITHUB_APP_ID: "app-marker-7f3a",
      REAPER_DRY_RUN: "yes-marker-7f3a",
    };
    const result = readSettings(testEnv(values));
    expect(errorsOf(result)).toEqual([
      "GITHUB_APP_ID must be the App's numeric id",
      "GITHUB_APP_PRIVATE_KEY must be a PEM RSA private key (PKCS#1 or PKCS#8)",
      "KUBE_ACCESS_CLIENT_ID and KUBE_ACCESS_CLIENT_SECRET must be set together",
      "REAPER_DRY_RUN must be true or false",
      "LEDGER_NAME must be 1 to 63 lowercase letters, digits and dashes",
      "ADMIN_TOKEN must be at least 16 characters",
      "METRICS_TOKEN must be at least 16 characters",
    ]);
    const text = JSON.stringify(result).toLowerCase();
    expect(text).not.toContain("7f3a");
  });
});

describe("the bearer tokens", () => {
  it.each(["ADMIN_TOKEN", "METRICS_TOKEN"])("%s must be an RFC 6750 bearer token (a header can carry it), named without its value", (name) => {
    const result = readSettings(testEnv({ [name]: "marker-7f3a with spaces!" }));
    expect(errorsOf(result)).toEqual([
      `${name} may hold only letters, digits and - . _ ~ + / (then = padding), as a bearer token does (RFC 6750); openssl rand -hex 32 makes one`,
    ]);
    expect(JSON.stringify(result)).not.toContain("7f3a");
    expect(readSettings(testEnv({ [name]: "AbC.def_ghi~jkl+mno/pqr-0123==" })).ok).toBe(true);
  });
});

describe("http:// only to a loopback host", () => {
  it.each(["KUBE_API_URL", "GITHUB_API_URL"])("%s: http to another host is refused, shown without credentials or query", (name) => {
    const result = readSettings(testEnv({ [name]: "http://reaper:hunter2@kube.example.com:6443/base?token=abc123#frag" }));
    expect(errorsOf(result)).toEqual([`${name} must be an https URL (http only to 127.0.0.1, localhost or [::1]), got "http://kube.example.com:6443/base"`]);
    for (const secret of ["hunter2", "reaper", "abc123", "frag"]) expect(JSON.stringify(result)).not.toContain(secret);
  });

  it.each([
    "http://kube.example.com",
    "http://10.0.0.1:6443",
    "http://127.0.0.1.nip.io",
    "http://localhost.example.com",
    "http://127.0.0.2",
    "http://[::2]:6443",
  ])("KUBE_API_URL=%s is refused", (url) => {
    expect(errorsOf(readSettings(testEnv({ KUBE_API_URL: url })))).toEqual([
      expect.stringMatching(/^KUBE_API_URL must be an https URL \(http only to 127\.0\.0\.1, localhost or \[::1\]\), got "http:\/\//),
    ]);
  });

  it.each(["http://127.0.0.1:8080/kube", "http://localhost:6443", "http://LOCALHOST:6443", "http://[::1]:6443/", "https://kube.example.com:6443"])(
    "KUBE_API_URL=%s is allowed",
    (url) => {
      const result = readSettings(testEnv({ KUBE_API_URL: url }));
      expect(errorsOf(result)).toEqual([]);
      expect(result.ok && result.settings.cluster).toEqual({ mode: "direct", apiUrl: url.replace(/\/+$/, ""), token: "test-kube-token", name: "default" });
    },
  );

  it.each(["http://127.0.0.1:9/github", "http://localhost:3000", "https://ghe.example.com/api/v3"])("GITHUB_API_URL=%s is allowed", (url) => {
    const result = readSettings(testEnv({ GITHUB_API_URL: url }));
    expect(result.ok && result.settings.githubApiUrl).toBe(url);
  });

  it("another scheme is refused, shown", () => {
    expect(errorsOf(readSettings(testEnv({ GITHUB_API_URL: "ftp://files.example.com/x" })))).toEqual([
      'GITHUB_API_URL must be an https URL, got "ftp://files.example.com/x"',
    ]);
  });
});

describe("CLUSTER_MODE", () => {
  it("defaults to direct: KUBE_API_URL and KUBE_TOKEN, and the Access pair when set", () => {
    const result = readSettings(testEnv({ KUBE_ACCESS_CLIENT_ID: "id.access", KUBE_ACCESS_CLIENT_SECRET: "access-secret-value" }));
    expect(result.ok && result.settings.cluster).toEqual({
      mode: "direct",
      apiUrl: "http://127.0.0.1:9/kube",
      token: "test-kube-token",
      access: { clientId: "id.access", clientSecret: "access-secret-value" },
      name: "default",
    });
    expect(
      readSettings(testEnv({ KUBE_CLUSTER_NAME: "eu-west" })).ok &&
        (readSettings(testEnv({ KUBE_CLUSTER_NAME: "eu-west" })) as { settings: { cluster: { name: string } } }).settings.cluster.name,
    ).toBe("eu-west");
    expect(errorsOf(readSettings(testEnv({ KUBE_CLUSTER_NAME: "EU_West" })))).toEqual([
      "KUBE_CLUSTER_NAME must be a DNS label (lowercase letters, digits and dashes, at most 63)",
    ]);
    expect(errorsOf(readSettings(testEnv({ CLUSTER_MODE: "direct", KUBE_API_URL: undefined, KUBE_TOKEN: undefined })))).toEqual([
      "KUBE_API_URL is missing",
      "KUBE_TOKEN is missing",
    ]);
  });

  it("agent needs neither KUBE_API_URL nor KUBE_TOKEN, but AGENT_TOKEN", () => {
    const result = readSettings(testEnv({ CLUSTER_MODE: "agent", AGENT_TOKEN, KUBE_API_URL: undefined, KUBE_TOKEN: undefined }));
    expect(result.ok && result.settings.cluster).toEqual({ mode: "agent", agentToken: AGENT_TOKEN, expectedClusters: [] });
    const two = readSettings(
      testEnv({ CLUSTER_MODE: "agent", AGENT_TOKEN, AGENT_CLUSTERS: " eu-west, us-east ", KUBE_API_URL: undefined, KUBE_TOKEN: undefined }),
    );
    expect(two.ok && two.settings.cluster).toEqual({ mode: "agent", agentToken: AGENT_TOKEN, expectedClusters: ["eu-west", "us-east"] });
    expect(errorsOf(readSettings(testEnv({ CLUSTER_MODE: "agent", AGENT_TOKEN, AGENT_CLUSTERS: "eu-west,EU,eu-west" })))).toEqual([
      "AGENT_CLUSTERS: entry 2 is not a valid cluster name (lowercase letters, digits and dashes, at most 63)",
      "AGENT_CLUSTERS names eu-west twice",
    ]);
    expect(errorsOf(readSettings(testEnv({ CLUSTER_MODE: "agent", KUBE_API_URL: undefined, KUBE_TOKEN: undefined })))).toEqual(["AGENT_TOKEN is missing"]);
  });

  it("AGENT_TOKEN must be at least 32 characters, and is never echoed", () => {
    const short = "agent-token-7f3a-0123456789abcd"; // 31 characters
    const result = readSettings(testEnv({ CLUSTER_MODE: "agent", AGENT_TOKEN: short }));
    expect(errorsOf(result)).toEqual(["AGENT_TOKEN must be at least 32 characters"]);
    expect(JSON.stringify(result)).not.toContain("7f3a");
    expect(readSettings(testEnv({ CLUSTER_MODE: "agent", AGENT_TOKEN: `${short}e` })).ok).toBe(true);
  });

  it("direct mode does not need AGENT_TOKEN; an unknown mode is named", () => {
    expect(readSettings(testEnv({ CLUSTER_MODE: "direct" })).ok).toBe(true);
    expect(errorsOf(readSettings(testEnv({ CLUSTER_MODE: "both" })))).toEqual(["CLUSTER_MODE must be direct or agent"]);
  });
});

describe("the per-minute caps under their old names", () => {
  const settingsOf = (over: Record<string, string | undefined>) => {
    const result = readSettings(testEnv({ REAPER_MAX_DELETIONS_PER_MINUTE: undefined, ...over }));
    if (!result.ok) throw new Error(result.errors.join("; "));
    return result.settings;
  };

  it("the new names, and the defaults, give no warning", () => {
    expect(settingsOf({ REAPER_MAX_DELETIONS_PER_MINUTE: "7", REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "9" })).toMatchObject({
      maxDeletionsPerMinute: 7,
      maxGithubCallsPerMinute: 9,
      warnings: [],
    });
    expect(settingsOf({})).toMatchObject({ maxDeletionsPerMinute: 50, maxGithubCallsPerMinute: 100, warnings: [] });
  });

  it("an old name alone still sets the cap, with a warning that names both", () => {
    const s = settingsOf({ REAPER_MAX_DELETIONS_PER_SWEEP: "3", REAPER_MAX_GITHUB_CALLS_PER_SWEEP: "4" });
    expect(s).toMatchObject({ maxDeletionsPerMinute: 3, maxGithubCallsPerMinute: 4 });
    expect(s.warnings).toEqual([
      "REAPER_MAX_DELETIONS_PER_SWEEP is the old name of REAPER_MAX_DELETIONS_PER_MINUTE (the same number: a cap per minute, shared by the sweep and the alarm); rename it",
      "REAPER_MAX_GITHUB_CALLS_PER_SWEEP is the old name of REAPER_MAX_GITHUB_CALLS_PER_MINUTE (the same number: a cap per minute, shared by the sweep and the alarm); rename it",
    ]);
  });

  it("both names, different: the stricter holds, whichever name carries it, and the warning says so", () => {
    const older = settingsOf({ REAPER_MAX_DELETIONS_PER_SWEEP: "3", REAPER_MAX_DELETIONS_PER_MINUTE: "8" });
    expect(older.maxDeletionsPerMinute).toBe(3);
    expect(older.warnings).toEqual([
      "REAPER_MAX_DELETIONS_PER_SWEEP=3 and REAPER_MAX_DELETIONS_PER_MINUTE=8 are both set and differ: the stricter, 3, holds (a cap never loosens on upgrade); set REAPER_MAX_DELETIONS_PER_MINUTE alone",
    ]);
    const newer = settingsOf({ REAPER_MAX_GITHUB_CALLS_PER_SWEEP: "40", REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "9" });
    expect(newer.maxGithubCallsPerMinute).toBe(9);
    expect(newer.warnings).toEqual([
      "REAPER_MAX_GITHUB_CALLS_PER_SWEEP=40 and REAPER_MAX_GITHUB_CALLS_PER_MINUTE=9 are both set and differ: the stricter, 9, holds (a cap never loosens on upgrade); set REAPER_MAX_GITHUB_CALLS_PER_MINUTE alone",
    ]);
  });

  it("both names, the same number: that number, and the old name named to drop", () => {
    const s = settingsOf({ REAPER_MAX_DELETIONS_PER_SWEEP: "8", REAPER_MAX_DELETIONS_PER_MINUTE: "8" });
    expect(s.maxDeletionsPerMinute).toBe(8);
    expect(s.warnings).toEqual([
      "REAPER_MAX_DELETIONS_PER_SWEEP is the old name of REAPER_MAX_DELETIONS_PER_MINUTE, both set to 8: drop REAPER_MAX_DELETIONS_PER_SWEEP",
    ]);
  });

  it("an upgrading user's config (the old name set) keeps its cap even beside the new name at its default", () => {
    // What the shipped wrangler.toml once set: the new names at their defaults.
    const s = settingsOf({
      REAPER_MAX_DELETIONS_PER_SWEEP: "2",
      REAPER_MAX_DELETIONS_PER_MINUTE: "50",
      REAPER_MAX_GITHUB_CALLS_PER_SWEEP: "5",
      REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "100",
    });
    expect(s).toMatchObject({ maxDeletionsPerMinute: 2, maxGithubCallsPerMinute: 5 });
  });
});
