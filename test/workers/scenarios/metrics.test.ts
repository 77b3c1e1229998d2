import { describe, expect, it } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import type { LedgerSnapshot } from "../../../src/ledger/queries.ts";
import { RUNNER_STATES } from "../../../src/model/runner.ts";
import { arcReaperFamilies } from "../../../src/metrics/arc-reaper-metrics.ts";
import { METRIC_NAMES } from "../../../src/metrics/metric-names.ts";
import { closeBySweep, lastSweep, writeLastSweep } from "../support/seed.ts";
import { stack } from "../support/stack.ts";
import { ADMIN_TOKEN, call, deliver, evictLedger, signedDelivery, testEnv } from "../support/worker.ts";
import { NOW } from "../support/kube-calls.ts";

const REPO = "octo-org/example-workflow";
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
// Sweeps run a day ahead of the clock, so that no alarm of the ledger (which
// fires on the real clock) is due while a test runs; see sweep.test.ts.
const get = (env: WorkerEnv, path: string, headers: Record<string, string> = auth) => call(env, new Request(`https://arc-reaper.test${path}`, { headers }));

/** Parses the text format strictly enough to catch a malformed line. */
function parse(text: string): { samples: Map<string, number>; types: Map<string, string>; helps: Map<string, string> } {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  const helps = new Map<string, string>();
  expect(text.endsWith("\n")).toBe(true);
  for (const line of text.slice(0, -1).split("\n")) {
    const help = /^# HELP ([a-z_]+) (.+)$/.exec(line);
    const type = /^# TYPE ([a-z_]+) (counter|gauge)$/.exec(line);
    const sample = /^([a-z_]+(?:\{(?:[a-z_]+="(?:[^"\\\n]|\\["\\n])*",?)*\})?) (-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|NaN)$/.exec(line);
    if (help) helps.set(help[1]!, help[2]!);
    else if (type) types.set(type[1]!, type[2]!);
    else if (sample) samples.set(sample[1]!, Number(sample[2]));
    else throw new Error(`not a Prometheus text line: ${JSON.stringify(line)}`);
  }
  return { samples, types, helps };
}

async function scrape(env: WorkerEnv, headers: Record<string, string> = auth) {
  const res = await get(env, "/metrics", headers);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parse(await res.text());
}

const deliveries = (s: Map<string, number>, event: string, outcome: string) =>
  s.get(`arc_reaper_webhook_deliveries_total{event="${event}",outcome="${outcome}"}`) ?? 0;

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

// The fields of a real workflow_job.in_progress payload that arc-reaper reads.
function jobStartedPayload() {
  return {
    action: "in_progress",
    workflow_job: {
      id: 11,
      run_id: 110,
      run_attempt: 1,
      runner_name: "arc-m-1",
      runner_group_name: "arc-runners",
      status: "in_progress",
      started_at: minutesAgo(2),
    },
    repository: { full_name: REPO },
    installation: { id: 42 },
  };
}

describe("GET /metrics", () => {
  it.each([
    ["no token", {}],
    ["a wrong token", { authorization: "Bearer wrong-token-wrong-token" }],
    ["the token as a cookie-less Basic header", { authorization: `Basic ${ADMIN_TOKEN}` }],
  ])("answers 401 with %s", async (_what, headers) => {
    const res = await get(testEnv(), "/metrics", headers);
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain("arc_reaper_");
  });

  it("takes METRICS_TOKEN when it is set, and then not ADMIN_TOKEN (which still opens the admin views)", async () => {
    const METRICS_TOKEN = "test-metrics-token-0123456789abcdef";
    const env = testEnv({ METRICS_TOKEN });
    await scrape(env, { authorization: `Bearer ${METRICS_TOKEN}` });
    const admin = await get(env, "/metrics", auth);
    expect(admin.status).toBe(401);
    expect(await admin.json()).toEqual({ error: "a valid METRICS_TOKEN (or ADMIN_TOKEN when METRICS_TOKEN is unset) bearer token is required" });
    expect((await get(env, "/admin/runners", { authorization: `Bearer ${METRICS_TOKEN}` })).status).toBe(401);
    expect((await get(env, "/admin/runners", auth)).status).toBe(200);
  });

  it("exposes exactly the families of METRIC_NAMES (all but the agent families in direct mode), each with HELP and TYPE", async () => {
    const { samples, types, helps } = await scrape(testEnv());
    const expected = METRIC_NAMES.filter((n) => !n.startsWith("arc_reaper_agent_")).sort();
    expect([...types.keys()].sort()).toEqual(expected);
    expect([...helps.keys()].sort()).toEqual(expected);
    for (const key of samples.keys()) expect(expected).toContain(key.replace(/\{.*$/, ""));
  });

  it("a fresh ledger: counters at zero, runner gauges at zero, no sweep figures", async () => {
    const { samples, types, helps } = await scrape(testEnv());
    for (const state of ["running", "finished", "reaped", "gone"]) expect(samples.get(`arc_reaper_runners{state="${state}"}`)).toBe(0);
    for (const cause of ["job-completed", "run-completed", "over-bound"]) expect(samples.get(`arc_reaper_deletions_total{cause="${cause}"}`)).toBe(0);
    for (const kind of ["cluster", "github", "redelivery", "agent"]) expect(samples.get(`arc_reaper_errors_total{kind="${kind}"}`)).toBe(0);
    for (const name of ["arc_reaper_sweeps_total", "arc_reaper_alarms_total", "arc_reaper_deletions_held_back_total", "arc_reaper_paused"])
      expect(samples.get(name)).toBe(0);
    // No sweep has been recorded: its families are declared but have no samples.
    expect([...samples.keys()].filter((k) => k.startsWith("arc_reaper_last_sweep") || k.startsWith("arc_reaper_github"))).toEqual([]);
    expect(types.get("arc_reaper_last_sweep_timestamp_seconds")).toBe("gauge");
    expect(types.get("arc_reaper_runners")).toBe("gauge");
    expect(types.get("arc_reaper_deletions_total")).toBe("counter");
    expect(helps.get("arc_reaper_webhook_deliveries_total")).toContain("counted in the ledger");
    expect(helps.get("arc_reaper_runners")).toContain("REAPER_HISTORY_DAYS");
  });

  it("counts runners by state and deletions by cause from what a real sweep did", async () => {
    const s = await stack();
    await closeBySweep(s, NOW, [
      { name: "arc-reaped-job", runId: 40, jobId: 4, by: "job-completed" },
      { name: "arc-reaped-run-1", runId: 50, jobId: 5, by: "run-completed" },
      { name: "arc-reaped-run-2", runId: 60, jobId: 6, by: "run-completed" },
      { name: "arc-gone", runId: 70, jobId: 7, by: "gone" },
    ]);
    // Open runners after the sweep, on the real clock: nothing of theirs is due during the test.
    for (const [runner, id] of [
      ["arc-running-1", 1],
      ["arc-running-2", 2],
    ] as const) {
      expect((await s.jobStarted({ runner, runId: id * 10, jobId: id, startedAt: minutesAgo(30) })).status).toBe(202);
    }
    expect(
      (await s.jobCompleted({ runner: "arc-finished", runId: 30, jobId: 3, startedAt: minutesAgo(30), completedAt: minutesAgo(1), conclusion: "cancelled" }))
        .status,
    ).toBe(202);

    const { samples } = await scrape(s.env);
    expect(samples.get('arc_reaper_runners{state="running"}')).toBe(2);
    expect(samples.get('arc_reaper_runners{state="finished"}')).toBe(1);
    expect(samples.get('arc_reaper_runners{state="reaped"}')).toBe(3);
    expect(samples.get('arc_reaper_runners{state="gone"}')).toBe(1);
    expect(samples.get('arc_reaper_deletions_total{cause="job-completed"}')).toBe(1);
    expect(samples.get('arc_reaper_deletions_total{cause="run-completed"}')).toBe(2);
    expect(samples.get('arc_reaper_deletions_total{cause="over-bound"}')).toBe(0);
    expect(samples.get("arc_reaper_sweeps_total")).toBe(1);
    expect(samples.get("arc_reaper_deletions_held_back_total")).toBe(0);
    expect(samples.get('arc_reaper_errors_total{kind="cluster"}')).toBe(0);
    expect(samples.get("arc_reaper_last_sweep_timestamp_seconds")).toBe(NOW / 1000);
    expect(samples.get('arc_reaper_last_sweep_errors{kind="cluster"}')).toBe(0);
    // Every delivery of the seeding, counted in the ledger: 4 job facts before the sweep, 3 after; 2 run completions.
    expect(deliveries(samples, "workflow_job", "recorded")).toBe(7);
    expect(deliveries(samples, "workflow_run", "recorded")).toBe(2);
  });

  it("reports the last sweep's summary", async () => {
    const env = testEnv();
    await writeLastSweep(
      env,
      lastSweep({
        at: "2026-11-20T10:00:00.000Z",
        durationMs: 1234,
        checked: 9,
        deleted: 2,
        kept: 5,
        waiting: 1,
        gone: 1,
        errors: { cluster: 1, github: 0, redelivery: 3 },
        githubCalls: 7,
        rateLimitRemaining: 4993,
        rateLimitLimit: 5000,
      }),
    );
    const { samples } = await scrape(env);
    expect(samples.get('arc_reaper_last_sweep_errors{kind="cluster"}')).toBe(1);
    expect(samples.get('arc_reaper_last_sweep_errors{kind="github"}')).toBe(0);
    expect(samples.get('arc_reaper_last_sweep_errors{kind="redelivery"}')).toBe(3);
    expect(samples.get("arc_reaper_last_sweep_github_requests")).toBe(7);
    expect(samples.get("arc_reaper_github_rate_limit_remaining")).toBe(4993);
    expect(samples.get("arc_reaper_github_rate_limit_limit")).toBe(5000);
    expect(samples.get("arc_reaper_last_sweep_timestamp_seconds")).toBe(Date.parse("2026-11-20T10:00:00Z") / 1000);
    expect(samples.get("arc_reaper_last_sweep_duration_seconds")).toBe(1.234);
  });

  it("leaves the rate limit out when the last sweep never asked GitHub", async () => {
    const env = testEnv();
    await writeLastSweep(env, lastSweep({ githubCalls: 0, rateLimitRemaining: null, rateLimitLimit: null, dryRun: true }));
    const { samples } = await scrape(env);
    expect(samples.get("arc_reaper_last_sweep_github_requests")).toBe(0);
    expect(samples.has("arc_reaper_github_rate_limit_remaining")).toBe(false);
    expect(samples.has("arc_reaper_github_rate_limit_limit")).toBe(false);
  });
});

describe("GET /metrics: webhook deliveries", () => {
  it("counts deliveries by event and outcome in the ledger, bucketing unknown events, and keeps them when the ledger is evicted", async () => {
    const env = testEnv();
    const before = (await scrape(env)).samples;
    expect(deliveries(before, "workflow_job", "recorded")).toBe(0);

    const payload = jobStartedPayload();
    expect((await deliver(env, "workflow_job", payload)).status).toBe(202);
    expect((await deliver(env, "workflow_job", payload)).status).toBe(202);
    expect((await deliver(env, "workflow_job", { action: "queued" })).status).toBe(200);
    expect((await deliver(env, "workflow_job", { action: "in_progress" })).status).toBe(400);
    expect((await call(env, await signedDelivery("workflow_job", payload, { secret: "not-the-secret" }))).status).toBe(401);
    const hostile = await signedDelivery('x"} evil 1', payload, { secret: "not-the-secret" });
    expect((await call(env, hostile)).status).toBe(401);

    // Another isolate: a fresh env object (so fresh settings) and a fresh ledger instance over the same storage.
    await evictLedger(env);
    const other = testEnv({ LEDGER_NAME: String(env.LEDGER_NAME) });
    const after = await scrape(other); // parse() throws on any line the hostile header could have broken
    expect(deliveries(after.samples, "workflow_job", "recorded")).toBe(2);
    expect(deliveries(after.samples, "workflow_job", "ignored")).toBe(1);
    expect(deliveries(after.samples, "workflow_job", "invalid")).toBe(1);
    expect(deliveries(after.samples, "workflow_job", "rejected")).toBe(1);
    expect(deliveries(after.samples, "other", "rejected")).toBe(1);
    expect([...after.samples.keys()].filter((k) => k.includes("evil"))).toEqual([]);
    expect(after.types.get("arc_reaper_webhook_deliveries_total")).toBe("counter");
  });

  it("counts a delivery answered 413 as too_large", async () => {
    const env = testEnv();
    const big = await signedDelivery("workflow_run", null, { body: JSON.stringify({ padding: "x".repeat(1024 * 1024) }) });
    const res = await call(env, big);
    expect(res.status).toBe(413);
    const hostile = await signedDelivery('x"} evil 1', null, { body: "y".repeat(1024 * 1024 + 1) });
    expect((await call(env, hostile)).status).toBe(413);
    const { samples } = await scrape(env);
    expect(deliveries(samples, "workflow_run", "too_large")).toBe(1);
    expect(deliveries(samples, "other", "too_large")).toBe(1);
  });

  it("counts a delivery answered 503 as misconfigured, in the ledger LEDGER_NAME names", async () => {
    const broken = testEnv({ KUBE_TOKEN: undefined });
    const res = await deliver(broken, "workflow_job", jobStartedPayload());
    expect(res.status).toBe(503);
    // /metrics itself needs valid settings: read the same ledger through a well-configured env.
    expect((await get(broken, "/metrics")).status).toBe(503);
    const { samples } = await scrape(testEnv({ LEDGER_NAME: String(broken.LEDGER_NAME) }));
    expect(deliveries(samples, "workflow_job", "misconfigured")).toBe(1);
    expect(deliveries(samples, "workflow_job", "recorded")).toBe(0);
  });
});

describe("arc_reaper_stuck_deletions", () => {
  const snapshot = (stuck?: number): LedgerSnapshot => ({
    runners: Object.fromEntries(RUNNER_STATES.map((s) => [s, 0])) as LedgerSnapshot["runners"],
    counters: [],
    lastSweep: null,
    paused: null,
    alarmAt: null,
    ...(stuck === undefined ? {} : { stuckDeletions: stuck }),
  });
  const family = (stuck?: number) => arcReaperFamilies({ snapshot: snapshot(stuck), agents: null }).find((f) => f.name === "arc_reaper_stuck_deletions");

  it("is a gauge of the ledger's count of stuck deletions, and has no sample while the ledger gives none", () => {
    expect(family(3)).toMatchObject({ type: "gauge", samples: [{ value: 3 }] });
    expect(family(0)?.samples).toEqual([{ value: 0 }]);
    expect(family()?.samples).toEqual([]);
  });
});
