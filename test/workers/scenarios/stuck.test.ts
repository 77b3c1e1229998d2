// ARC's deletion as ARC does it: while GitHub says the job runs, the finalizer
// holds the object. A runner we deleted that is still there REAPER_STUCK_SECONDS
// later is stuck: its row says so (with GitHub's word on its job), /admin lists
// it, /metrics counts it, and it is never deleted again; when it goes, the row
// closes as reaped with how long it took.
import { describe, expect, it, vi } from "vitest";
import { before, NS, REPO, type Stack, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call, ledgerOf, settleAlarms } from "../support/worker.ts";

/** The alarm's pass `ms` later than the real clock: REAPER_STUCK_SECONDS passes on the ledger's clock, not the wall's. */
const alarmLater = (s: Stack, ms: number) => ledgerOf(s.env).alarmAt(Date.now() + ms);

describe("stuck deletions", () => {
  it("a deletion ARC holds past REAPER_STUCK_SECONDS is stuck, shown, counted, never deleted again; it closes as reaped when it goes", async () => {
    const s = await stack({ REAPER_STUCK_SECONDS: "1" }, { autoFinalize: true });
    await s.kube.setJobsStillRunning(true);
    const name = "arc-runners-stuck-runner-st";
    const er = await s.runner({ name, workflowRunId: 700 });
    await s.github.putJob({ repo: REPO, id: 7000, run_id: 700, status: "in_progress", runner_name: name, started_at: before(Date.now(), 900) });
    const now = Date.now();
    await s.jobCompleted({ runner: name, runId: 700, jobId: 7000, startedAt: before(now, 900), completedAt: before(now, 600), conclusion: "cancelled" });
    await settleAlarms(s.env);
    expect((await s.kube.get(NS, name))?.metadata.deletionTimestamp).toBeDefined(); // held by ARC
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ name, state: "reaped" });

    const log = vi.spyOn(console, "log");
    await alarmLater(s, 1100);
    const decided = () =>
      log.mock.calls.map(([l]) => JSON.parse(String(l)) as Record<string, unknown>).filter((l) => l["msg"] === "decision" && l["runner"] === name);
    // Its decision line names the check's code (src/model/deletion-codes.ts).
    expect(decided()).toEqual([expect.objectContaining({ verdict: "keep", code: "Stuck", error: "cluster" })]);
    log.mockClear();
    const stuck = (await adminRunners(s.env, "?state=stuck")).runners;
    expect(stuck).toEqual([
      expect.objectContaining({
        name,
        state: "stuck",
        code: "Stuck",
      }),
    ]);
    const metrics = await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text();
    expect(metrics).toMatch(/^arc_reaper_stuck_deletions 1$/m);
    const page = await (
      await call(s.env, new Request("https://arc-reaper.test/admin?state=stuck", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
    ).text();
    expect(page).toContain(name);

    // Sweeps and alarms never delete it again.
    await s.sweep(Date.now() + 1100);
    await alarmLater(s, 2200);
    await settleAlarms(s.env);
    expect((await s.kube.calls()).filter((c) => c.method === "DELETE")).toHaveLength(1);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "stuck" });

    // GitHub lets go; ARC finishes the deletion; the next look closes the row as reaped.
    await s.kube.setJobsStillRunning(false);
    expect(await s.kube.get(NS, er.metadata.name)).toBeUndefined();
    log.mockClear();
    await s.sweep(Date.now());
    expect(decided()).toEqual([expect.objectContaining({ verdict: "deleted", code: "Went" })]);
    log.mockRestore();
    const row = (await adminRunners(s.env)).runners[0]!;
    expect(row).toMatchObject({
      name,
      state: "reaped",
      code: "Went",
      cause: "job-completed",
    });
    const after = await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text();
    expect(after).toMatch(/^arc_reaper_stuck_deletions 0$/m);
  });

  it("a deletion that goes at once leaves no watch behind and costs no extra read", async () => {
    const s = await stack({ REAPER_STUCK_SECONDS: "1" });
    const name = "arc-runners-quick-runner-st";
    await s.runner({ name, workflowRunId: 701 });
    const now = Date.now();
    await s.jobCompleted({ runner: name, runId: 701, jobId: 7010, startedAt: before(now, 900), completedAt: before(now, 600), conclusion: "success" });
    await settleAlarms(s.env);
    await s.kube.finalize();
    await s.sweep(Date.now()); // the list shows it went: the watch ends
    await s.kube.clearCalls();
    await alarmLater(s, 1100);
    await settleAlarms(s.env);
    expect(await s.kube.calls()).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped" });
  });
});
