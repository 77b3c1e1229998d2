// Identity end to end (issue 10, hazard 2): facts about a job condemn only the
// runner object that took it. ARC reuses names (<scale set>-<5 characters>), so
// a new object can carry a name that still has open facts, or one whose row has
// closed: neither is deleted on the old job's word, and each is judged on its own.
import { describe, expect, it } from "vitest";
import { SETTLE_MS as RECONCILE_SETTLE_MS } from "../../../src/model/policy.ts";
import { before, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners, settleAlarms } from "../support/worker.ts";
import { NOW, deletes } from "../support/kube-calls.ts";

// The sweeps run on the cron's time, a day ahead of the clock: no ledger alarm fires meanwhile.
type S = Awaited<ReturnType<typeof stack>>;
const runnerCalls = async (s: S) => (await s.github.calls()).filter((c) => c.path !== "/app/hook/deliveries").map((c) => `${c.method} ${c.path}`);
/** A creationTimestamp as the API server writes it (seconds). */
const created = (now: number, seconds: number) => before(now, seconds).replace(/\.\d{3}Z$/, "Z");
const rows = async (s: S, name: string) => (await adminRunners(s.env)).runners.filter((r) => r.name === name);

describe("identity: a name reused while its facts are open", () => {
  it("a new idle runner created after the job started is not deleted; the old facts close as gone", async () => {
    const s = await stack();
    const name = "arc-runners-abcde-runner-i1";
    await s.jobCompleted({ runner: name, runId: 930, jobId: 9300, startedAt: before(NOW, 1200), completedAt: before(NOW, 600), conclusion: "cancelled" });
    // The job's runner vanished before any sweep saw it; ARC made a new one of the same name, idle.
    const fresh = await s.runner({ name, createdAt: created(NOW, 300) });
    await s.sweep(NOW);
    await s.sweep(NOW + 60_000);
    expect(await deletes(s)).toEqual([]);
    expect((await s.kube.get(NS, name))?.metadata.uid).toBe(fresh.metadata.uid);
    expect(await rows(s, name)).toEqual([
      expect.objectContaining({
        state: "gone",
        code: "Replaced",
      }),
    ]);
    expect(await runnerCalls(s)).toEqual([]); // idle: nothing to ask
  });

  it("a new runner busy in the same run is not deleted on the old job's facts: judged on its own, asked about after the settle wait", async () => {
    const s = await stack();
    const name = "arc-runners-abcde-runner-i2";
    // The old job (a matrix job of run 931) ran on the first runner of this name and completed.
    await s.github.putJob({
      repo: REPO,
      id: 9310,
      run_id: 931,
      status: "completed",
      conclusion: "success",
      runner_name: name,
      started_at: before(NOW, 1200),
      completed_at: before(NOW, 600),
    });
    await s.jobCompleted({ runner: name, runId: 931, jobId: 9310, startedAt: before(NOW, 1200), completedAt: before(NOW, 600), conclusion: "success" });
    // Another job of the same run now runs on a new runner with the same name; its webhook is lost.
    const other = await s.github.putJob({ repo: REPO, run_id: 931, status: "in_progress", runner_name: name, started_at: before(NOW, 280) });
    await s.runner({ name, workflowRunId: 931, createdAt: created(NOW, 300) });

    await s.sweep(NOW);
    expect(await deletes(s)).toEqual([]);
    expect(await rows(s, name)).toEqual([expect.objectContaining({ state: "gone" })]);
    expect(await runnerCalls(s)).toEqual([]); // waiting for its own webhook first

    await s.sweep(NOW + RECONCILE_SETTLE_MS);
    expect(await deletes(s)).toEqual([]);
    expect(await runnerCalls(s)).toContain(`GET /repos/${REPO}/actions/runs/931`);
    // What GitHub said became the new runner's own facts: its running job, not the old one.
    expect(await rows(s, name)).toEqual(
      expect.arrayContaining([expect.objectContaining({ state: "gone", jobId: 9310 }), expect.objectContaining({ state: "running", jobId: Number(other.id) })]),
    );

    // When its own job completes (learned from GitHub), it is reaped on that word.
    await s.jobCompleted({
      runner: name,
      runId: 931,
      jobId: Number(other.id),
      startedAt: before(NOW, 280),
      completedAt: before(NOW, 200),
      conclusion: "success",
    });
    await s.sweep(NOW + RECONCILE_SETTLE_MS + 120_000);
    expect((await deletes(s)).map((c) => c.status)).toEqual([200]);
  });

  it("a runner whose uid differs from the one recorded busy on the job's run is not deleted; the old facts close as gone", async () => {
    const s = await stack();
    const name = "arc-runners-abcde-runner-i3";
    const first = await s.runner({ name, workflowRunId: 932 });
    await s.jobStarted({ runner: name, runId: 932, jobId: 9320, startedAt: before(NOW, 1200) });
    await s.sweep(NOW); // sees it busy on run 932: the ledger records its uid
    // It left the cluster unseen, and a new object of the same name took another job of run 932
    // (its creationTimestamp within the skew: only the uid tells them apart).
    await s.kube.remove(NS, name);
    const second = await s.runner({ name, workflowRunId: 932 });
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    await s.jobCompleted({ runner: name, runId: 932, jobId: 9320, startedAt: before(NOW, 1200), completedAt: before(NOW, 10), conclusion: "cancelled" });

    await s.sweep(NOW + 400_000); // the old job's grace is over
    expect(await deletes(s)).toEqual([]);
    expect((await s.kube.get(NS, name))?.metadata.deletionTimestamp).toBeUndefined();
    expect(await rows(s, name)).toEqual([
      expect.objectContaining({
        state: "gone",
        code: "Replaced",
        uid: first.metadata.uid, // the job's runner: not the cluster's object of the name
      }),
    ]);
  });
});

describe("identity: a name reused after its row closed", () => {
  it("is reconciled on its own: asked about and reaped on its own run's completion", async () => {
    const s = await stack();
    const name = "arc-runners-abcde-runner-i4";
    // The first runner of this name: busy on run 940, no webhook, the run long over. Learned from GitHub and reaped.
    await s.runner({ name, workflowRunId: 940 });
    await s.github.putRun({ repo: REPO, id: 940, status: "completed", conclusion: "cancelled", updated_at: before(NOW, 3600) });
    await s.sweep(NOW - RECONCILE_SETTLE_MS);
    await s.sweep(NOW);
    expect((await deletes(s)).map((c) => c.status)).toEqual([200]);
    await s.kube.finalize();
    expect(await s.kube.get(NS, name)).toBeUndefined();
    expect(await rows(s, name)).toEqual([expect.objectContaining({ state: "reaped" })]);

    // ARC later creates a new runner with the same name, busy on run 941; its webhooks are lost and the run ends.
    const t = NOW + 3600_000;
    const second = await s.runner({ name, workflowRunId: 941, createdAt: created(t, 900) });
    await s.github.putRun({ repo: REPO, id: 941, status: "completed", conclusion: "failure", updated_at: before(t, 600) });
    await s.github.clearCalls();
    await s.kube.clearCalls();
    await s.sweep(t - RECONCILE_SETTLE_MS);
    expect(await runnerCalls(s)).toEqual([]);
    await s.sweep(t);
    expect(await runnerCalls(s)).toContain(`GET /repos/${REPO}/actions/runs/941`);
    expect((await deletes(s)).map((c) => c.status)).toEqual([200]);
    expect((await s.kube.get(NS, name))?.metadata.uid).toBe(second.metadata.uid);
    expect((await s.kube.get(NS, name))?.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(await rows(s, name)).toEqual([expect.objectContaining({ state: "reaped", code: "RunCompleted", cause: "run-completed" })]);
  });
});

describe("identity: an object that carries no run is never the facts' runner (issue 22)", () => {
  it("the job's runner in the other namespace, never seen by a sweep, removed by ARC: the idle object of its name is not deleted", async () => {
    const OTHER = "other-runners";
    const s = await stack({ REAPER_NAMESPACES: `${NS},${OTHER}` });
    const name = "arc-runners-twin9-runner-id";
    const now = Date.now();
    // An idle object of the name in NS, created before the job started (no status.workflowRunId).
    const idle = await s.runner({ name, namespace: NS, createdAt: created(now, 3600) });
    // The job's runner in the other namespace: busy on run 990, never seen by a sweep (no uid recorded).
    await s.runner({ name, namespace: OTHER, workflowRunId: 990, createdAt: created(now, 1000) });
    await s.jobStarted({ runner: name, runId: 990, jobId: 9900, startedAt: before(now, 900) });
    // ARC removes it a second after the job completes; the grace is over at once.
    await s.kube.remove(OTHER, name);
    await s.jobCompleted({ runner: name, runId: 990, jobId: 9900, startedAt: before(now, 900), completedAt: before(now, 600), conclusion: "success" });
    await settleAlarms(s.env);
    expect(await deletes(s)).toEqual([]);
    expect((await s.kube.get(NS, name))?.metadata.uid).toBe(idle.metadata.uid);
    expect(await rows(s, name)).toEqual([expect.objectContaining({ state: "gone", code: "Gone" })]);
  });
});
