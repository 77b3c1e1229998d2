// The agent's watch cache (src/agent/runner-view.ts): RunnerView and the snapshot's parts.
import { describe, expect, it } from "vitest";
import type { AgentRunner } from "../../../src/cluster/agent-protocol.ts";
import { agentRunnerOf, RunnerView, snapshotMessages } from "../../../src/agent/runner-view.ts";
import type { EphemeralRunner } from "../../../src/cluster/ephemeral-runner.ts";

const r = (name: string, over: Partial<AgentRunner> = {}): AgentRunner => ({
  namespace: "arc-runners",
  name,
  uid: `uid-${name}`,
  creationTimestamp: "2026-11-30T10:00:00Z",
  ...over,
});

describe("RunnerView", () => {
  it("watches its namespaces only, and is synced per namespace once listed", () => {
    const v = new RunnerView(["team-b", "arc-runners"]);
    expect([v.watches("arc-runners"), v.watches("kube-system")]).toEqual([true, false]);
    expect([v.synced(), v.synced("arc-runners"), v.synced("team-b")]).toEqual([false, false, false]);
    v.replace("arc-runners", []);
    expect([v.synced(), v.synced("arc-runners"), v.synced("team-b")]).toEqual([false, true, false]);
    v.replace("team-b", []);
    expect(v.synced()).toBe(true);
    expect(v.namespaces).toEqual(["team-b", "arc-runners"]);
  });

  it("lists every runner by namespace then name, and counts them", () => {
    const v = new RunnerView(["team-b", "arc-runners"]);
    v.replace("team-b", [r("b", { namespace: "team-b" }), r("a", { namespace: "team-b" })]);
    v.replace("arc-runners", [r("z"), r("c"), r("m")]);
    expect(v.all().map((x) => `${x.namespace}/${x.name}`)).toEqual(["arc-runners/c", "arc-runners/m", "arc-runners/z", "team-b/a", "team-b/b"]);
    expect(v.size()).toBe(5);
    v.replace("arc-runners", [r("q")]);
    expect(v.all().map((x) => x.name)).toEqual(["q", "a", "b"]);
    expect(v.size()).toBe(3);
    expect(new RunnerView(["x"]).all()).toEqual([]);
  });

  it("upserts into a listed namespace only, saying whether anything the judge needs changed", () => {
    const v = new RunnerView(["arc-runners"]);
    expect(v.upsert(r("a"))).toBe(false); // not listed yet: dropped
    expect(v.get("arc-runners", "a")).toBeUndefined();
    v.replace("arc-runners", []);
    expect(v.upsert(r("a"))).toBe(true);
    expect(v.upsert(r("a"))).toBe(false);
    expect(v.get("arc-runners", "a")).toEqual(r("a"));
    const changes: Partial<AgentRunner>[] = [
      { uid: "other" },
      { creationTimestamp: "2026-11-30T10:00:01Z" },
      { deletionTimestamp: "2026-11-30T11:00:00Z" },
      { runnerId: 5 },
      { workflowRunId: 9001 },
      { jobRepositoryName: "octo/repo" },
      { arc: { phase: "Failed" } } as Partial<AgentRunner>,
    ];
    for (const change of changes) {
      const w = new RunnerView(["arc-runners"]);
      w.replace("arc-runners", [r("a")]);
      expect(w.upsert(r("a", change)), JSON.stringify(change)).toBe(true);
      expect(w.get("arc-runners", "a")).toEqual(r("a", change));
    }
  });

  it("removes a runner only by its own uid, returning it", () => {
    const v = new RunnerView(["arc-runners"]);
    v.replace("arc-runners", [r("a")]);
    expect(v.remove("arc-runners", "a", "uid-other")).toBeUndefined();
    expect(v.remove("team-b", "a", "uid-a")).toBeUndefined();
    expect(v.remove("arc-runners", "b", "uid-b")).toBeUndefined();
    expect(v.get("arc-runners", "a")).toEqual(r("a"));
    expect(v.remove("arc-runners", "a", "uid-a")).toEqual(r("a"));
    expect(v.get("arc-runners", "a")).toBeUndefined();
    expect(v.size()).toBe(0);
  });
});

describe("agentRunnerOf", () => {
  it("carries only the fields a runner has", () => {
    const base = { namespace: "arc-runners", name: "a", uid: "u-1", creationTimestamp: "2026-11-30T10:00:00Z" } as EphemeralRunner;
    expect(agentRunnerOf({ ...base, workflowRunId: 9001 } as EphemeralRunner)).toEqual({ ...base, workflowRunId: 9001 });
    const full = { ...base, deletionTimestamp: "2026-11-30T11:00:00Z", runnerId: 7, workflowRunId: 9001, jobRepositoryName: "octo/repo" } as EphemeralRunner;
    expect(agentRunnerOf(full)).toEqual(full);
  });
});

describe("snapshotMessages", () => {
  it("splits into parts of perPart, the freshness on the last part only", () => {
    const runners = [r("a"), r("b"), r("c"), r("d"), r("e")];
    const fresh = [{ namespace: "arc-runners", wholeMsAgo: 0 }];
    expect(snapshotMessages(runners, "s", 2, fresh)).toEqual([
      { type: "snapshot", id: "s", part: 1, parts: 3, runners: [r("a"), r("b")] },
      { type: "snapshot", id: "s", part: 2, parts: 3, runners: [r("c"), r("d")] },
      { type: "snapshot", id: "s", part: 3, parts: 3, runners: [r("e")], namespaces: fresh },
    ]);
    expect(snapshotMessages(runners.slice(0, 4), "t", 2)).toHaveLength(2);
    expect(snapshotMessages([], "u", 2, fresh)).toEqual([{ type: "snapshot", id: "u", part: 1, parts: 1, runners: [], namespaces: fresh }]);
  });
});
