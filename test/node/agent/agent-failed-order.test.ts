// Failed runners in agent mode: a delete order for a runner ARC marked Failed carries
// `cause: "failed"` and no run. The real agent, against the kube stand-in under
// its Role, deletes only an object that is still Failed, carries no run and has
// the same uid (DELETE with the uid precondition); anything else is refused.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { waitFor } from "./agent-ledger-standin.ts";
import { connected, deletes, NS, ofType, report, stallWatch, startRig, type Rig } from "./agent-rig.ts";

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

const failedRunner = (name: string, o: { workflowRunId?: number } = {}) =>
  makeEphemeralRunner({
    namespace: NS,
    scaleSet: "arc-runners",
    name,
    phase: "Failed",
    status: { reason: "PodCreateFailed", message: "quota exceeded" },
    ...o,
  });
const uidPrecondition = (c: { body?: unknown }) => (c.body as { preconditions?: { uid?: string } }).preconditions?.uid;

describe("agent: delete orders with cause failed", () => {
  it("deletes a runner still Failed without a run, with the uid precondition; refuses a Running one, a Failed one on a run, and another uid", async () => {
    const r = await startRig(standin);
    rigs.push(r);
    const conn = await connected(r);
    const failed = await r.tenant.seed(failedRunner("fail-1"));
    const running = await r.tenant.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: "idle-1" }));
    const onRun = await r.tenant.seed(failedRunner("fail-run", { workflowRunId: 77 }));
    await waitFor("upserts", () => (["fail-1", "idle-1", "fail-run"].every((n) => ofType(conn, "upsert").some((m) => m.runner.name === n)) ? true : undefined));
    await r.tenant.clearCalls();

    r.ledger.order({ id: "f-idle", namespace: NS, name: "idle-1", uid: running.metadata.uid, cause: "failed", reason: "failed 600s" });
    expect(await report(conn, "f-idle")).toMatchObject({ outcome: "refused", why: expect.stringMatching(/idle-1 is not Failed \(anymore\)/) });
    r.ledger.order({ id: "f-run", namespace: NS, name: "fail-run", uid: onRun.metadata.uid, cause: "failed", reason: "failed 600s" });
    expect(await report(conn, "f-run")).toMatchObject({ outcome: "refused", why: expect.stringMatching(/Failed but on run 77/) });
    r.ledger.order({ id: "f-uid", namespace: NS, name: "fail-1", uid: "00000000-0000-4000-8000-000000000000", cause: "failed", reason: "failed 600s" });
    expect(await report(conn, "f-uid")).toMatchObject({ outcome: "refused", why: expect.stringMatching(/now has uid/) });
    expect(deletes(await r.tenant.calls())).toEqual([]);

    r.ledger.order({ id: "f-ok", namespace: NS, name: "fail-1", uid: failed.metadata.uid, cause: "failed", reason: "failed 600s" });
    expect(await report(conn, "f-ok")).toMatchObject({ outcome: "deleted", uid: failed.metadata.uid });
    const sent = deletes(await r.tenant.calls());
    expect(sent.map((c) => [c.path.split("/").pop(), c.status, uidPrecondition(c)])).toEqual([["fail-1", 200, failed.metadata.uid]]);
  });

  it("reads a Failed runner missing from its cache from the API server before deleting it", async () => {
    const r = await startRig(standin);
    rigs.push(r);
    const conn = await connected(r);
    // The watch stalls: the open one ends and its resume hangs, so nothing created from now on reaches the cache.
    await stallWatch(r.tenant);
    const failed = await r.tenant.seed(failedRunner("fail-unseen"));
    expect(ofType(conn, "upsert").filter((m) => m.runner.name === "fail-unseen")).toEqual([]);
    await r.tenant.clearCalls();
    r.ledger.order({ id: "f-read", namespace: NS, name: "fail-unseen", uid: failed.metadata.uid, cause: "failed", reason: "failed 600s" });
    expect(await report(conn, "f-read")).toMatchObject({ outcome: "deleted" });
    const calls = (await r.tenant.calls()).filter((c) => c.query["watch"] !== "true");
    expect(calls.map((c) => `${c.method} ${c.path.split("/").pop()} ${c.status}`)).toEqual(["GET fail-unseen 200", "DELETE fail-unseen 200"]);
  });
});
