import { beforeEach, describe, expect, it } from "vitest";
import { writeFact } from "../../src/store/kv-facts.ts";
import { writeSweepSummary, type SweepSummary } from "../../src/store/sweep-summary.ts";
import type { Fact } from "../../src/store/facts.ts";
import { ADMIN_TOKEN, call, clearKv, deliver, signedDelivery, testEnv } from "./support/worker.ts";

beforeEach(clearKv);

const REPO = "octo-org/example-workflow";
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const get = (path: string, headers: Record<string, string> = auth) =>
  call(testEnv(), new Request(`https://arc-reaper.test${path}`, { headers }));

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

async function scrape() {
  const res = await get("/metrics");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parse(await res.text());
}

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
const ttl = 600_000;

function closed(runner: string, jobId: number, outcome: "reaped" | "gone", cause?: "job-completed" | "run-completed" | "over-bound"): Fact {
  return { type: "runner-closed", runner, jobId, outcome, at: minutesAgo(1), reason: "test", ...(cause ? { cause } : {}) };
}
function started(runner: string, jobId: number): Fact {
  return { type: "job-started", runner, repo: REPO, runId: jobId * 10, runAttempt: 1, jobId, startedAt: minutesAgo(30), source: "test" };
}

// The fields of a real workflow_job.in_progress payload that arc-reaper reads. Not
// from @octokit/webhooks-examples on purpose: that 4 MB module overflows the
// vitest pool's 1 MiB WebSocket messages when several test files import it at once.
function jobStartedPayload() {
  return {
    action: "in_progress",
    workflow_job: { id: 11, run_id: 110, run_attempt: 1, runner_name: "arc-m-1", runner_group_name: "arc-runners", status: "in_progress", started_at: minutesAgo(2) },
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
    const res = await get("/metrics", headers);
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain("arc_reaper_");
  });

  it("counts runners by state and deletions by cause from the facts", async () => {
    const kv = testEnv().FACTS;
    const facts: Fact[] = [
      started("arc-running-1", 1),
      started("arc-running-2", 2),
      started("arc-finished", 3),
      { type: "job-completed", runner: "arc-finished", repo: REPO, runId: 30, runAttempt: 1, jobId: 3, completedAt: minutesAgo(1), conclusion: "cancelled", source: "test" },
      started("arc-reaped-job", 4),
      closed("arc-reaped-job", 4, "reaped", "job-completed"),
      started("arc-reaped-run-1", 5),
      closed("arc-reaped-run-1", 5, "reaped", "run-completed"),
      started("arc-reaped-run-2", 6),
      closed("arc-reaped-run-2", 6, "reaped", "run-completed"),
      started("arc-gone", 7),
      closed("arc-gone", 7, "gone"),
    ];
    for (const fact of facts) await writeFact(kv, fact, ttl);

    const { samples, types, helps } = await scrape();
    expect(samples.get('arc_reaper_runners{state="running"}')).toBe(2);
    expect(samples.get('arc_reaper_runners{state="finished"}')).toBe(1);
    expect(samples.get('arc_reaper_runners{state="reaped"}')).toBe(3);
    expect(samples.get('arc_reaper_runners{state="gone"}')).toBe(1);
    expect(samples.get('arc_reaper_deletions_total{cause="job-completed"}')).toBe(1);
    expect(samples.get('arc_reaper_deletions_total{cause="run-completed"}')).toBe(2);
    expect(samples.get('arc_reaper_deletions_total{cause="over-bound"}')).toBe(0);
    expect(types.get("arc_reaper_runners")).toBe("gauge");
    expect(helps.get("arc_reaper_deletions_total")).toContain("only what KV still holds");
    expect(helps.get("arc_reaper_webhook_deliveries_total")).toContain("per Workers isolate");
    // No sweep has been recorded: its families are declared but have no samples.
    expect([...samples.keys()].filter((k) => k.startsWith("arc_reaper_last_sweep") || k.startsWith("arc_reaper_github"))).toEqual([]);
    expect(types.get("arc_reaper_last_sweep_timestamp_seconds")).toBe("gauge");
  });

  it("reports the last sweep's summary", async () => {
    const summary: SweepSummary = {
      type: "sweep-summary",
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
      dryRun: false,
    };
    await writeSweepSummary(testEnv().FACTS, summary);
    const { samples } = await scrape();
    expect(samples.get('arc_reaper_last_sweep_errors{kind="cluster"}')).toBe(1);
    expect(samples.get('arc_reaper_last_sweep_errors{kind="github"}')).toBe(0);
    expect(samples.get('arc_reaper_last_sweep_errors{kind="redelivery"}')).toBe(3);
    expect(samples.get("arc_reaper_last_sweep_github_requests")).toBe(7);
    expect(samples.get("arc_reaper_github_rate_limit_remaining")).toBe(4993);
    expect(samples.get("arc_reaper_last_sweep_timestamp_seconds")).toBe(Date.parse("2026-11-20T10:00:00Z") / 1000);
    expect(samples.get("arc_reaper_last_sweep_duration_seconds")).toBe(1.234);
  });

  it("leaves the rate limit out when the last sweep never asked GitHub", async () => {
    await writeSweepSummary(testEnv().FACTS, {
      type: "sweep-summary", at: new Date().toISOString(), durationMs: 5, checked: 0, deleted: 0, kept: 0, waiting: 0, gone: 0,
      errors: { cluster: 0, github: 0, redelivery: 0 }, githubCalls: 0, rateLimitRemaining: null, dryRun: true,
    });
    const { samples } = await scrape();
    expect(samples.get("arc_reaper_last_sweep_github_requests")).toBe(0);
    expect(samples.has("arc_reaper_github_rate_limit_remaining")).toBe(false);
  });

  it("counts webhook deliveries by event and outcome, bucketing unknown events", async () => {
    const env = testEnv();
    const before = (await scrape()).samples;
    const count = (s: Map<string, number>, event: string, outcome: string) =>
      s.get(`arc_reaper_webhook_deliveries_total{event="${event}",outcome="${outcome}"}`) ?? 0;

    const payload = jobStartedPayload();
    expect((await deliver(env, "workflow_job", payload)).status).toBe(202);
    expect((await deliver(env, "workflow_job", payload)).status).toBe(202);
    expect((await call(env, await signedDelivery("workflow_job", payload, { secret: "not-the-secret" }))).status).toBe(401);
    const hostile = await signedDelivery("x\"} evil 1", payload, { secret: "not-the-secret" });
    expect((await call(env, hostile)).status).toBe(401);

    const after = await scrape(); // parse() throws on any line the hostile header could have broken
    expect(count(after.samples, "workflow_job", "recorded") - count(before, "workflow_job", "recorded")).toBe(2);
    expect(count(after.samples, "workflow_job", "rejected") - count(before, "workflow_job", "rejected")).toBe(1);
    expect(count(after.samples, "other", "rejected") - count(before, "other", "rejected")).toBe(1);
    expect(after.types.get("arc_reaper_webhook_deliveries_total")).toBe("counter");
  });
});
