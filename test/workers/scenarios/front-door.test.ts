// A quiet front door: requests that fail before the signature is checked never
// wait on the ledger (counted in the isolate, sent at most every 10 s), floods
// are shed per client address before any work, and bearer tokens on every
// route share the login's throttle.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { flushDoorCounts } from "../../../src/http/door-tally.ts";
import type { Ledger } from "../../../src/durable/ledger.ts";
import { agentEnv, dial } from "../support/fake-agent.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { ADMIN_TOKEN, call, configureLedger, ledgerOf, report, signedDelivery, testEnv } from "../support/worker.ts";

const REPO = "octo-org/example-workflow";
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

/** Rows the ledger's instance wrote so far (its SQL cost counter). */
const rowsWritten = (env: WorkerEnv) =>
  runInDurableObject(ledgerOf(env), (instance: Ledger) => (instance as unknown as { sql: { cost: { rowsWritten: number } } }).sql.cost.rowsWritten);

const unsigned = (from: string, i: number) =>
  new Request("https://arc-reaper.test/webhook", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "workflow_job",
      "x-github-delivery": `flood-${i}`,
      "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
      "cf-connecting-ip": from,
    },
    body: JSON.stringify({ action: "completed", n: i }),
  });

const started = (i: number) =>
  workflowJobPayload("in_progress", {
    runner: `arc-runners-abcde-flood-${i}`,
    jobId: 70_000 + i,
    runId: 7_000 + i,
    runAttempt: 1,
    repo: REPO,
    startedAt: minutesAgo(5),
    installationId: 42,
  });

async function counted(env: WorkerEnv, outcome: string): Promise<number> {
  await flushDoorCounts(env, String(env.LEDGER_NAME));
  return runInDurableObject(
    ledgerOf(env),
    (_i, state) =>
      state.storage.sql
        .exec<{ n: number }>(
          "SELECT COALESCE(SUM(value), 0) AS n FROM counters WHERE name = 'arc_reaper_webhook_deliveries_total' AND labels LIKE ?",
          `%"outcome":"${outcome}"%`,
        )
        .one().n,
  );
}

/** The limiter counts in 10 s windows on the wall clock: wait for the start of one when too little of this one is left for a flood. */
async function earlyInWindow(): Promise<void> {
  const into = Date.now() % 10_000;
  if (into > 2_000) await new Promise((r) => setTimeout(r, 10_000 - into));
}

async function pool<T>(n: number, width: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await run(i);
      }
    }),
  );
  return out;
}

describe("the front door", () => {
  it("a rejected delivery never reaches the ledger on its own: counted in the isolate, flushed in one batch", async () => {
    const env = testEnv();
    await configureLedger(env);
    await flushDoorCounts(env, String(env.LEDGER_NAME));
    await rowsWritten(env); // the instance exists before we count
    const before = await rowsWritten(env);
    // One flush at most every 10 s: the first request of an isolate may send at once, the rest wait.
    for (let i = 0; i < 50; i++) expect((await call(env, unsigned("198.51.100.1", i))).status).toBe(401);
    const during = (await rowsWritten(env)) - before;
    expect(during).toBeLessThanOrEqual(2);
    expect(await counted(env, "rejected")).toBe(50);
  });

  it("flood: 2,000 unsigned requests at 32 connections while real deliveries flow; every real one recorded, the flood shed or counted without row writes", async () => {
    const env = testEnv();
    await configureLedger(env);
    const REAL = 40;
    // What the real deliveries alone write, measured on a ledger of their own.
    const alone = testEnv();
    await configureLedger(alone);
    const aloneBefore = await rowsWritten(alone);
    for (let i = 0; i < REAL; i++) expect((await call(alone, await signedDelivery("workflow_job", started(i)))).status).toBe(202);
    const realWrites = (await rowsWritten(alone)) - aloneBefore;

    const before = await rowsWritten(env);
    const started0 = Date.now();
    const [flood, real] = await Promise.all([
      pool(2000, 32, async (i) => (await call(env, unsigned("203.0.113.9", i))).status),
      pool(REAL, 2, async (i) => {
        const request = await signedDelivery("workflow_job", started(i));
        request.headers.set("cf-connecting-ip", `140.82.115.${(i % 8) + 1}`);
        return (await call(env, request)).status;
      }),
    ]);
    const seconds = (Date.now() - started0) / 1000;
    await flushDoorCounts(env, String(env.LEDGER_NAME));
    const floodWrites = (await rowsWritten(env)) - before - realWrites;
    expect(real.every((s) => s === 202)).toBe(true);
    const recorded = await runInDurableObject(ledgerOf(env), (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runners").one().n);
    expect(recorded).toBe(REAL);
    const shed = flood.filter((s) => s === 429).length;
    const rejected = flood.filter((s) => s === 401).length;
    expect(shed + rejected).toBe(2000);
    expect(shed).toBeGreaterThan(0); // the per-address limit (600 per 10 s) cut the flood
    expect(await counted(env, "rejected")).toBe(rejected);
    expect(await counted(env, "shed")).toBe(shed);
    // The flush writes a counter row per (event, outcome), not a row per request.
    expect(floodWrites).toBeLessThanOrEqual(6);
    await report(
      `flood: 2000 unsigned at 32 connections + ${REAL} real deliveries in ${seconds.toFixed(1)} s: ${rejected} rejected (401), ${shed} shed (429), ${recorded}/${REAL} real recorded; ledger rows written for the flood: ${floodWrites} (${(floodWrites / 2000).toFixed(4)} per rejected request)`,
    );
  });

  it("sheds a flood from one address before any work; other addresses and requests without an address go on", async () => {
    const env = testEnv();
    await configureLedger(env);
    await earlyInWindow();
    const statuses = await pool(700, 16, async (i) => (await call(env, unsigned("192.0.2.77", i))).status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(100);
    const shed = await call(env, unsigned("192.0.2.77", 9999));
    expect(shed.status).toBe(429);
    expect(shed.headers.get("retry-after")).toBe("10");
    expect((await call(env, unsigned("192.0.2.78", 1))).status).toBe(401);
    // Loopback is never a stranger behind Cloudflare: wrangler dev and the bench send from it.
    const local = await pool(700, 16, async (i) => (await call(env, unsigned("127.0.0.1", i))).status);
    expect(local.filter((s) => s === 429)).toEqual([]);
  });
});

describe("GET /agent at the front door", () => {
  const refusals = (env: WorkerEnv) =>
    runInDurableObject(
      ledgerOf(env),
      (_i, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COALESCE(SUM(value), 0) AS n FROM counters WHERE name = 'arc_reaper_agent_refusals_total'").one().n,
    );

  it("650 GET /agent without a token from one address: 429 once past the limit, refusals counted in the isolate (a handful of ledger rows, not one per refusal)", async () => {
    const env = agentEnv();
    await configureLedger(env);
    await flushDoorCounts(env, String(env.LEDGER_NAME));
    await rowsWritten(env);
    await earlyInWindow(); // so that all 650 fall in one of the limiter's windows
    const before = await rowsWritten(env);
    const started = Date.now();
    const statuses = await pool(650, 16, async () => (await dial(env, { upgrade: "websocket", "cf-connecting-ip": "198.51.100.66" })).status);
    const ended = Date.now();
    const seconds = (ended - started) / 1000;
    const during = (await rowsWritten(env)) - before;
    const refused = statuses.filter((s) => s === 401).length;
    const shed = statuses.filter((s) => s === 429).length;
    expect(refused + shed).toBe(650);
    // FRONT_DOOR admits 600 per 10 s window per address; the rest are shed before the token is looked at.
    // On a loaded machine the flood may outlast its window: the next window admits up to 600 more.
    const windows = Math.floor(ended / 10_000) - Math.floor(started / 10_000) + 1;
    if (windows === 1) {
      expect(refused).toBe(600);
      expect(shed).toBe(50);
    } else {
      expect(refused).toBeGreaterThanOrEqual(600);
      expect(refused).toBeLessThanOrEqual(Math.min(650, 600 * windows));
    }
    await flushDoorCounts(env, String(env.LEDGER_NAME));
    const written = (await rowsWritten(env)) - before;
    expect(during).toBeLessThanOrEqual(2);
    expect(written).toBeLessThanOrEqual(4);
    expect(await refusals(env)).toBe(refused);
    const metrics = await (await call(env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text();
    expect(metrics).toContain(`arc_reaper_agent_refusals_total{cluster="default"} ${refused}`);
    // Loopback is exempt, as for /webhook.
    const local = await pool(650, 16, async () => (await dial(env, { upgrade: "websocket", "cf-connecting-ip": "127.0.0.1" })).status);
    expect(local.filter((s) => s === 429)).toEqual([]);
    await report(
      `agent flood: 650 GET /agent without a token from one address in ${seconds.toFixed(1)} s: ${refused} refused (401), ${shed} shed (429); ledger rows written: ${during} during, ${written} after the flush; arc_reaper_agent_refusals_total ${refused}`,
    );
  });
});

describe("bearer tokens share the login's throttle", () => {
  const get = (env: WorkerEnv, path: string, token: string, ip = "198.51.100.23") =>
    call(env, new Request(`https://arc-reaper.test${path}`, { headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": ip } }));

  it.each(["/admin/runners", "/admin", "/metrics", "/healthz/deep"])(
    "wrong bearers on %s count as failed logins: the sixth is 429, even with the right token",
    async (path) => {
      const env = testEnv();
      for (let i = 0; i < 5; i++) expect((await get(env, path, `wrong-token-${i}-0123456789abcdef`)).status).toBe(401);
      const throttled = await get(env, path, ADMIN_TOKEN);
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
      // Another address is not held back.
      expect((await get(env, "/admin/runners", ADMIN_TOKEN, "198.51.100.24")).status).toBe(200);
    },
  );

  it("failed bearers and failed logins add up", async () => {
    const env = testEnv();
    for (let i = 0; i < 3; i++) expect((await get(env, "/metrics", `wrong-token-${i}-0123456789abcdef`)).status).toBe(401);
    for (let i = 0; i < 2; i++) {
      const res = await call(
        env,
        new Request("https://arc-reaper.test/admin/login", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://arc-reaper.test", "cf-connecting-ip": "198.51.100.23" },
          body: "token=wrong-token-wrong-token",
        }),
      );
      expect(res.status).toBe(401);
    }
    expect((await get(env, "/admin/runners", ADMIN_TOKEN)).status).toBe(429);
  });
});

describe("bench-only routes", () => {
  // They live in the test entry (test/hooks/entry.ts), never in the production Worker.
  it.each(["/test/ledger-receive", "/test/ledger-loop?count=1", "/test/seed-history?from=1&count=1"])("the production Worker has no %s: 404", async (path) => {
    const env = testEnv();
    const res = await call(env, new Request(`https://arc-reaper.test${path}`, { method: "POST", body: "{}" }));
    expect(res.status).toBe(404);
  });
});
