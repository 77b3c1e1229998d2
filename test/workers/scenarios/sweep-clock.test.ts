// The sweep's schedule survives a step of the wall clock and an alarm the
// runtime gave up (issue 46). The last sweep's start is wall-clock time: after
// the clock steps back, a start in the future is read as now (and logged once),
// so the next sweep is due a period from now, in the cluster (the ledger's alarm
// drives the sweep) and on Cloudflare (the cron's sweeps are not all skipped).
// An alarm() that keeps throwing is given up by the runtime after its retries:
// the next request that reaches the ledger sets it again, at most once a minute
// per instance. The clock's step and the failing alarm are the test ledger's
// hooks (stepClock, failAlarms), which the randomized fleets use too.
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { before, stack } from "../support/stack.ts";
import { waitFor } from "../support/wait-for.ts";
import { ADMIN_TOKEN, adminRunners, alarmAt, call, configureLedger, evictLedger, ledgerOf, runAlarm } from "../support/worker.ts";
import { withAdmin, type WorkerEnv } from "../../../src/durable/ledger-for.ts";

const DAY = 86_400_000;
const PERIOD = 60_000;
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const IN_THE_CLUSTER = { ARC_REAPER_HOME: "cluster", REAPER_SWEEP_EVERY_SECONDS: "60", REAPER_CLIENT_ADDRESS_HEADER: "X-Forwarded-For" };

afterEach(() => vi.restoreAllMocks());

const sweeps = async (env: WorkerEnv): Promise<number> =>
  (await withAdmin(ledgerOf(env), (admin) => admin.snapshot())).counters.find((c) => c.name === "arc_reaper_sweeps_total")?.value ?? 0;

function logLines(): () => Record<string, unknown>[] {
  const log = vi.spyOn(console, "log");
  return () => log.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
}

describe("the sweep clock after the wall clock steps back", () => {
  it("in the cluster: a start in the future is read as now, so the next sweep is due a period from now, logged once", async () => {
    const s = await stack(IN_THE_CLUSTER);
    await configureLedger(s.env); // the woken ledger starts its sweep clock: the runtime runs the first alarm, which sweeps
    await waitFor("the first sweep", async () => (await sweeps(s.env)) === 1, { timeoutMs: 20_000 });
    await ledgerOf(s.env).idle();

    // The clock steps back a day: the stamp of that sweep, and the alarm set from it, are a day ahead.
    const stepped = await ledgerOf(s.env).stepClock(-DAY);
    expect(stepped.alarm).toBeGreaterThan(Date.now() + DAY);
    await evictLedger(s.env);
    const lines = logLines();
    const asked = Date.now();
    await adminRunners(s.env); // any request that reaches the ledger re-asserts its alarm
    const alarm = await alarmAt(s.env);
    expect(alarm).toBeGreaterThanOrEqual(asked + PERIOD);
    expect(alarm).toBeLessThanOrEqual(Date.now() + PERIOD);

    // The alarm at that time finds the sweep not yet due and keeps it there: never at the old stamp.
    expect(await runAlarm(s.env)).toBe(true);
    expect(await alarmAt(s.env)).toBe(alarm);
    expect(await sweeps(s.env)).toBe(1);
    const future = lines().filter((l) => l.reason === "SweepStampInFuture");
    expect(future).toEqual([expect.objectContaining({ msg: expect.stringMatching(/in the future/), ranAt: new Date(stepped.sweepRanAt!).toISOString() })]);
    expect(lines().filter((l) => l.msg === "alarm re-asserted")).toEqual([
      expect.objectContaining({ reason: "AlarmLate", at: new Date(alarm!).toISOString() }),
    ]);

    // /healthz/deep and /metrics say when the last sweep completed (read as now) and that the ledger's alarm drives it.
    const health = (await (await call(s.env, new Request("https://arc-reaper.test/healthz/deep", { headers: bearer }))).json()) as {
      checks: { name: string; ok: boolean; detail: string }[];
    };
    expect(health.checks.find((c) => c.name === "sweep")).toEqual({
      name: "sweep",
      ok: true,
      detail: expect.stringMatching(
        new RegExp(
          `\\(0 s ago\\); sweeps are driven by the ledger's alarm every 60 s \\(in the cluster; the alarm is set for ${new Date(alarm!).toISOString()}\\)$`,
        ),
      ),
    });
    const metrics = await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: bearer }))).text();
    expect(metrics).toMatch(/^arc_reaper_last_sweep_age_seconds\{home="cluster",driven_by="alarm"\} 0$/m);
    expect(metrics).toMatch(/^arc_reaper_sweep_every_seconds\{home="cluster",driven_by="alarm"\} 60$/m);

    // A period later (the stamp moved back by a period, as time passing would) the alarm sweeps again.
    await ledgerOf(s.env).stepClock(PERIOD);
    expect(await runAlarm(s.env)).toBe(true);
    expect(await sweeps(s.env)).toBe(2);
  });

  it("on Cloudflare: a start in the future skips at most the cron's next sweep, not every sweep until real time passes it", async () => {
    const s = await stack();
    await s.sweep(Date.now());
    expect(await sweeps(s.env)).toBe(1);
    await ledgerOf(s.env).stepClock(-DAY);
    await s.sweep(Date.now()); // read as now: a sweep ran "now", after this one's scheduled time
    await s.sweep(Date.now() + PERIOD); // the next minute's runs
    expect(await sweeps(s.env)).toBe(2);
    const metrics = await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: bearer }))).text();
    expect(metrics).toMatch(/^arc_reaper_sweep_every_seconds\{home="cloudflare",driven_by="cron"\} 60$/m);
    expect(metrics).toMatch(/^arc_reaper_last_sweep_age_seconds\{home="cloudflare",driven_by="cron"\} 0$/m); // completed at its scheduled time, a minute ahead
  });
});

describe("an alarm the runtime gave up", () => {
  it("is set again by the next request that reaches the ledger, at most once a minute per instance", async () => {
    const s = await stack();
    await s.runner({ name: "arc-runners-abcde-clock1", workflowRunId: 700 });
    await s.jobStarted({ runner: "arc-runners-abcde-clock1", runId: 700, jobId: 7001, startedAt: before(Date.now(), 60) });
    const due = await alarmAt(s.env);
    expect(due).not.toBeNull();

    // The alarm throws (a full volume) until the runtime gives up: no alarm is left.
    await ledgerOf(s.env).failAlarms(1);
    await expect(runAlarm(s.env)).rejects.toThrow(/the alarm fails/);
    expect(await alarmAt(s.env)).toBeNull();

    // The instance that took the delivery re-asserted then: a fresh one (a new isolate) takes the next request.
    await evictLedger(s.env);
    const lines = logLines();
    await adminRunners(s.env);
    expect(await alarmAt(s.env)).toBe(due);
    expect(lines().filter((l) => l.msg === "alarm re-asserted")).toEqual([expect.objectContaining({ reason: "AlarmMissing" })]);

    // Given up again within the minute: this instance does not look again (the throttle only saves work) ...
    await runInDurableObject(ledgerOf(s.env), (_i, state) => state.storage.deleteAlarm());
    await adminRunners(s.env);
    expect(await alarmAt(s.env)).toBeNull();
    // ... a fresh instance does, at its first request.
    await evictLedger(s.env);
    await adminRunners(s.env);
    expect(await alarmAt(s.env)).toBe(due);
  });

  it("the failing alarm throws while told to, and the alarm's pass runs again after it", async () => {
    const s = await stack();
    await s.runner({ name: "arc-runners-abcde-clock2", workflowRunId: 701 });
    await s.jobStarted({ runner: "arc-runners-abcde-clock2", runId: 701, jobId: 7002, startedAt: before(Date.now(), 60) });
    await ledgerOf(s.env).failAlarms(2, false);
    expect(await ledgerOf(s.env).alarmAt(Date.now())).toEqual({ failed: "arc-reaper test ledger: the alarm fails (failAlarms; 1 more)" });
    expect(await ledgerOf(s.env).alarmAt(Date.now())).toEqual({ failed: expect.stringMatching(/0 more/) });
    expect(await alarmAt(s.env)).not.toBeNull(); // not given up: the runtime would retry
    expect(await ledgerOf(s.env).alarmAt(Date.now())).toEqual({ ran: true });
  });
});
