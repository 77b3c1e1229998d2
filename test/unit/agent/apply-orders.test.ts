// Delete orders checked against the agent's watch cache, or a read by name (src/agent/apply-orders.ts).
import { describe, expect, it } from "vitest";
import type { AgentRunner, DeleteOrder } from "../../../src/cluster/agent-protocol.ts";
import { OrderDesk } from "../../../src/agent/apply-orders.ts";
import type { DeleteResult, KubeRunners } from "../../../src/agent/kube-runners.ts";
import { RunnerView } from "../../../src/agent/runner-view.ts";

const UID = "0b3c6a52-71c4-4d7e-9a59-2f1b7a6c9e10";
const runner: AgentRunner = { namespace: "arc-runners", name: "r-1", uid: UID, creationTimestamp: "2026-11-30T10:00:00Z", workflowRunId: 9001 };
const order: DeleteOrder = { type: "order", id: "ord-1", namespace: "arc-runners", name: "r-1", uid: UID, runId: 9001, reason: "run 9001 is cancelled" };
const failedRunner: AgentRunner = { ...runner, workflowRunId: undefined, arc: { phase: "Failed" } } as AgentRunner;
delete (failedRunner as { workflowRunId?: number }).workflowRunId;
const failedOrder: DeleteOrder = {
  type: "order",
  id: "ord-2",
  namespace: "arc-runners",
  name: "r-1",
  uid: UID,
  cause: "failed",
  reason: "ARC marked it Failed",
};

interface Line {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

function desk(opts: { cached?: AgentRunner[]; read?: AgentRunner | null | Error; deletes?: DeleteResult[]; dryRun?: boolean; synced?: boolean } = {}) {
  const view = new RunnerView(["arc-runners", "team-b"]);
  if (opts.synced !== false) view.replace("arc-runners", opts.cached ?? []);
  const calls: string[] = [];
  const deletes = [...(opts.deletes ?? [{ outcome: "deleted", why: "deleted with uid precondition" }])];
  const kube = {
    read: async (ns: string, name: string) => {
      calls.push(`read ${ns}/${name}`);
      if (opts.read instanceof Error) throw opts.read;
      return opts.read ?? null;
    },
    delete: async (ns: string, name: string, uid: string) => {
      calls.push(`delete ${ns}/${name} ${uid}`);
      return deletes.shift() ?? { outcome: "deleted", why: "deleted again" };
    },
  } as unknown as KubeRunners;
  const lines: Line[] = [];
  const d = new OrderDesk({ view, kube, dryRun: opts.dryRun ?? false, log: (level, msg, fields) => void lines.push({ level, msg, fields }) });
  return { d, calls, lines };
}

describe("OrderDesk", () => {
  it("deletes a cached runner on the order's run, by uid, and reports and logs the outcome", async () => {
    const { d, calls, lines } = desk({ cached: [runner] });
    expect(await d.apply(order)).toEqual({ type: "report", id: "ord-1", uid: UID, outcome: "deleted", why: "deleted with uid precondition" });
    expect(calls).toEqual([`delete arc-runners/r-1 ${UID}`]);
    expect(lines).toEqual([
      {
        level: "info",
        msg: "order",
        fields: {
          id: "ord-1",
          namespace: "arc-runners",
          name: "r-1",
          uid: UID,
          runId: 9001,
          outcome: "deleted",
          why: "deleted with uid precondition",
          reason: "run 9001 is cancelled",
        },
      },
    ]);
  });

  it("deletes an idle cached runner (no run yet)", async () => {
    const idle = { ...runner };
    delete idle.workflowRunId;
    const { d } = desk({ cached: [idle] });
    expect((await d.apply(order)).outcome).toBe("deleted");
  });

  it("refuses a namespace that is not the agent's, naming its own", async () => {
    const { d, calls } = desk();
    expect(await d.apply({ ...order, namespace: "kube-system" })).toMatchObject({
      outcome: "refused",
      why: "namespace kube-system is not among this agent's namespaces (arc-runners, team-b)",
    });
    expect(calls).toEqual([]);
  });

  it("refuses a namespace not listed yet", async () => {
    const { d, calls } = desk({ synced: false });
    expect(await d.apply(order)).toMatchObject({ outcome: "refused", why: "the agent has not listed namespace arc-runners yet" });
    expect(calls).toEqual([]);
  });

  it("reads a runner missing from the cache from the API server, logs it, and judges what it says", async () => {
    const { d, calls, lines } = desk({ read: runner });
    expect((await d.apply(order)).outcome).toBe("deleted");
    expect(calls).toEqual(["read arc-runners/r-1", `delete arc-runners/r-1 ${UID}`]);
    expect(lines[0]).toEqual({
      level: "info",
      msg: "order for a runner missing from the watch cache: read from the API server",
      fields: { id: "ord-1", namespace: "arc-runners", name: "r-1", found: true },
    });
  });

  it("answers gone when the read finds nothing, and failed (warn) when it fails", async () => {
    const gone = desk({ read: null });
    expect(await gone.d.apply(order)).toMatchObject({
      outcome: "gone",
      why: "no EphemeralRunner arc-runners/r-1: the API server answered 404 to a read by name",
    });
    expect(gone.lines[0]?.fields?.["found"]).toBe(false);
    const failed = desk({ read: new Error(`HTTP 503 ${"x".repeat(400)}`) });
    const report = await failed.d.apply(order);
    expect(report.outcome).toBe("failed");
    expect(report.why).toBe(`arc-runners/r-1 is not in the agent's watch cache and could not be read: HTTP 503 ${"x".repeat(291)}`);
    expect(failed.lines.at(-1)?.level).toBe("warn");
    expect(failed.calls).toEqual(["read arc-runners/r-1"]);
  });

  it.each([
    ["another uid", { ...runner, uid: "other-uid" }, `arc-runners/r-1 now has uid other-uid, not ${UID}: another runner took the name`],
    ["a deletion under way", { ...runner, deletionTimestamp: "2026-11-30T11:00:00Z" }, "arc-runners/r-1 is already being deleted (since 2026-11-30T11:00:00Z)"],
    ["another run", { ...runner, workflowRunId: 9002 }, "arc-runners/r-1 is on run 9002, not run 9001: the runner moved on"],
  ])("refuses a runner with %s", async (_what, cached, why) => {
    const { d, calls } = desk({ cached: [cached] });
    expect(await d.apply(order)).toMatchObject({ outcome: "refused", why });
    expect(calls).toEqual([]);
  });

  it("deletes for cause failed only a runner still Failed and on no run, and reports the cause", async () => {
    const ok = desk({ cached: [failedRunner] });
    expect(await ok.d.apply(failedOrder)).toMatchObject({ outcome: "deleted" });
    expect(ok.lines[0]?.fields).toMatchObject({ cause: "failed" });
    expect(ok.lines[0]?.fields).not.toHaveProperty("runId");
    const notFailed = desk({ cached: [{ ...failedRunner, arc: { phase: "Running" } } as AgentRunner] });
    expect(await notFailed.d.apply(failedOrder)).toMatchObject({
      outcome: "refused",
      why: "arc-runners/r-1 is not Failed (anymore): only a Failed runner is deleted for cause failed",
    });
    const noArc = desk({ cached: [{ ...runner, workflowRunId: undefined } as AgentRunner] });
    expect((await noArc.d.apply(failedOrder)).outcome).toBe("refused");
    const onRun = desk({ cached: [{ ...failedRunner, workflowRunId: 77 }] });
    expect(await onRun.d.apply(failedOrder)).toMatchObject({
      outcome: "refused",
      why: "arc-runners/r-1 is Failed but on run 77: only a Failed runner without a run is deleted",
    });
    expect([notFailed.calls, noArc.calls, onRun.calls]).toEqual([[], [], []]);
  });

  it("in a dry run refuses what it would delete", async () => {
    const { d, calls } = desk({ cached: [runner], dryRun: true });
    expect(await d.apply(order)).toMatchObject({ outcome: "refused", why: "dry run" });
    expect(calls).toEqual([]);
  });

  it("answers a second order for a deleted uid with the same outcome, without a second DELETE", async () => {
    const { d, calls } = desk({ cached: [runner] });
    await d.apply(order);
    expect(await d.apply({ ...order, id: "ord-9" })).toEqual({
      type: "report",
      id: "ord-9",
      uid: UID,
      outcome: "deleted",
      why: "deleted with uid precondition (already done for an earlier order; no second DELETE)",
    });
    expect(calls).toEqual([`delete arc-runners/r-1 ${UID}`]);
  });

  it("retries a failed DELETE on a later order, and logs the failure as a warning", async () => {
    const { d, calls, lines } = desk({ cached: [runner], deletes: [{ outcome: "failed", why: "HTTP 500" }] });
    expect(await d.apply(order)).toMatchObject({ outcome: "failed", why: "HTTP 500" });
    expect(lines[0]?.level).toBe("warn");
    expect(await d.apply(order)).toMatchObject({ outcome: "deleted", why: "deleted again" });
    expect(calls).toHaveLength(2);
  });

  it("remembers the last 10,000 uids, forgetting the oldest", async () => {
    const kubeDeletes: string[] = [];
    const view = new RunnerView(["arc-runners"]);
    const runners = Array.from({ length: 10_001 }, (_, i) => ({ ...runner, name: `r-${i}`, uid: `u-${i}` }));
    view.replace("arc-runners", runners);
    const big = new OrderDesk({
      view,
      kube: {
        delete: async (_ns: string, _n: string, uid: string) => {
          kubeDeletes.push(uid);
          return { outcome: "deleted", why: "ok" };
        },
      } as unknown as KubeRunners,
      dryRun: false,
      log: () => undefined,
    });
    for (const r of runners) await big.apply({ ...order, name: r.name, uid: r.uid });
    await big.apply({ ...order, name: "r-10000", uid: "u-10000" });
    await big.apply({ ...order, name: "r-1", uid: "u-1" });
    await big.apply({ ...order, name: "r-0", uid: "u-0" });
    // u-0 was forgotten (a second DELETE); u-1 and u-10000 are still remembered.
    expect(kubeDeletes.slice(10_001)).toEqual(["u-0"]);
  });
});
