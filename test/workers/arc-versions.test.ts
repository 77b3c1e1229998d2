// The Worker (webhooks, sweep, judge, client-node) against a cluster running
// each ARC version's EphemeralRunner CRD, with runners written the way that
// version writes them: created idle by the controller, then the listener's
// status patch when a job starts. ARC's finalizer holds the deletion of a busy
// runner while GitHub says its job runs (the stand-in's jobsStillRunning).
import { describe, expect, it } from "vitest";
import { ARC_VERSIONS, jobStartedStatus, makeEphemeralRunner, type ArcVersion } from "../standins/kube/control.ts";
import { before, NS, REPO, stack, type Stack } from "./support/stack.ts";
import { adminRunners } from "./support/worker.ts";
import { deletes, NOW } from "./support/kube-calls.ts";

// A day ahead of the clock: the sweeps run on the cron's time, and no alarm is due meanwhile.
const TEN_DAYS_AGO = new Date(Date.now() - 10 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z");

/** A runner as `version`'s controller creates it (idle, Pending), then marked Running, then given a job by the listener. */
async function arcRunner(s: Stack, version: ArcVersion, name: string, o: { runId?: number; deletionTimestamp?: string } = {}): Promise<string> {
  const created = await s.kube.seed(
    makeEphemeralRunner({
      namespace: NS,
      scaleSet: "arc-runners",
      name,
      phase: "Pending",
      arcVersion: version,
      creationTimestamp: TEN_DAYS_AGO,
      status: { ready: false },
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    }),
  );
  await s.kube.patchStatus(NS, name, { phase: "Running", ready: true });
  if (o.runId !== undefined) await s.kube.patchStatus(NS, name, jobStartedStatus({ workflowRunId: o.runId, jobRepositoryName: REPO }));
  return created.metadata.uid;
}

const deleted = async (s: Stack): Promise<string[]> => (await deletes(s)).map((c) => `${c.status} ${c.path.split("/").pop() ?? ""}`);

describe.each(ARC_VERSIONS)("ARC %s", (version) => {
  it("reaps the runner whose job is over and keeps the idle, running, moved-on and Terminating ones; a deletion ARC holds is never sent again", async () => {
    const s = await stack({}, { arcVersion: version, autoFinalize: true });
    expect((await s.kube.state()).arcVersion).toBe(version);
    await s.kube.setJobsStillRunning(true);

    await arcRunner(s, version, "idle");
    await arcRunner(s, version, "done", { runId: 701 });
    await arcRunner(s, version, "running", { runId: 702 });
    await arcRunner(s, version, "moved", { runId: 704 });
    await arcRunner(s, version, "terminating", { runId: 705, deletionTimestamp: before(NOW, 30).replace(/\.\d{3}Z$/, "Z") });
    const ok = [
      await s.jobCompleted({ runner: "done", runId: 701, jobId: 7010, startedAt: before(NOW, 900), completedAt: before(NOW, 600), conclusion: "cancelled" }),
      await s.jobStarted({ runner: "running", runId: 702, jobId: 7020, startedAt: before(NOW, 600) }),
      await s.jobCompleted({ runner: "moved", runId: 703, jobId: 7030, startedAt: before(NOW, 900), completedAt: before(NOW, 600), conclusion: "success" }),
      await s.jobCompleted({
        runner: "terminating",
        runId: 705,
        jobId: 7050,
        startedAt: before(NOW, 900),
        completedAt: before(NOW, 600),
        conclusion: "success",
      }),
    ];
    expect(ok.map((r) => r.status)).toEqual([202, 202, 202, 202]);

    await s.sweep(NOW);
    expect(await deleted(s)).toEqual(["200 done"]);
    const byName = async (): Promise<Record<string, unknown>> =>
      Object.fromEntries((await adminRunners(s.env)).runners.map((r) => [r["name"], { state: r["state"], reason: r["reason"] }]));
    expect(await byName()).toEqual({
      done: { state: "reaped", reason: "job 7010 in octo-org/octo-repo is cancelled, completed 600s ago" },
      running: { state: "running", reason: expect.stringMatching(/^job 7020 in octo-org\/octo-repo is in_progress for 600s, within the bound/) },
      // The only object named "moved" carries another run and is not the uid seen busy on 703: it is not the facts'
      // runner (issue 22's identity rule), so the facts' runner is gone on the sweep's fresh list, and the object stays.
      moved: { state: "gone", reason: "runner moved is no longer in the cluster (only objects of its name that are not it: arc-runners (on run 704))" },
      terminating: { state: "finished", reason: expect.stringMatching(/^already being deleted since /) },
    });

    // ARC holds "done" (GitHub says its job runs): still listed, Terminating. The next sweep sends no second DELETE.
    expect((await s.kube.get(NS, "done"))?.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect((await s.kube.state()).heldDeletions).toEqual([{ namespace: NS, name: "done" }]);
    await s.sweep(NOW + 60_000);
    expect(await deleted(s)).toEqual(["200 done"]);

    // GitHub lets go of the job: ARC finishes the deletion, and the runner stays reaped.
    expect((await s.kube.setJobsStillRunning(false)).released).toEqual([{ namespace: NS, name: "done" }]);
    await s.sweep(NOW + 120_000);
    expect(await deleted(s)).toEqual(["200 done"]);
    expect((await byName())["done"]).toEqual({ state: "reaped", reason: "job 7010 in octo-org/octo-repo is cancelled, completed 600s ago" });
    expect(await s.kube.get(NS, "idle")).toBeDefined();
    expect(await s.kube.get(NS, "moved")).toBeDefined();
  });
});
