// The sweep end to end: real payloads in, the scheduled handler, client-node
// against the stand-in cluster, @octokit/app against the stand-in GitHub.
import { describe, expect, it, vi } from "vitest";
import { before, INSTALLATION, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners } from "../support/worker.ts";
import { deletes, NOW, preconditionUid } from "../support/kube-calls.ts";

// The sweep's time is the cron's: a day ahead of the clock, so that no alarm of
// the ledger (which fires on the real clock) is due while these sweep tests run.
// Every sweep lists the App's deliveries (redelivery); everything else is about runners.
const runnerCalls = async (s: Awaited<ReturnType<typeof stack>>) => (await s.github.calls()).filter((c) => c.path !== "/app/hook/deliveries");

describe("sweep", () => {
  it("reaps a cancelled run's runner after the grace, with a uid precondition, and no GitHub call", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-c1", workflowRunId: 500 });
    await s.jobStarted({ runner: er.metadata.name, runId: 500, jobId: 9001, startedAt: before(NOW, 3600) });
    await s.runCompleted({ runId: 500, updatedAt: before(NOW, 120), conclusion: "cancelled" });

    await s.sweep(NOW); // 120 s after the run completed: within the grace
    expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({
      state: "finished",
      code: "InGrace",
    });

    await s.sweep(NOW + 180_000); // grace over
    const after = await s.kube.get(NS, er.metadata.name);
    expect(after?.metadata.deletionTimestamp).toEqual(expect.any(String)); // finalizers keep it while ARC deregisters
    const [del] = await deletes(s);
    expect(del).toMatchObject({
      method: "DELETE",
      path: `/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/${er.metadata.name}`,
      status: 200,
    });
    expect(del?.body).toMatchObject({ preconditions: { uid: er.metadata.uid } }); // exactly the object it judged
    expect((await adminRunners(s.env)).runners).toEqual([
      expect.objectContaining({ name: er.metadata.name, state: "reaped", code: "RunCompleted", cause: "run-completed" }),
    ]);
    expect(await runnerCalls(s)).toEqual([]); // reaped on the webhook's word alone

    await s.sweep(NOW + 240_000); // already reaped: no second delete
    expect(await deletes(s)).toHaveLength(1);
  });

  it("sends the uid it saw: a runner recreated under the same name is not deleted; the 409 means the runner it judged is gone", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-u1", workflowRunId: 501 });
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 501,
      jobId: 9002,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 600),
      conclusion: "cancelled",
    });
    // Between the list and the delete, ARC replaced the object: the stand-in answers the real 409.
    await s.kube.addFault({
      match: { method: "DELETE" },
      status: 409,
      times: 1,
      rawBody: JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        reason: "Conflict",
        code: 409,
        message: `Operation cannot be fulfilled on ephemeralrunners.actions.github.com "${er.metadata.name}": Precondition failed: UID in precondition: ${er.metadata.uid}, UID in object meta: 00000000-0000-0000-0000-000000000001`,
      }),
    });
    await s.sweep(NOW);
    expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "gone" });
    expect((await deletes(s)).map(preconditionUid)).toEqual([er.metadata.uid]);
  });

  it("any other 409 on delete (not the uid precondition) is an error: the row stays open, the runner stays, and is deleted at a later pass", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-u2", workflowRunId: 508 });
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 508,
      jobId: 9008,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 600),
      conclusion: "cancelled",
    });
    // The stand-in's 409 for a fault is the API server's "the object has been modified" Conflict Status.
    await s.kube.addFault({ match: { method: "DELETE" }, status: 409, times: 1 });
    await s.sweep(NOW);
    expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "finished" });
    await s.sweep(NOW + 60_000);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped" });
    expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect((await deletes(s)).map((c) => c.status)).toEqual([409, 200]);
  });

  it("keeps an idle runner, one being deleted, and one that moved on, without asking GitHub", async () => {
    const s = await stack();
    await s.runner({ name: "arc-runners-abcde-runner-idle" });
    const deleting = await s.runner({ name: "arc-runners-abcde-runner-del", workflowRunId: 502, deletionTimestamp: before(NOW, 30) });
    const moved = await s.runner({ name: "arc-runners-abcde-runner-mv", workflowRunId: 999 });
    for (const [er, runId] of [
      [deleting, 502],
      [moved, 503],
    ] as const) {
      await s.jobCompleted({
        runner: er.metadata.name,
        runId,
        jobId: runId * 10,
        startedAt: before(NOW, 900),
        completedAt: before(NOW, 600),
        conclusion: "success",
      });
    }
    await s.sweep(NOW);
    expect(await deletes(s)).toEqual([]);
    expect(await runnerCalls(s)).toEqual([]);
  });

  it("closes the facts of a runner that left the cluster as gone", async () => {
    const s = await stack();
    await s.jobStarted({ runner: "arc-runners-abcde-runner-gone", runId: 504, jobId: 5040, startedAt: before(NOW, 60) });
    await s.sweep(NOW);
    expect((await adminRunners(s.env)).runners).toEqual([
      expect.objectContaining({
        name: "arc-runners-abcde-runner-gone",
        state: "gone",
        code: "Gone",
      }),
    ]);
  });

  it("a 404 on delete closes the facts as gone", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-404", workflowRunId: 505 });
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 505,
      jobId: 5050,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 600),
      conclusion: "cancelled",
    });
    await s.kube.addFault({ match: { method: "DELETE" }, status: 404, times: 1 });
    await s.sweep(NOW);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "gone", code: "Gone" });
  });

  it("a 500 from the cluster list deletes nothing and closes nothing", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-500", workflowRunId: 506 });
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 506,
      jobId: 5060,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 600),
      conclusion: "cancelled",
    });
    await s.kube.addFault({ match: { method: "GET" }, status: 500 });
    await s.sweep(NOW);
    expect(await deletes(s)).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "finished" });
    await s.kube.clearFaults();
    await s.sweep(NOW + 60_000);
    expect(await deletes(s)).toHaveLength(1);
  });

  it("a 500 on delete keeps the facts and retries at the next sweep", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-d500", workflowRunId: 507 });
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 507,
      jobId: 5070,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 600),
      conclusion: "failure",
    });
    await s.kube.addFault({ match: { method: "DELETE" }, status: 500, times: 1 });
    await s.sweep(NOW);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "finished" });
    await s.sweep(NOW + 60_000);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped" });
    expect((await deletes(s)).map((c) => c.status)).toEqual([500, 200]);
  });

  it("dry run: lists what it would delete and deletes nothing", async () => {
    const s = await stack({ REAPER_DRY_RUN: "true" });
    const er = await s.runner({ name: "arc-runners-abcde-runner-dry", workflowRunId: 508 });
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 508,
      jobId: 5080,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 600),
      conclusion: "cancelled",
    });
    await s.sweep(NOW);
    expect(await deletes(s)).toEqual([]);
    expect((await adminRunners(s.env, "?state=finished")).runners[0]).toMatchObject({ code: "DryRun", jobId: 5080 });
  });

  it("deletes at most REAPER_MAX_DELETIONS_PER_MINUTE a sweep; the rest wait for the next", async () => {
    const s = await stack({ REAPER_MAX_DELETIONS_PER_MINUTE: "2" });
    for (let i = 0; i < 5; i++) {
      const er = await s.runner({ name: `arc-runners-abcde-runner-cap${i}`, workflowRunId: 600 + i });
      await s.jobCompleted({
        runner: er.metadata.name,
        runId: 600 + i,
        jobId: 6000 + i,
        startedAt: before(NOW, 900),
        completedAt: before(NOW, 600 - i),
        conclusion: "cancelled",
      });
    }
    await s.sweep(NOW);
    expect(await deletes(s)).toHaveLength(2);
    await s.sweep(NOW + 60_000);
    expect(await deletes(s)).toHaveLength(4);
    await s.sweep(NOW + 120_000);
    expect(await deletes(s)).toHaveLength(5);
    expect((await adminRunners(s.env, "?state=reaped")).runners).toHaveLength(5);
  });

  it("a re-run: attempt 1's completion does not reap the runner of attempt 2's running job", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-rr", workflowRunId: 509 });
    await s.jobStarted({ runner: er.metadata.name, runId: 509, jobId: 5092, runAttempt: 2, startedAt: before(NOW, 60) });
    await s.runCompleted({ runId: 509, runAttempt: 1, updatedAt: before(NOW, 900), conclusion: "failure" });
    await s.sweep(NOW);
    expect(await deletes(s)).toEqual([]);
    await s.runCompleted({ runId: 509, runAttempt: 2, updatedAt: before(NOW, 400), conclusion: "cancelled" });
    await s.sweep(NOW);
    expect(await deletes(s)).toHaveLength(1);
  });
});

describe("sweep: jobs past the bound", () => {
  const BOUND = { REAPER_MAX_JOB_SECONDS: "3600" };

  it("asks GitHub about a job past the bound and reaps on its word that it still runs", async () => {
    const s = await stack(BOUND);
    const er = await s.runner({ name: "arc-runners-abcde-runner-hung", workflowRunId: 700 });
    const job = await s.github.putJob({
      repo: REPO,
      run_id: 700,
      run_attempt: 1,
      status: "in_progress",
      runner_name: er.metadata.name,
      started_at: before(NOW, 7200),
    });
    await s.jobStarted({ runner: er.metadata.name, runId: 700, jobId: Number(job.id), startedAt: before(NOW, 7200) });
    await s.sweep(NOW);
    expect(await deletes(s)).toHaveLength(1);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({
      state: "reaped",
      code: "OverBound",
      cause: "over-bound",
    });
    expect(await s.github.tokenRequests()).toEqual([expect.objectContaining({ installationId: INSTALLATION, permissions: { actions: "read" } })]);
    expect((await s.github.calls()).map((c) => `${c.method} ${c.path}`)).toEqual([
      "GET /app/hook/deliveries",
      `POST /app/installations/${INSTALLATION}/access_tokens`,
      `GET /repos/${REPO}/actions/jobs/${job.id}`,
    ]);
  });

  it("keeps a job within the bound without asking GitHub for it", async () => {
    const s = await stack(BOUND);
    const er = await s.runner({ name: "arc-runners-abcde-runner-ok", workflowRunId: 701 });
    await s.jobStarted({ runner: er.metadata.name, runId: 701, jobId: 7010, startedAt: before(NOW, 600) });
    await s.sweep(NOW);
    expect(await deletes(s)).toEqual([]);
    expect((await s.github.calls()).filter((c) => c.path.includes("/actions/"))).toEqual([]);
  });

  it("a refused token deletes nothing that needs GitHub's word, and says why", async () => {
    const s = await stack(BOUND);
    await s.github.setRefuseTokens(403);
    const hung = await s.runner({ name: "arc-runners-abcde-runner-nt", workflowRunId: 702 });
    await s.jobStarted({ runner: hung.metadata.name, runId: 702, jobId: 7020, startedAt: before(NOW, 7200) });
    const log = vi.spyOn(console, "log");
    await s.sweep(NOW);
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    log.mockRestore();
    expect(await deletes(s)).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "running" });
    expect(lines.find((l) => l.msg === "decision" && l.runner === hung.metadata.name)).toMatchObject({
      namespace: NS,
      repository: REPO,
      run: 702,
      job: 7020,
      verdict: "keep",
      code: "GithubError",
      error: "github",
      // The code says what was decided; the error's own words are the point here: which installation refused and
      // the permission it needs (no code carries those). The verdict's words around them are not asserted.
      reason: expect.stringMatching(/minting a token for installation 4242: GitHub answered 403: .*Actions: read/),
    });
    expect(lines.find((l) => l.msg === "sweep")).toMatchObject({
      checked: 1,
      deleted: 0,
      kept: 1,
      waiting: 0,
      errors: 1,
      errorsByKind: { cluster: 0, github: 1, redelivery: 0 },
      clusterCalls: 2, // the list, and the cluster's identity (kube-system's uid), read once per ledger
    });
  });
});
