// The Worker's routes as createApp wires them (src/http/app.ts), with the admin page's login and
// logout (admin-page-route.ts), the pause switch, /admin/... not found and the runner's page gate,
// over a fake ledger on plain Node. The pages themselves: the workers scenarios and test/node/admin.
import { createHash, createHmac, randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PAGE_CSS } from "../../../src/admin/page.tsx";
import { createApp } from "../../../src/http/app.ts";
import { flushDoorCounts } from "../../../src/http/door-tally.ts";
import { pageHeaders } from "../../../src/http/admin-page-route.ts";
import type { DoorBatch } from "../../../src/durable/receive-delivery.ts";
import type { LoginOutcome } from "../../../src/ledger/sessions-table.ts";
import { rpcTarget } from "../support/hono-rig.ts";

const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";
const SECRET = "test-webhook-secret-0123456789";
const VALID = {
  GITHUB_WEBHOOK_SECRET: SECRET,
  GITHUB_APP_ID: "1",
  GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\\n-----END RSA PRIVATE KEY-----",
  KUBE_API_URL: "http://127.0.0.1:9/kube",
  KUBE_TOKEN: "test-kube-token",
  REAPER_NAMESPACES: "arc-runners",
  REAPER_DRY_RUN: "false",
  ADMIN_TOKEN,
};
const BEARER = { authorization: `Bearer ${ADMIN_TOKEN}` };
const ORIGIN = "https://reaper.example.com";
// Ledger names fresh on each run of the file: the door's pending counts are the module's.
const RUN = randomUUID();
let n = 0;
let lines: Record<string, unknown>[];
beforeEach(() => {
  lines = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>));
});
afterEach(() => vi.restoreAllMocks());
const logged = () => lines.map(({ at: _at, ...rest }) => rest);

function worker(vars: Record<string, unknown> = VALID, opts: { login?: LoginOutcome; live?: boolean } = {}) {
  const LEDGER_NAME = `app-${RUN}-${++n}`;
  const calls: unknown[][] = [];
  const batches: DoorBatch[] = [];
  const sessions = {
    bearer: async () => ({ kind: "accepted" }),
    login: async () => opts.login ?? { kind: "session", expiresAt: 1 },
    checkSession: async () => opts.live ?? false,
    endSession: async (h: string) => void calls.push(["endSession", h]),
  };

  const admin = rpcTarget({
    runners: async (q: unknown) => {
      calls.push(["runners", q]);
      return { runners: [], nextCursor: null };
    },
    story: async (name: string) => {
      calls.push(["story", name]);
      return { jobs: [] };
    },
    pause: async (by: string) => {
      calls.push(["pause", by]);
      return { by, since: 5 };
    },
    resume: async (by: string) => {
      calls.push(["resume", by]);
      return { wasPaused: true, madeDue: 3 };
    },
  });
  const ledger = {
    ...sessions,
    admin: () => admin,
    countBatch: async (b: DoorBatch) => void batches.push(b),
    receive: async () => ({ outcome: "recorded" }),
  };
  const env = { ...vars, LEDGER_NAME, LEDGER: { idFromName: (x: string) => x, get: () => ledger } };
  const waits: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void waits.push(p), passThroughOnException: () => undefined, props: {} };
  const app = createApp();
  const request = async (path: string, init: RequestInit = {}) => {
    const res = await app.request(`${ORIGIN}${path}`, init, env, ctx);
    await Promise.all(waits.splice(0));
    return res;
  };
  const counted = async () => {
    await flushDoorCounts(env as never, LEDGER_NAME);
    return batches.flatMap((b) => b.counts);
  };
  return { request, calls, counted };
}
const json = async (res: Response) => ({ status: res.status, json: await res.json() });

describe("createApp", () => {
  it("answers /healthz whatever the settings, and every other route 503 while they are bad, telling nothing", async () => {
    const bad = worker({ ...VALID, GITHUB_APP_ID: "one" });
    expect((await bad.request("/healthz")).status).toBe(503);
    const error = "arc-reaper is misconfigured: see the log, or GET /healthz with the admin token";
    for (const [method, path] of [
      ["GET", "/admin/runners"],
      ["GET", "/admin"],
      ["GET", "/metrics"],
      ["GET", "/agent"],
      ["POST", "/admin/pause"],
    ] as const) {
      expect(await json(await bad.request(path, { method, headers: BEARER }))).toEqual({ status: 503, json: { error } });
    }
    expect(logged().find((l) => l.path === "/admin/runners")).toEqual({
      msg: "arc-reaper is misconfigured",
      path: "/admin/runners",
      errors: ["GITHUB_APP_ID must be the App's numeric id"],
    });
    expect(await bad.counted()).toEqual([]);
    expect((await worker().request("/healthz")).status).toBe(200);
  });

  it("counts a webhook answered while misconfigured, by its event", async () => {
    const bad = worker({ ...VALID, GITHUB_APP_ID: "one" });
    const res = await bad.request("/webhook", { method: "POST", body: "{}", headers: { "x-github-event": "workflow_job" } });
    expect(res.status).toBe(503);
    expect(await bad.counted()).toEqual([{ event: "workflow_job", outcome: "misconfigured", n: 1 }]);
  });

  it("refuses a webhook over 1 MiB with 413, counted as too_large, before the settings", async () => {
    const w = worker({ ...VALID, GITHUB_APP_ID: "one" });
    const body = "x".repeat(1024 * 1024 + 1);
    expect(await json(await w.request("/webhook", { method: "POST", body, headers: { "x-github-event": "ping" } }))).toEqual({
      status: 413,
      json: { error: "body is over the 1048576-byte limit" },
    });
    expect(await w.counted()).toEqual([{ event: "ping", outcome: "too_large", n: 1 }]);
    const ok = worker();
    const exact = "x".repeat(1024 * 1024);
    const sig = `sha256=${createHmac("sha256", SECRET).update(exact).digest("hex")}`;
    const res = await ok.request("/webhook", {
      method: "POST",
      body: exact,
      headers: { "x-github-event": "ping", "x-github-delivery": "g", "x-hub-signature-256": sig },
    });
    expect(res.status).toBe(400); // under the limit: read, verified, then refused as not JSON
  });

  it("records a signed delivery", async () => {
    const body = JSON.stringify({ zen: "z", hook_id: 1 });
    const sig = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const res = await worker().request("/webhook", {
      method: "POST",
      body,
      headers: { "x-github-event": "ping", "x-github-delivery": "g", "x-hub-signature-256": sig },
    });
    expect(await json(res)).toEqual({ status: 200, json: { outcome: "ignored", detail: "ping is not something arc-reaper acts on" } });
  });

  it("takes the admin bearer on /admin/runners and /healthz/deep, and METRICS_TOKEN or ADMIN_TOKEN on /metrics", async () => {
    const w = worker();
    expect(await json(await w.request("/admin/runners?state=stuck", { headers: BEARER }))).toEqual({ status: 200, json: { runners: [], nextCursor: null } });
    expect(w.calls).toEqual([["runners", { state: "stuck", repo: undefined, cluster: undefined, limit: undefined, cursor: undefined }]]);
    expect((await w.request("/admin/runners")).status).toBe(401);
    expect((await w.request("/healthz/deep")).status).toBe(401);
    expect((await w.request("/metrics")).status).toBe(401);
    expect((await w.request("/admin/runners", { headers: { authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
  });

  it("answers the runner's story as JSON for the bearer, and the page's gate for ?format=html", async () => {
    const w = worker();
    expect(await json(await w.request("/admin/runners/r-1", { headers: BEARER }))).toEqual({
      status: 404,
      json: { error: "no runner named r-1 in the ledger" },
    });
    expect((await w.request("/admin/runners/r-1")).status).toBe(401);
    const page = await w.request("/admin/runners/r-1?format=html");
    expect(page.status).toBe(401);
    expect(await page.text()).toContain("arc-reaper: log in");
    const bad = await w.request("/admin/runners/R_1?format=html", { headers: BEARER });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("runner name &quot;R_1&quot; is not a Kubernetes object name");
    const none = await w.request("/admin/runners/r-2?format=html", { headers: BEARER });
    expect(none.status).toBe(404);
    expect(await none.text()).toContain("no runner named r-2 in the ledger");
    expect(w.calls).toEqual([
      ["story", "r-1"],
      ["story", "r-2"],
    ]);
  });

  it("answers an unknown path 404 naming it, and an unknown /admin/ path as a page to a browser", async () => {
    const w = worker({ GITHUB_APP_ID: "bad" });
    expect(await json(await w.request("/nope", { method: "PUT" }))).toEqual({ status: 404, json: { error: "no route for PUT /nope" } });
    expect(await json(await w.request("/admin/nope"))).toEqual({ status: 404, json: { error: "no route for GET /admin/nope" } });
    expect(await json(await w.request("/admin/nope", { headers: { accept: "text/html, application/json" } }))).toEqual({
      status: 404,
      json: { error: "no route for GET /admin/nope" },
    });
    const page = await w.request("/admin/nope", { headers: { accept: "text/html" } });
    expect(page.status).toBe(404);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(await page.text()).toContain("Nothing here: no route for GET /admin/nope.");
  });

  it("answers /agent 404 in direct mode", async () => {
    expect((await worker().request("/agent", { headers: BEARER })).status).toBe(404);
  });
});

describe("the admin page's routes", () => {
  it("sends the page's headers: no scripts, the stylesheet by its hash", async () => {
    const hash = createHash("sha256").update(PAGE_CSS).digest("base64");
    expect(await pageHeaders()).toEqual({
      "content-security-policy": `default-src 'none'; style-src 'sha256-${hash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      "cache-control": "no-store",
      "referrer-policy": "same-origin",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
    });
  });

  it("GET /admin without a login is the login form (401); with a bad query an error page (400)", async () => {
    const w = worker();
    const login = await w.request("/admin");
    expect(login.status).toBe(401);
    expect(await login.text()).toContain("arc-reaper: log in");
    const bad = await w.request("/admin?state=idle", { headers: BEARER });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("state must be one of");
  });

  it("GET /admin/login is the form, or /admin when already logged in", async () => {
    const w = worker();
    const form = await w.request("/admin/login");
    expect(form.status).toBe(200);
    expect(await form.text()).toContain("arc-reaper: log in");
    const again = await w.request("/admin/login", { headers: BEARER });
    expect([again.status, again.headers.get("location")]).toEqual([303, "/admin"]);
  });

  const login = (w: ReturnType<typeof worker>, headers: Record<string, string>, body = "token=x") =>
    w.request("/admin/login", {
      method: "POST",
      body,
      headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": "203.0.113.9", ...headers },
    });

  it("POST /admin/login from our own page logs in and goes to /admin", async () => {
    const w = worker();
    const res = await login(w, { origin: ORIGIN }, `token=${ADMIN_TOKEN}`);
    expect([res.status, res.headers.get("location")]).toEqual([303, "/admin"]);
    expect(res.headers.get("set-cookie")).toMatch(/^__Host-arc-reaper-admin=/);
    expect(logged()).toEqual([{ msg: "admin login", client: "203.0.113.9" }]);
  });

  it("POST /admin/login from another site is refused (403), logged", async () => {
    const w = worker();
    const res = await login(w, { origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Refused: Origin &quot;https://evil.example&quot; is not this site&#39;s origin.");
    expect(logged()).toEqual([{ msg: "admin login refused", client: "203.0.113.9", why: 'Origin "https://evil.example" is not this site\'s origin' }]);
  });

  it("POST /admin/login with a wrong token is 401, and a throttled address 429 with Retry-After", async () => {
    const failed = worker(VALID, { login: { kind: "refused", failures: 2 } });
    const res = await login(failed, {});
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("That is not the ADMIN_TOKEN.");
    expect(logged()).toEqual([{ msg: "admin login failed", client: "203.0.113.9", failures: 2 }]);
    lines.length = 0;
    const throttled = worker(VALID, { login: { kind: "throttled", failures: 6, retryAfterSeconds: 40 } });
    const slow = await login(throttled, {});
    expect([slow.status, slow.headers.get("retry-after")]).toEqual([429, "40"]);
    expect(await slow.text()).toContain("Too many failed logins from this address: try again in 40s.");
    expect(logged()).toEqual([{ msg: "admin login throttled", client: "203.0.113.9", failures: 6, retryAfterSeconds: 40 }]);
  });

  it("POST /admin/login over 4 KiB is refused (413) before it is read", async () => {
    const res = await login(worker(), {}, `token=${"x".repeat(4096)}`);
    expect(res.status).toBe(413);
    expect(await res.text()).toContain("The login form is too large.");
  });

  it("POST /admin/logout ends the session and goes to /admin; without our Origin it is refused", async () => {
    const w = worker();
    const id = "B".repeat(43);
    const res = await w.request("/admin/logout", { method: "POST", headers: { origin: ORIGIN, cookie: `__Host-arc-reaper-admin=${id}` } });
    expect([res.status, res.headers.get("location")]).toEqual([303, "/admin"]);
    expect(w.calls).toEqual([["endSession", createHash("sha256").update(id).digest("base64url")]]);
    const refused = await w.request("/admin/logout", { method: "POST", headers: { cookie: `__Host-arc-reaper-admin=${id}` } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("a form post with the session cookie must carry an Origin header");
    expect(w.calls).toHaveLength(1);
  });
});

describe("the pause switch", () => {
  it("pauses and resumes for the bearer, answering JSON", async () => {
    const w = worker();
    expect(await json(await w.request("/admin/pause", { method: "POST", headers: BEARER }))).toEqual({
      status: 200,
      json: { paused: { by: "bearer", since: 5 } },
    });
    expect(await json(await w.request("/admin/resume", { method: "POST", headers: BEARER }))).toEqual({
      status: 200,
      json: { paused: null, wasPaused: true, madeDue: 3 },
    });
    expect(w.calls).toEqual([
      ["pause", "bearer"],
      ["resume", "bearer"],
    ]);
  });

  it("for a session with our Origin, switches and goes back to /admin", async () => {
    const w = worker(VALID, { live: true });
    const cookie = `__Host-arc-reaper-admin=${"C".repeat(43)}`;
    for (const path of ["/admin/pause", "/admin/resume"]) {
      const res = await w.request(path, { method: "POST", headers: { cookie, origin: ORIGIN } });
      expect([res.status, res.headers.get("location")]).toEqual([303, "/admin"]);
    }
    expect(w.calls).toEqual([
      ["pause", "session"],
      ["resume", "session"],
    ]);
  });

  it("refuses without a login (401), a session without our Origin (403 page), a bearer from another site (403 JSON)", async () => {
    const w = worker(VALID, { live: true });
    expect(await json(await w.request("/admin/pause", { method: "POST" }))).toEqual({
      status: 401,
      json: { error: "a valid ADMIN_TOKEN bearer token or admin session is required" },
    });
    const page = await w.request("/admin/pause", { method: "POST", headers: { cookie: `__Host-arc-reaper-admin=${"C".repeat(43)}` } });
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("Refused: a form post with the session cookie must carry an Origin header.");
    expect(await json(await w.request("/admin/resume", { method: "POST", headers: { ...BEARER, origin: "https://evil.example" } }))).toEqual({
      status: 403,
      json: { error: 'Origin "https://evil.example" is not this site\'s origin' },
    });
    expect(w.calls).toEqual([]);
  });
});
