// The Worker (webhooks, sweep, judge, client-node) against a cluster running
// each ARC version's EphemeralRunner CRD, with runners written the way that
// version writes them: created idle by the controller, then the listener's
// status patch when a job starts. Up to master of 2026-06-30 ARC's finalizer holds
// the deletion of a busy runner while GitHub says its job runs (the stand-in's
// jobsStillRunning); from 0.15 it goes at once, an idle runner stays Pending and
// the listener sets Running (ARC_BEHAVIOUR).
import { describe, expect, it } from "vitest";
import { ARC_BEHAVIOUR, ARC_VERSIONS, listenerJobStatus, makeEphemeralRunner, type ArcVersion } from "../../standins/kube/control.ts";
import { before, NS, REPO, stack, type Stack } from "../support/stack.ts";
import { adminRunners } from "../support/worker.ts";
import { deletes, NOW } from "../support/kube-calls.ts";

// A day ahead of the clock: the sweeps run on the cron's time, and no alarm is due meanwhile.
const TEN_DAYS_AGO = new Date(Date.now() - 10 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * A runner as `version`'s controller creates it (Pending), then up (Running before 0.15; Pending on 0.15,
 * whose listener owns Running), then given a job by the listener. `phases` "swapped" writes the phases the
 * other way round (idle Running on 0.15, busy Pending before): no decision may change.
 */
async function arcRunner(
  s: Stack,
  version: ArcVersion,
  name: string,
  o: { runId?: number; deletionTimestamp?: string; phases?: "swapped" } = {},
): Promise<string> {
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
  const idlePhase = ARC_BEHAVIOUR[version].idlePhase;
  const swap = (phase: string): string => (o.phases !== "swapped" ? phase : phase === "Running" ? "Pending" : "Running");
  await s.kube.patchStatus(NS, name, { phase: swap(idlePhase), ready: true });
  if (o.runId !== undefined) {
    const { phase, ...fields } = listenerJobStatus(version, { workflowRunId: o.runId, jobRepositoryName: REPO });
    await s.kube.patchStatus(NS, name, { ...fields, phase: swap(phase ?? idlePhase) });
  }
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
      Object.fromEntries((await adminRunners(s.env)).runners.map((r) => [r["name"], { state: r["state"], code: r["code"] }]));
    expect(await byName()).toEqual({
      done: { state: "reaped", code: "JobCompleted" },
      running: { state: "running", code: "Running" },
      // The only object named "moved" carries another run and is not the uid seen busy on 703: it is not the facts'
      // runner (issue 22's identity rule), so the facts' runner is gone on the sweep's fresh list, and the object stays.
      moved: { state: "gone", code: "Gone" },
      terminating: { state: "finished", code: "BeingDeleted" },
    });

    if (ARC_BEHAVIOUR[version].finalizerFirst) {
      // 0.15 drops its finalizer before it deregisters: the deletion is not held, "done" goes at once, and never looks stuck.
      expect(await s.kube.get(NS, "done")).toBeUndefined();
      expect((await s.kube.state()).heldDeletions).toEqual([]);
    } else {
      // ARC holds "done" (GitHub says its job runs): still listed, Terminating. The next sweep sends no second DELETE.
      expect((await s.kube.get(NS, "done"))?.metadata.deletionTimestamp).toEqual(expect.any(String));
      expect((await s.kube.state()).heldDeletions).toEqual([{ namespace: NS, name: "done" }]);
    }
    await s.sweep(NOW + 60_000);
    expect(await deleted(s)).toEqual(["200 done"]);

    // GitHub lets go of the job: ARC finishes any held deletion, and the runner stays reaped.
    expect((await s.kube.setJobsStillRunning(false)).released).toEqual(ARC_BEHAVIOUR[version].finalizerFirst ? [] : [{ namespace: NS, name: "done" }]);
    await s.sweep(NOW + 120_000);
    expect(await deleted(s)).toEqual(["200 done"]);
    expect((await byName())["done"]).toEqual({ state: "reaped", code: "JobCompleted" });
    expect(await s.kube.get(NS, "idle")).toBeDefined();
    expect(await s.kube.get(NS, "moved")).toBeDefined();
  });
});

/** One fleet of `version`, swept twice: what was deleted and every row's state and code. */
async function fleetOutcome(version: ArcVersion, phases?: "swapped"): Promise<{ deleted: string[]; rows: Record<string, unknown>; left: string[] }> {
  const s = await stack({}, { arcVersion: version, autoFinalize: true });
  for (const [name, runId] of [
    ["idle-a", undefined],
    ["idle-b", undefined],
    ["done-a", 801],
    ["done-b", 802],
    ["running", 803],
    ["moved", 805],
  ] as const)
    await arcRunner(s, version, name, { ...(runId !== undefined ? { runId } : {}), ...(phases ? { phases } : {}) });
  await s.jobCompleted({ runner: "done-a", runId: 801, jobId: 8010, startedAt: before(NOW, 900), completedAt: before(NOW, 600), conclusion: "success" });
  await s.runCompleted({ runId: 802, updatedAt: before(NOW, 400), conclusion: "cancelled" });
  await s.jobStarted({ runner: "done-b", runId: 802, jobId: 8020, startedAt: before(NOW, 900) });
  await s.jobStarted({ runner: "running", runId: 803, jobId: 8030, startedAt: before(NOW, 600) });
  await s.jobCompleted({ runner: "moved", runId: 804, jobId: 8040, startedAt: before(NOW, 900), completedAt: before(NOW, 600), conclusion: "success" });
  await s.sweep(NOW);
  await s.sweep(NOW + 60_000);
  const rows = Object.fromEntries((await adminRunners(s.env)).runners.map((r) => [r["name"], [r["state"], r["code"]]]));
  // Nothing in the product asks for an EphemeralRunnerSet (0.15 dropped their status counts, #4557, #4570): runners only.
  // The cluster's identity (kube-system's uid, read once) aside.
  const paths = (await s.kube.calls()).filter((c) => !c.path.endsWith("/status") && c.path !== "/api/v1/namespaces/kube-system").map((c) => c.path);
  expect(paths.filter((p) => !/\/ephemeralrunners(\/[^/]+)?$/.test(p))).toEqual([]);
  return { deleted: await deleted(s), rows, left: (await s.kube.list()).map((r) => r.metadata.name) };
}

describe("ARC 0.15: no decision reads the phase or the EphemeralRunnerSet's counts", () => {
  it("reaps and keeps a 0.15 fleet exactly as a 0.14 fleet, and either with its phases swapped (idle Running, busy Pending)", async () => {
    const fourteen = await fleetOutcome("0.14.2");
    expect(fourteen.deleted).toEqual(["200 done-a", "200 done-b"]);
    expect(fourteen.left).toEqual(["idle-a", "idle-b", "moved", "running"]);
    expect(fourteen.rows).toEqual({
      "done-a": ["reaped", "JobCompleted"],
      "done-b": ["reaped", "RunCompleted"],
      moved: ["gone", "Gone"],
      running: ["running", "Running"],
    });
    expect(await fleetOutcome("0.15.1")).toEqual(fourteen);
    expect(await fleetOutcome("0.15.1", "swapped")).toEqual(fourteen);
    expect(await fleetOutcome("0.14.2", "swapped")).toEqual(fourteen);
  });
});
