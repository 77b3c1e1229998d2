// Finishing held deletions in agent mode: a "finish" order (REAPER_FINISH_STUCK) for a deletion ARC
// holds. The real agent, against the kube stand-in (which enforces the Role's verbs and
// the JSON patch's test operations), reads the object, checks uid, deletion and that
// every finalizer is ARC's, then PATCHes (application/json-patch+json) the patch that
// tests uid and finalizers and removes them. Without the overlay's patch: 403, refused.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { waitFor } from "./agent-ledger-standin.ts";
import { connected, NS, ofType, seedRunner, startRig, type Msg, type Rig, type RigOptions } from "./agent-rig.ts";
import type { LedgerConnection } from "./agent-ledger-standin.ts";

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
async function rig(opts: RigOptions): Promise<Rig> {
  const r = await startRig(standin, opts);
  rigs.push(r);
  return r;
}
const finishReport = (conn: LedgerConnection, id: string): Promise<Msg<"finish-report">> =>
  waitFor(`the finish report of ${id}`, () => ofType(conn, "finish-report").find((m) => m.id === id));
const held = (name: string, o: { finalizers?: string[]; workflowRunId?: number } = {}) =>
  seedRunner(name, { workflowRunId: o.workflowRunId ?? 5100, deletionTimestamp: new Date(Date.now() - 3_600_000).toISOString(), ...o });

describe("agent: finish orders", () => {
  it("with the overlay: removes ARC's finalizers by a JSON patch that tests uid and finalizers; the held object goes", async () => {
    const r = await rig({ finishOverlay: true });
    const conn = await connected(r);
    const obj = await r.tenant.seed(held("held-1"));
    const finalizers = obj.metadata.finalizers ?? [];
    expect(finalizers.length).toBeGreaterThan(0);
    await r.tenant.clearCalls();
    r.ledger.finish({ id: "fin-1", namespace: NS, name: "held-1", uid: obj.metadata.uid, reason: "job completed" });
    expect(await finishReport(conn, "fin-1")).toMatchObject({ type: "finish-report", uid: obj.metadata.uid, outcome: "finished" });
    const calls = (await r.tenant.calls()).filter((c) => c.query["watch"] !== "true");
    expect(calls.map((c) => `${c.method} ${c.path.split("/").pop()} ${c.status}`)).toEqual(["GET held-1 200", "PATCH held-1 200"]);
    expect(calls[1]?.contentType).toBe("application/json-patch+json");
    expect(calls[1]?.body).toEqual([
      { op: "test", path: "/metadata/uid", value: obj.metadata.uid },
      { op: "test", path: "/metadata/finalizers", value: finalizers },
      { op: "remove", path: "/metadata/finalizers" },
    ]);
    expect(await r.tenant.get(NS, "held-1")).toBeUndefined();
  });

  it("without the overlay: the API server's 403 is reported refused, naming the overlay; the object is still held", async () => {
    const r = await rig({});
    const conn = await connected(r);
    const obj = await r.tenant.seed(held("held-2"));
    r.ledger.finish({ id: "fin-2", namespace: NS, name: "held-2", uid: obj.metadata.uid, reason: "job completed" });
    expect(await finishReport(conn, "fin-2")).toMatchObject({ outcome: "refused", why: expect.stringMatching(/403 .*infra\/agent\/finish-stuck/) });
    expect((await r.tenant.get(NS, "held-2"))?.metadata.finalizers).toEqual(obj.metadata.finalizers);
  });

  it("patches nothing for an object not being deleted, with a finalizer not ARC's, of another uid, or outside its namespaces", async () => {
    const r = await rig({ finishOverlay: true });
    const conn = await connected(r);
    const live = await r.tenant.seed(seedRunner("live-1", { workflowRunId: 5200 }));
    const foreign = await r.tenant.seed(held("held-foreign", { finalizers: ["ephemeralrunner.actions.github.com/finalizer", "example.com/keep"] }));
    const other = await r.tenant.seed(held("held-other"));
    await r.tenant.clearCalls();
    r.ledger.finish({ id: "fin-live", namespace: NS, name: "live-1", uid: live.metadata.uid, reason: "r" });
    r.ledger.finish({ id: "fin-foreign", namespace: NS, name: "held-foreign", uid: foreign.metadata.uid, reason: "r" });
    r.ledger.finish({ id: "fin-other", namespace: NS, name: "held-other", uid: "00000000-0000-4000-8000-000000000000", reason: "r" });
    r.ledger.finish({ id: "fin-ns", namespace: "default", name: "held-other", uid: other.metadata.uid, reason: "r" });
    expect(await finishReport(conn, "fin-live")).toMatchObject({ outcome: "refused", why: expect.stringMatching(/is not being deleted/) });
    expect(await finishReport(conn, "fin-foreign")).toMatchObject({ outcome: "refused", why: expect.stringMatching(/not ARC's \(example\.com\/keep\)/) });
    expect(await finishReport(conn, "fin-other")).toMatchObject({ outcome: "gone", why: expect.stringMatching(/now has uid/) });
    expect(await finishReport(conn, "fin-ns")).toMatchObject({ outcome: "refused", why: expect.stringMatching(/not among this agent's namespaces/) });
    expect((await r.tenant.calls()).filter((c) => c.method === "PATCH")).toEqual([]);
  });
});
