// The agent's watch (src/agent) against each ARC version's EphemeralRunner CRD:
// a runner as that version creates it, the listener's status patch when a job
// starts, the controller's phase changes, and a deletion ARC's finalizer holds
// while GitHub says the job runs, then finishes.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ARC_VERSIONS_HOLDING_DELETIONS, jobStartedStatus, listenerJobStatus, makeEphemeralRunner } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { waitFor } from "./agent-ledger-standin.ts";
import { connected, deletes, NS, ofType, report, snapshot, startRig, type Rig } from "./agent-rig.ts";

let standin: KubeStandin;
beforeAll(async () => {
  standin = await startKubeStandin();
});
afterAll(async () => {
  await standin.close();
});
const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0).reverse()) await r.close();
});

describe.each(ARC_VERSIONS_HOLDING_DELETIONS)("the agent's watch on ARC %s", (version) => {
  it("sees a runner go idle to busy to Terminating (held while its job runs) to gone, and skips phase-only changes", async () => {
    const r = await startRig(standin, {
      arcVersion: version,
      autoFinalize: true,
      before: async (t) =>
        void (await t.seed(
          makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: "idle", phase: "Pending", arcVersion: version, status: { ready: false } }),
        )),
    });
    rigs.push(r);
    expect((await r.tenant.state()).arcVersion).toBe(version);
    const conn = await connected(r);
    const idle = await r.tenant.get(NS, "idle");
    expect(snapshot(conn)).toEqual([
      {
        namespace: NS,
        name: "idle",
        uid: idle?.metadata.uid,
        creationTimestamp: idle?.metadata.creationTimestamp,
        runnerId: idle?.status?.runnerId,
        arc: { scaleSet: "arc-runners" },
      },
    ]);

    // The controller marks it running, then the listener writes the job, as this version does.
    await r.tenant.patchStatus(NS, "idle", { phase: "Running", ready: true });
    await r.tenant.patchStatus(NS, "idle", jobStartedStatus({ workflowRunId: 6100, jobRepositoryName: "octo-org/octo-repo" }));
    const busy = await waitFor("upsert with the run", () => ofType(conn, "upsert").find((m) => m.runner.workflowRunId === 6100));
    expect(busy.runner).toEqual({
      namespace: NS,
      name: "idle",
      uid: idle?.metadata.uid,
      creationTimestamp: idle?.metadata.creationTimestamp,
      runnerId: idle?.status?.runnerId,
      workflowRunId: 6100,
      jobRepositoryName: "octo-org/octo-repo",
    });
    expect(ofType(conn, "upsert")).toHaveLength(1); // the phase change alone sent nothing

    // GitHub says the job still runs: ARC's finalizer holds the deletion.
    await r.tenant.setJobsStillRunning(true);
    r.ledger.order({ id: "v-1", namespace: NS, name: "idle", uid: idle?.metadata.uid ?? "", runId: 6100, reason: "job over the bound" });
    expect(await report(conn, "v-1")).toMatchObject({ outcome: "deleted" });
    const terminating = await waitFor("upsert with deletionTimestamp", () => ofType(conn, "upsert").find((m) => m.runner.deletionTimestamp !== undefined));
    expect(terminating.runner).toMatchObject({ name: "idle", workflowRunId: 6100 });
    expect((await r.tenant.get(NS, "idle"))?.metadata.deletionTimestamp).toBe(terminating.runner.deletionTimestamp);
    expect(ofType(conn, "remove")).toEqual([]);

    // The same order again while it is held: the agent sees it being deleted and sends no second DELETE.
    r.ledger.order({ id: "v-2", namespace: NS, name: "idle", uid: idle?.metadata.uid ?? "", runId: 6100, reason: "again" });
    expect((await report(conn, "v-2")).why).toMatch(/no second DELETE/);
    expect(deletes(await r.tenant.calls())).toHaveLength(1);

    // The job ends on GitHub's side: ARC finishes the deletion, and the agent says so.
    expect((await r.tenant.setJobsStillRunning(false)).released).toEqual([{ namespace: NS, name: "idle" }]);
    const removed = await waitFor("remove", () => ofType(conn, "remove")[0]);
    expect(removed).toEqual({ type: "remove", namespace: NS, name: "idle", uid: idle?.metadata.uid });
    expect(conn.invalid).toEqual([]);
  });
});

describe("the agent's watch on ARC 0.15.1", () => {
  it("sees an idle runner stay Pending, a job assigned late (Running, no fields: nothing sent), its fields, and a deletion go at once (never held)", async () => {
    const r = await startRig(standin, {
      arcVersion: "0.15.1",
      autoFinalize: true,
      before: async (t) =>
        void (await t.seed(
          makeEphemeralRunner({
            namespace: NS,
            scaleSet: "arc-runners",
            name: "idle",
            arcVersion: "0.15.1",
            runnerImage: "ghcr.io/actions/actions-runner:2.334.0",
          }),
        )),
    });
    rigs.push(r);
    const conn = await connected(r);
    const idle = await r.tenant.get(NS, "idle");
    expect(idle?.status?.phase).toBe("Pending");
    expect(snapshot(conn)).toEqual([
      {
        namespace: NS,
        name: "idle",
        uid: idle?.metadata.uid,
        creationTimestamp: idle?.metadata.creationTimestamp,
        runnerId: idle?.status?.runnerId,
        arc: { scaleSet: "arc-runners", runnerVersion: "2.334.0" },
      },
    ]);
    // The listener sets Running when the job is assigned; its job fields come later (a background pool): the phase alone sends nothing.
    const job = { workflowRunId: 6200, jobRepositoryName: "octo-org/octo-repo" };
    await r.tenant.patchStatus(NS, "idle", listenerJobStatus("0.15.1", job, { fields: false }));
    await r.tenant.patchStatus(NS, "idle", listenerJobStatus("0.15.1", job));
    const busy = await waitFor("upsert with the run", () => ofType(conn, "upsert").find((m) => m.runner.workflowRunId === 6200));
    expect(busy.runner).toEqual({
      namespace: NS,
      name: "idle",
      uid: idle?.metadata.uid,
      creationTimestamp: idle?.metadata.creationTimestamp,
      runnerId: idle?.status?.runnerId,
      workflowRunId: 6200,
      jobRepositoryName: "octo-org/octo-repo",
    });
    expect(ofType(conn, "upsert")).toHaveLength(1);

    // GitHub says the job still runs, yet 0.15 removes its finalizer first: the deleted runner goes at once, never held.
    await r.tenant.setJobsStillRunning(true);
    r.ledger.order({ id: "v-15", namespace: NS, name: "idle", uid: idle?.metadata.uid ?? "", runId: 6200, reason: "job over the bound" });
    expect(await report(conn, "v-15")).toMatchObject({ outcome: "deleted" });
    expect(await waitFor("remove", () => ofType(conn, "remove")[0])).toEqual({ type: "remove", namespace: NS, name: "idle", uid: idle?.metadata.uid });
    expect(await r.tenant.get(NS, "idle")).toBeUndefined();
    expect((await r.tenant.state()).heldDeletions).toEqual([]);
    expect(conn.invalid).toEqual([]);
  });
});
