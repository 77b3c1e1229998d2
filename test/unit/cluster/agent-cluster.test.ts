// The cluster as the agent shows it (src/cluster/agent-cluster.ts), over a fake of the ledger's agent link.
import { describe, expect, it } from "vitest";
import { AGENT_WHOLE_MARGIN_MS, agentCluster, type AgentPort } from "../../../src/cluster/agent-cluster.ts";
import { ClusterError } from "../../../src/cluster/ephemeral-runners.ts";
import type { ClusterRunner } from "../../../src/model/runner.ts";

const runner = { namespace: "arc-runners", name: "r-1", uid: "u-1", creationTimestamp: "2026-11-30T10:00:00Z" } as ClusterRunner;
const target = { namespace: "arc-runners", name: "r-1", uid: "u-1" };

function port(over: Partial<AgentPort> = {}) {
  const calls: unknown[][] = [];
  const p: AgentPort = {
    unavailable: () => undefined,
    runners: () => [runner],
    wholeAt: () => 0,
    removedAt: () => 0,
    runner: () => undefined,
    read: async (ns, name) => {
      calls.push(["read", ns, name]);
      return true;
    },
    order: async (o) => {
      calls.push(["order", o]);
      return { outcome: "deleted", why: "ok" };
    },
    finish: async (o) => {
      calls.push(["finish", o]);
      return { outcome: "finished", why: "ok" };
    },
    ...over,
  };
  return { cluster: agentCluster(p), calls };
}

describe("agentCluster", () => {
  it("is of kind agent, and lists the agent's view of a namespace", async () => {
    const { cluster } = port();
    expect(cluster.errorKind).toBe("agent");
    expect(await cluster.listRunners("arc-runners")).toEqual([runner]);
  });

  it("fails every call with the agent's reason while its view cannot be used", async () => {
    const { cluster, calls } = port({ unavailable: (ns) => `no agent connected for ${ns}` });
    const error = await cluster.listRunners("arc-runners").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClusterError);
    expect(error).toMatchObject({ status: null, message: "no agent connected for arc-runners" });
    await expect(cluster.readRunner("arc-runners", "r-1")).rejects.toThrow("no agent connected for arc-runners");
    expect(await cluster.deleteRunner(target, { runId: 9 })).toEqual({ kind: "failed", status: null, why: "no agent connected for arc-runners" });
    expect(await cluster.finishDeletion?.(target, [])).toEqual({ kind: "failed", status: null, why: "no agent connected for arc-runners" });
    expect(calls).toEqual([]);
  });

  it("dates absence from the namespace's freshness less the margin, or a later removal", () => {
    const at = (wholeAt: number, removedAt: number) => port({ wholeAt: () => wholeAt, removedAt: () => removedAt }).cluster.viewAsOf?.("arc-runners", "r-1");
    expect(AGENT_WHOLE_MARGIN_MS).toBe(5_000);
    expect(at(100_000, 0)).toBe(95_000);
    expect(at(100_000, 97_000)).toBe(97_000);
    expect(at(0, 0)).toBe(0);
    expect(at(0, 42)).toBe(42);
    expect(at(3_000, 0)).toBe(0);
  });

  it("reads a runner from the view, else asks the agent to read it by name", async () => {
    const inView = port({ runner: () => runner });
    expect(await inView.cluster.readRunner("arc-runners", "r-1")).toEqual(runner);
    expect(inView.calls).toEqual([]);
    let read = false;
    const fetched = port({
      runner: () => (read ? runner : undefined),
      read: async () => {
        read = true;
        return true;
      },
    });
    expect(await fetched.cluster.readRunner("arc-runners", "r-1")).toEqual(runner);
    const absent = port();
    expect(await absent.cluster.readRunner("arc-runners", "r-1")).toBeUndefined();
    expect(absent.calls).toEqual([["read", "arc-runners", "r-1"]]);
  });

  it("reads nothing when the view has known the runner absent since after `since`", async () => {
    const known = port({ wholeAt: () => 100_000 });
    expect(await known.cluster.readRunner("arc-runners", "r-1", 94_999)).toBeUndefined();
    expect(known.calls).toEqual([]);
    const notYet = port({ wholeAt: () => 100_000 });
    await notYet.cluster.readRunner("arc-runners", "r-1", 95_000);
    expect(notYet.calls).toEqual([["read", "arc-runners", "r-1"]]);
  });

  it("orders a delete by run, or by cause failed, with the judge's reason", async () => {
    const { cluster, calls } = port();
    expect(await cluster.deleteRunner(target, { runId: 9001, reason: "run 9001 is cancelled" })).toEqual({ kind: "deleted" });
    expect(await cluster.deleteRunner(target, { cause: "failed", runId: 9001 })).toEqual({ kind: "deleted" });
    expect(await cluster.deleteRunner(target, { runId: 9001, reason: "" })).toEqual({ kind: "deleted" });
    expect(calls).toEqual([
      ["order", { ...target, runId: 9001, reason: "run 9001 is cancelled" }],
      ["order", { ...target, cause: "failed", reason: "condemned by the judge" }],
      ["order", { ...target, runId: 9001, reason: "condemned by the judge" }],
    ]);
  });

  it("orders nothing without a run or a cause", async () => {
    const { cluster, calls } = port();
    expect(await cluster.deleteRunner(target)).toEqual({ kind: "failed", status: null, why: "no run to order the deletion of arc-runners/r-1 by" });
    expect(calls).toEqual([]);
  });

  it.each([
    [undefined, { kind: "failed", status: null, why: "no report from the agent (the next snapshot settles it)" }],
    [{ outcome: "gone", why: "404" }, { kind: "gone" }],
    [
      { outcome: "refused", why: "dry run" },
      { kind: "failed", status: null, why: "the agent refused the order: dry run" },
    ],
    [
      { outcome: "failed", why: "HTTP 500" },
      { kind: "failed", status: null, why: "the agent's delete failed: HTTP 500" },
    ],
  ] as const)("answers the agent's report %j of a delete as %j", async (report, outcome) => {
    const { cluster } = port({ order: async () => report });
    expect(await cluster.deleteRunner(target, { runId: 1 })).toEqual(outcome);
  });

  it("sends a finish order with GitHub's word as the reason", async () => {
    const { cluster, calls } = port();
    expect(await cluster.finishDeletion?.(target, ["x"])).toEqual({ kind: "finished" });
    expect(calls).toEqual([["finish", { ...target, reason: "GitHub says its job completed (REAPER_FINISH_STUCK)" }]]);
  });

  it.each([
    [undefined, { kind: "failed", status: null, why: "no report from the agent (looked at again at the next look)" }],
    [{ outcome: "gone", why: "404" }, { kind: "gone" }],
    [
      { outcome: "refused", why: "not ARC's" },
      { kind: "refused", why: "not ARC's" },
    ],
    [
      { outcome: "conflict", why: "422" },
      { kind: "conflict", why: "422" },
    ],
    [
      { outcome: "failed", why: "HTTP 500" },
      { kind: "failed", status: null, why: "the agent's patch failed: HTTP 500" },
    ],
  ] as const)("answers the agent's report %j of a finish as %j", async (report, outcome) => {
    const { cluster } = port({ finish: async () => report });
    expect(await cluster.finishDeletion?.(target, [])).toEqual(outcome);
  });
});
