// Finish orders (REAPER_FINISH_STUCK): the agent reads the held object and removes only ARC's finalizers (src/agent/finish-orders.ts).
import { describe, expect, it } from "vitest";
import type { AgentRunner, FinishOrder } from "../../../src/cluster/agent-protocol.ts";
import { applyFinish } from "../../../src/agent/finish-orders.ts";
import type { FinishResult, KubeRunners } from "../../../src/agent/kube-runners.ts";

const UID = "0b3c6a52-71c4-4d7e-9a59-2f1b7a6c9e10";
const ARC = "ephemeralrunner.actions.github.com/finalizer";
const held: AgentRunner = {
  namespace: "arc-runners",
  name: "r-1",
  uid: UID,
  creationTimestamp: "2026-11-30T10:00:00Z",
  deletionTimestamp: "2026-11-30T11:00:00Z",
};
const order: FinishOrder = { type: "finish", id: "fin-1", namespace: "arc-runners", name: "r-1", uid: UID, reason: "job 5 completed" };

function finish(read: { runner: AgentRunner; finalizers: string[] } | null | Error, opts: { dryRun?: boolean; result?: FinishResult } = {}) {
  const calls: unknown[][] = [];
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const kube = {
    readHeld: async (ns: string, name: string) => {
      calls.push(["readHeld", ns, name]);
      if (read instanceof Error) throw read;
      return read;
    },
    finish: async (...args: unknown[]) => {
      calls.push(["finish", ...args]);
      return opts.result ?? { outcome: "finished", why: "finalizers removed" };
    },
  } as unknown as KubeRunners;
  const run = () =>
    applyFinish(order, {
      namespaces: ["arc-runners", "team-b"],
      kube,
      dryRun: opts.dryRun ?? false,
      log: (level, msg, fields) => void lines.push({ level, msg, fields }),
    });
  return { run, calls, lines };
}

describe("applyFinish", () => {
  it("removes ARC's finalizers of the held object, by uid, and reports and logs it", async () => {
    const f = finish({ runner: held, finalizers: [ARC, "actions.github.com/cleanup-protection"] });
    expect(await f.run()).toEqual({ type: "finish-report", id: "fin-1", uid: UID, outcome: "finished", why: "finalizers removed" });
    expect(f.calls).toEqual([
      ["readHeld", "arc-runners", "r-1"],
      ["finish", "arc-runners", "r-1", UID, [ARC, "actions.github.com/cleanup-protection"]],
    ]);
    expect(f.lines).toEqual([
      {
        level: "info",
        msg: "finish order",
        fields: { id: "fin-1", namespace: "arc-runners", name: "r-1", uid: UID, outcome: "finished", why: "finalizers removed", reason: "job 5 completed" },
      },
    ]);
  });

  it("refuses a namespace that is not the agent's without reading", async () => {
    const f = finish({ runner: held, finalizers: [ARC] });
    const report = await applyFinish(
      { ...order, namespace: "kube-system" },
      { namespaces: ["arc-runners", "team-b"], kube: {} as KubeRunners, dryRun: false, log: () => undefined },
    );
    expect(report).toMatchObject({ outcome: "refused", why: "namespace kube-system is not among this agent's namespaces (arc-runners, team-b)" });
    expect(f.calls).toEqual([]);
  });

  it("answers failed (a warning) when the read fails, naming the object and the error, bounded", async () => {
    const f = finish(new Error(`HTTP 500 ${"y".repeat(400)}`));
    const report = await f.run();
    expect(report).toMatchObject({ outcome: "failed", why: `arc-runners/r-1 could not be read: HTTP 500 ${"y".repeat(291)}` });
    expect(f.lines[0]?.level).toBe("warn");
  });

  it.each([
    ["nothing (404)", null, "gone", "no EphemeralRunner arc-runners/r-1: the API server answered 404 to a read by name"],
    ["another uid", { runner: { ...held, uid: "u-2" }, finalizers: [ARC] }, "gone", `arc-runners/r-1 now has uid u-2, not ${UID}: the held object went`],
    [
      "an object not being deleted",
      { runner: { ...held, deletionTimestamp: undefined }, finalizers: [ARC] },
      "refused",
      "arc-runners/r-1 is not being deleted: nothing to finish",
    ],
    ["no finalizers", { runner: held, finalizers: [] }, "refused", "arc-runners/r-1 has no finalizers left: the API server removes it on its own"],
    [
      "a finalizer not ARC's",
      { runner: held, finalizers: [ARC, "example.com/keep", "kubernetes"] },
      "refused",
      "arc-runners/r-1 has finalizers that are not ARC's (example.com/keep, kubernetes): only ARC's are ever removed",
    ],
  ])("does not patch when the read finds %s", async (_what, read, outcome, why) => {
    const f = finish(read as { runner: AgentRunner; finalizers: string[] } | null);
    expect(await f.run()).toMatchObject({ outcome, why });
    expect(f.calls).toHaveLength(1);
    expect(f.lines[0]?.level).toBe("info");
  });

  it("in a dry run refuses what it would patch", async () => {
    const f = finish({ runner: held, finalizers: [ARC] }, { dryRun: true });
    expect(await f.run()).toMatchObject({ outcome: "refused", why: "dry run" });
    expect(f.calls).toHaveLength(1);
  });

  it("logs a failed patch as a warning", async () => {
    const f = finish({ runner: held, finalizers: [ARC] }, { result: { outcome: "failed", why: "HTTP 500" } });
    expect(await f.run()).toMatchObject({ outcome: "failed", why: "HTTP 500" });
    expect(f.lines[0]?.level).toBe("warn");
  });
});
