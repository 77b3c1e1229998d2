// GET /healthz and /healthz/deep (src/http/health-route.ts): whether arc-reaper is configured, the
// problems shown only to the admin bearer (under the shared throttle), and the deep checks' answer.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Settings } from "../../../src/config/settings.ts";
import { deepHealthz, healthz } from "../../../src/http/health-route.ts";
import type { BearerOutcome } from "../../../src/ledger/sessions-table.ts";
import { rig, rpcTarget } from "../support/hono-rig.ts";

const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";
/** A complete, valid settings env (as test/workers/support/worker.ts's). */
const VALID = {
  GITHUB_WEBHOOK_SECRET: "test-webhook-secret-0123456789",
  GITHUB_APP_ID: "1",
  GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\\n-----END RSA PRIVATE KEY-----",
  KUBE_API_URL: "http://127.0.0.1:9/kube",
  KUBE_TOKEN: "test-kube-token",
  REAPER_NAMESPACES: "arc-runners",
  REAPER_DRY_RUN: "false",
  ADMIN_TOKEN,
};
const NOW = 1_700_000_000_000;
let lines: Record<string, unknown>[];
beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
  lines = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>));
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});
const logged = () => lines.map(({ at: _at, ...rest }) => rest);

function health(vars: Record<string, unknown>, outcome: BearerOutcome = { kind: "accepted" }, route = healthz, idleFails = false) {
  const attempts: unknown[] = [];
  const idles: string[] = [];
  const sessions = {
    bearer: async (a: unknown) => {
      attempts.push(a);
      return outcome;
    },
  };
  const r = rig(
    {},
    {
      ...sessions,
      idle: async () => {
        idles.push("idle");
        if (idleFails) throw new Error("ledger down");
      },
    },
    { path: "/healthz", handler: route },
    vars,
  );
  const get = async (headers: Record<string, string> = {}) => {
    const res = await r.request("/healthz", { headers: { "cf-connecting-ip": "203.0.113.9", ...headers } });
    await Promise.all(r.waits.splice(0));
    return { status: res.status, json: await res.json(), retry: res.headers.get("retry-after") };
  };
  return { get, attempts, idles, r };
}

describe("healthz", () => {
  it("answers ok to anyone when the settings are valid, asking the ledger nothing", async () => {
    const h = health({ ...VALID });
    expect(await h.get()).toEqual({ status: 200, json: { ok: true }, retry: null });
    expect(h.attempts).toEqual([]);
    expect(lines).toEqual([]);
  });

  it("answers 503 without the problems to anyone without a bearer, and logs them", async () => {
    const h = health({ ...VALID, GITHUB_APP_ID: "one" });
    expect(await h.get()).toEqual({ status: 503, json: { ok: false }, retry: null });
    expect(logged()).toEqual([{ msg: "healthz: arc-reaper is misconfigured", errors: ["GITHUB_APP_ID must be the App's numeric id"] }]);
    expect(h.attempts).toEqual([]);
  });

  it("lists the problems to the raw env's ADMIN_TOKEN, counted as a bearer of the client's address", async () => {
    const h = health({ ...VALID, GITHUB_APP_ID: "one", ADMIN_TOKEN: ` ${ADMIN_TOKEN} `, LEDGER_NAME: "health-ledger" });
    expect(await h.get({ authorization: `Bearer ${ADMIN_TOKEN}` })).toEqual({
      status: 503,
      json: { ok: false, errors: ["GITHUB_APP_ID must be the App's numeric id"] },
      retry: null,
    });
    expect(h.attempts).toEqual([{ client: "203.0.113.9", tokenMatches: true, now: NOW }]);
    expect(h.r.names).toEqual(["health-ledger"]);
  });

  it("never takes a raw ADMIN_TOKEN under 16 characters, nor one that is not text", async () => {
    const short = health({ ...VALID, GITHUB_APP_ID: "one", ADMIN_TOKEN: "a-token-15chars" });
    await short.get({ authorization: "Bearer a-token-15chars" });
    expect(short.attempts).toEqual([{ client: "203.0.113.9", tokenMatches: false, now: NOW }]);
    const notText = health({ ...VALID, GITHUB_APP_ID: "one", ADMIN_TOKEN: 1234567890123456 });
    await notText.get({ authorization: "Bearer 1234567890123456" });
    expect(notText.attempts).toEqual([{ client: "203.0.113.9", tokenMatches: false, now: NOW }]);
    const sixteen = health({ ...VALID, GITHUB_APP_ID: "one", ADMIN_TOKEN: "a-token-16-chars" });
    await sixteen.get({ authorization: "Bearer a-token-16-chars" });
    expect(sixteen.attempts).toEqual([{ client: "203.0.113.9", tokenMatches: true, now: NOW }]);
  });

  it("hides the problems from a refused bearer, logging who tried", async () => {
    const h = health({ ...VALID, GITHUB_APP_ID: "one" }, { kind: "refused", failures: 2 });
    expect(await h.get({ authorization: "Bearer guess-guess-guess" })).toEqual({ status: 503, json: { ok: false }, retry: null });
    expect(logged()[1]).toEqual({ msg: "bearer refused", path: "/healthz", client: "203.0.113.9", failures: 2 });
    expect(h.attempts).toEqual([{ client: "203.0.113.9", tokenMatches: false, now: NOW }]);
  });

  it("answers a throttled address 429 with Retry-After", async () => {
    const h = health({ ...VALID, GITHUB_APP_ID: "one" }, { kind: "throttled", failures: 11, retryAfterSeconds: 30 });
    expect(await h.get({ authorization: `Bearer ${ADMIN_TOKEN}` })).toEqual({
      status: 429,
      json: { ok: false, error: "too many failed tokens from this address: try again in 30s" },
      retry: "30",
    });
    expect(logged()[1]).toEqual({ msg: "bearer throttled", path: "/healthz", client: "203.0.113.9", failures: 11, retryAfterSeconds: 30 });
  });

  it("in the cluster, a probe wakes the ledger (its sweep clock, its alarm re-asserted) at most once a minute per isolate", async () => {
    // Whether the isolate woke the ledger is the module's: a fresh copy, whatever ran before.
    vi.resetModules();
    const fresh = await import("../../../src/http/health-route.ts");
    const cloudflare = health({ ...VALID }, { kind: "accepted" }, fresh.healthz);
    await cloudflare.get();
    expect(cloudflare.idles).toEqual([]);
    const cluster = health({ ...VALID, ARC_REAPER_HOME: "cluster", LEDGER_NAME: "cluster-ledger" }, { kind: "accepted" }, fresh.healthz);
    await cluster.get();
    await cluster.get();
    expect(cluster.idles).toEqual(["idle"]);
    expect(cluster.r.names).toEqual(["cluster-ledger"]);
    vi.setSystemTime(NOW + 59_999);
    await cluster.get();
    expect(cluster.idles).toEqual(["idle"]);
    vi.setSystemTime(NOW + 60_000); // a minute on: the ledger re-asserts an alarm the runtime may have given up
    await cluster.get();
    await cluster.get();
    expect(cluster.idles).toEqual(["idle", "idle"]);
    vi.setSystemTime(NOW); // the clock stepped back: the last wake is in the future, and expired
    await cluster.get();
    await cluster.get();
    expect(cluster.idles).toEqual(["idle", "idle", "idle"]);
  });

  it("wakes the ledger again at the next probe when waking it failed", async () => {
    vi.resetModules();
    const fresh = await import("../../../src/http/health-route.ts");
    const cluster = health({ ...VALID, ARC_REAPER_HOME: "cluster" }, { kind: "accepted" }, fresh.healthz, true);
    await cluster.get();
    await cluster.get();
    expect(cluster.idles).toEqual(["idle", "idle"]);
  });
});

describe("deepHealthz", () => {
  function deep(health: { ok: boolean }, warnings: string[]) {
    const admin = rpcTarget({ deepHealth: async () => health });
    const settings = { ledgerName: "deep-ledger", warnings } as unknown as Settings;
    const r = rig(settings, { admin: () => admin }, { path: "/healthz/deep", handler: deepHealthz });
    return async () => {
      const res = await r.request("/healthz/deep");
      return { status: res.status, json: await res.json(), names: r.names };
    };
  }
  it("answers 200 when every check passed, 503 otherwise, with the settings' warnings when there are any", async () => {
    expect(await deep({ ok: true }, [])()).toEqual({ status: 200, json: { ok: true }, names: ["deep-ledger"] });
    expect(await deep({ ok: false }, ["REAPER_X is an old name"])()).toEqual({
      status: 503,
      json: { ok: false, warnings: ["REAPER_X is an old name"] },
      names: ["deep-ledger"],
    });
  });
});
