// The ledger's promises: exact-time alarms that cost what they should, at most
// one delete however often an alarm is delivered, memory that survives a fresh
// instance, cost that follows the open runners, history pruned, and redelivery
// that resumes and retries without asking twice in one listing.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { factsFromWebhook } from "../../../src/github/facts-from-webhook.ts";
import { workflowJobPayload, workflowRunPayload } from "../support/payloads.ts";
import { before, INSTALLATION, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners, alarmAt, configureLedger, evictLedger, ledgerOf, ran, report, runAlarm, testEnv } from "../support/worker.ts";
import { NOW, deletes } from "../support/kube-calls.ts";

// Simulated times a day ahead of the clock: the runtime never fires these ledgers' alarms on its own.
type S = Awaited<ReturnType<typeof stack>>;
const runnerCalls = async (s: S) => (await s.github.calls()).filter((c) => c.path !== "/app/hook/deliveries");

describe("the alarm", () => {
  it("reaps a runner on the webhook's word with one read and one delete, and no GitHub call", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-al1", workflowRunId: 1100 });
    await s.jobStarted({ runner: er.metadata.name, runId: 1100, jobId: 11000, startedAt: before(NOW, 900) });
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 1100,
      jobId: 11000,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 300),
      conclusion: "cancelled",
    });
    await s.kube.clearCalls();
    await ledgerOf(s.env).alarmAt(NOW - 1000); // a second before the grace ends: nothing yet
    expect(await s.kube.calls()).toEqual([]);
    await ledgerOf(s.env).alarmAt(NOW);
    expect((await s.kube.calls()).map((c) => `${c.method} ${c.status}`)).toEqual(["GET 200", "DELETE 200"]);
    expect(await s.github.calls()).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped", namespace: NS, uid: er.metadata.uid });
  });

  it("never deletes twice: a retried alarm finds the runner being deleted, even if the first run's record was lost", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-al2", workflowRunId: 1101 });
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 1101,
      jobId: 11010,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 600),
      conclusion: "cancelled",
    });
    await ledgerOf(s.env).alarmAt(NOW);
    expect(await deletes(s)).toHaveLength(1);
    // As if the alarm had died between the DELETE and its write: the row is open and due again.
    await runInDurableObject(ledgerOf(s.env), (_i, state) => {
      state.storage.sql.exec("UPDATE runners SET state = 'finished', due_at = ?, verdict = NULL, verdict_key = NULL", NOW - 1);
    });
    await ledgerOf(s.env).alarmAt(NOW + 1000);
    await ledgerOf(s.env).alarmAt(NOW + 2000);
    expect(await deletes(s)).toHaveLength(1);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "finished", code: "BeingDeleted" });
  });

  it("is kept at the earliest due time of any open runner", async () => {
    const s = await stack();
    await s.jobStarted({ runner: "arc-runners-abcde-runner-al3", runId: 1102, jobId: 11020, startedAt: before(Date.now(), 60) });
    const at = await runInDurableObject(ledgerOf(s.env), (_i, state) => state.storage.getAlarm());
    // Running job, recheck after 3600 s (before the 5-day bound): due at started_at + 3600 s.
    expect(at).toBeGreaterThan(Date.now() + 3_530_000);
    expect(at).toBeLessThan(Date.now() + 3_545_000);
    await s.jobCompleted({
      runner: "arc-runners-abcde-runner-al3",
      runId: 1102,
      jobId: 11020,
      startedAt: before(Date.now(), 60),
      completedAt: new Date(Date.now() + 10_000).toISOString(),
      conclusion: "success",
    });
    const after = await runInDurableObject(ledgerOf(s.env), (_i, state) => state.storage.getAlarm());
    expect(after).toBeGreaterThan(Date.now() + 300_000); // completed_at + 300 s grace, sooner than the recheck
    expect(after).toBeLessThan(Date.now() + 320_000);
  });

  it("is moved only earlier by a delivery: an alarm armed sooner stays, and its pass re-arms at the earliest due time", async () => {
    const s = await stack();
    // A delivery compares its own rows' due times with the armed one (no MIN over every table): an earlier alarm stays.
    const soon = Date.now() + 60_000;
    await runInDurableObject(ledgerOf(s.env), (_i, state) => state.storage.setAlarm(soon));
    await s.jobStarted({ runner: "arc-runners-abcde-runner-al4", runId: 1103, jobId: 11030, startedAt: before(Date.now(), 60) });
    expect(await alarmAt(s.env)).toBe(soon);
    // That alarm finds nothing due and re-arms at the running job's recheck.
    expect(await runAlarm(s.env)).toBe(true);
    const at = await alarmAt(s.env);
    expect(at).toBeGreaterThan(Date.now() + 3_530_000);
    expect(at).toBeLessThan(Date.now() + 3_545_000);
    expect(await deletes(s)).toEqual([]);
  });
});

describe("recording", () => {
  it("writes at most one fact row per delivery and 3 per job; a duplicate writes none", async () => {
    const env = testEnv();
    await configureLedger(env);
    const written: number[] = [];
    const deliveries: [string, Record<string, unknown>][] = [
      [
        "workflow_job",
        workflowJobPayload("in_progress", {
          repo: REPO,
          runner: "arc-runners-abcde-runner-w1",
          runId: 1200,
          jobId: 12000,
          runAttempt: 1,
          startedAt: before(NOW, 600),
        }),
      ],
      [
        "workflow_job",
        workflowJobPayload("completed", {
          repo: REPO,
          runner: "arc-runners-abcde-runner-w1",
          runId: 1200,
          jobId: 12000,
          runAttempt: 1,
          startedAt: before(NOW, 600),
          completedAt: before(NOW, 60),
          conclusion: "success",
        }),
      ],
      ["workflow_run", workflowRunPayload({ repo: REPO, runId: 1200, runAttempt: 1, updatedAt: before(NOW, 50), conclusion: "success" })],
    ];
    for (const [i, [event, payload]] of [...deliveries, ...deliveries].entries()) {
      // The same three deliveries again, with their GUIDs: duplicates.
      const outcome = factsFromWebhook(event, `guid-${i % 3}`, payload);
      if (outcome.kind !== "facts") throw new Error(outcome.kind);
      const receipt = await ledgerOf(env).receive({ event, guid: `guid-${i % 3}`, facts: outcome.facts });
      written.push(receipt.rowsWritten);
    }
    await report(`ledger rows written per delivery (in_progress, completed, run completed, then the same three again): ${written.join(", ")}`);
    // Fact rows: in_progress 1, job completed 1, run completed 1 (its run row) + 1 (the job's row): 3 per job plus one per run.
    // rowsWritten also counts SQLite's index entries and the delivery counter's row; a duplicate writes the counter alone.
    expect(written.slice(3)).toEqual([1, 1, 1]);
    const rows = await runInDurableObject(ledgerOf(env), (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runners").one().n);
    expect(rows).toBe(1);
  });
});

describe("memory that survives a fresh instance", () => {
  it("keeps when a busy runner without facts was first seen: asked 3 minutes later, though every sweep met a new instance", async () => {
    const s = await stack();
    await s.runner({ name: "arc-runners-abcde-runner-m1", workflowRunId: 1300 });
    await s.github.putRun({ repo: REPO, id: 1300, status: "completed", conclusion: "cancelled", updated_at: before(NOW, 86_400) });
    for (const t of [NOW - 180_000, NOW - 120_000, NOW - 60_000]) {
      await evictLedger(s.env);
      await s.sweep(t);
    }
    expect(await runnerCalls(s)).toEqual([]);
    await evictLedger(s.env);
    await s.sweep(NOW);
    expect(await deletes(s)).toHaveLength(1);
    expect((await runnerCalls(s)).map((c) => c.path)).toEqual([
      `/repos/${REPO}/installation`,
      `/app/installations/${INSTALLATION}/access_tokens`,
      `/repos/${REPO}/actions/runs/1300`,
    ]);
  });

  it("keeps the deliveries mark: a fresh instance does not list the deliveries again before REAPER_DELIVERIES_EVERY_SECONDS", async () => {
    const s = await stack();
    for (let k = 0; k < 6; k++) {
      await evictLedger(s.env);
      await s.sweep(NOW + k * 60_000);
    }
    const listings = (await s.github.calls()).filter((c) => c.path === "/app/hook/deliveries");
    expect(listings).toHaveLength(2); // at 0 s and at 300 s
  });

  it("backs off a repository whose installation cannot be found, across instances", async () => {
    const s = await stack();
    await s.kube.seed(
      (await import("../../standins/kube/control.ts")).makeEphemeralRunner({
        namespace: NS,
        scaleSet: "arc-runners",
        name: "arc-runners-abcde-runner-m3",
        workflowRunId: 1302,
        jobRepositoryName: "other-org/not-installed",
        creationTimestamp: before(NOW, 3600),
      }),
    );
    await s.sweep(NOW - 180_000);
    await s.sweep(NOW);
    const lookups = async () => (await s.github.calls()).filter((c) => c.path === "/repos/other-org/not-installed/installation");
    expect((await lookups()).map((c) => c.status)).toEqual([404]);
    for (let k = 1; k <= 20; k++) {
      await evictLedger(s.env);
      await s.sweep(NOW + k * 60_000);
    }
    expect(await lookups()).toHaveLength(1); // not again within the hour
  });
});

describe("cost follows the open runners", () => {
  it("a sweep reads the open rows only, however much history there is, and history is pruned after REAPER_HISTORY_DAYS", async () => {
    const s = await stack({ REAPER_HISTORY_DAYS: "1" });
    await s.runner({ name: "arc-runners-abcde-runner-c0", workflowRunId: 1400 });
    await s.jobStarted({ runner: "arc-runners-abcde-runner-c0", runId: 1400, jobId: 14000, startedAt: before(NOW, 60) });
    const cost = async (t: number) => ran(await ledgerOf(s.env).sweep(t)).cost.rowsRead;
    await cost(NOW);
    const withoutHistory = await cost(NOW + 60_000);
    // 40 runners that left the cluster: closed as gone by one sweep, then history.
    for (let i = 0; i < 40; i++)
      await s.jobStarted({ runner: `arc-runners-abcde-runner-h${i}`, runId: 1401 + i, jobId: 14010 + i, startedAt: before(NOW, 60) });
    await ledgerOf(s.env).sweep(NOW + 120_000);
    expect((await adminRunners(s.env, "?state=gone&limit=100")).runners).toHaveLength(40);
    const withHistory = await cost(NOW + 180_000);
    await report(`sweep rows read: ${withoutHistory} with 1 open runner and no history, ${withHistory} with 40 closed runners`);
    expect(withHistory).toBe(withoutHistory);
    await ledgerOf(s.env).sweep(NOW + 120_000 + 86_400_000 + 3_600_000); // a day and an hour later: pruned
    expect((await adminRunners(s.env, "?state=gone")).runners).toEqual([]);
  });
});

describe("the GitHub budget", () => {
  it("is shared by every alarm and sweep of a minute", async () => {
    const s = await stack({ REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "3", REAPER_MAX_JOB_SECONDS: "3600" });
    for (let i = 0; i < 3; i++) {
      const name = `arc-runners-abcde-runner-gb${i}`;
      await s.runner({ name, workflowRunId: 1500 + i });
      const job = await s.github.putJob({
        repo: REPO,
        run_id: 1500 + i,
        run_attempt: 1,
        status: "in_progress",
        runner_name: name,
        started_at: before(NOW, 7200 + i),
      });
      await s.jobStarted({ runner: name, runId: 1500 + i, jobId: Number(job.id), startedAt: before(NOW, 7200 + i) });
    }
    const minute = Math.floor(NOW / 60_000) * 60_000;
    await ledgerOf(s.env).alarmAt(minute + 1_000); // a token and two job reads: the minute's 3 calls
    expect(await s.github.calls()).toHaveLength(3);
    expect(await deletes(s)).toHaveLength(2);
    await ledgerOf(s.env).alarmAt(minute + 30_000); // same minute: nothing left to ask with
    expect(await s.github.calls()).toHaveLength(3);
    await ledgerOf(s.env).alarmAt(minute + 61_000); // the next minute
    expect(await s.github.calls()).toHaveLength(4);
    expect(await deletes(s)).toHaveLength(3);
  });
});

describe("a verdict meets the facts it was made on", () => {
  it("is not written over a row whose facts changed while it was judged; a close still is", async () => {
    const s = await stack();
    await s.jobStarted({ runner: "arc-runners-abcde-runner-v1", runId: 1600, jobId: 16000, startedAt: before(NOW, 600) });
    const written = await runInDurableObject(ledgerOf(s.env), async (_i, state) => {
      const { Sql } = await import("../../../src/ledger/sql.ts");
      const { RunnersTable } = await import("../../../src/ledger/runners-table.ts");
      const runners = new RunnersTable(new Sql(state.storage.sql));
      const judged = runners.get("arc-runners-abcde-runner-v1", 16000)!;
      const verdict = { ...judged, reason: "judged on the old facts", verdictKey: "keep: judged on the old facts" };
      // A webhook lands meanwhile: the job completed.
      runners.put({ ...judged, state: "finished", jobCompleted: { at: before(NOW, 10), conclusion: "success" } });
      const stale = runners.update(verdict, judged, { closing: false });
      const close = runners.update({ ...verdict, state: "gone" }, { ...judged, state: "finished" }, { closing: true });
      return { stale, close, after: runners.get("arc-runners-abcde-runner-v1", 16000)!.state };
    });
    expect(written).toEqual({ stale: false, close: true, after: "gone" });
  });
});
