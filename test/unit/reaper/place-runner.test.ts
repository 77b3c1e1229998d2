// Where a due runner is read (place-runner.ts): its row's cluster, else the cluster whose view shows the facts'
// runner, else every watched cluster.
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../src/cluster/ephemeral-runners.ts";
import type { ClusterRunner, TrackedRunner, UnseenRunner } from "../../../src/model/runner.ts";
import type { WatchedCluster } from "../../../src/reaper/look.ts";
import { placeRunner } from "../../../src/reaper/place-runner.ts";

const tracked = (over: Partial<TrackedRunner> = {}): TrackedRunner => ({ runner: "r-1", repo: "o/r", runId: 7, runAttempt: 1, jobId: 70, ...over });
const obj = (over: Partial<ClusterRunner> = {}): ClusterRunner => ({ name: "r-1", namespace: "arc", uid: "u-1", ...over });

function cluster(name: string, view?: Record<string, ClusterRunner>): WatchedCluster {
  const c: Cluster = {
    listRunners: async () => [],
    readRunner: async () => undefined,
    deleteRunner: async () => ({ kind: "deleted" }),
    ...(view ? { inView: (_ns: string, n: string) => view[n] } : {}),
  };
  return { name, cluster: c, namespaces: ["arc"] };
}

const names = (ws: readonly WatchedCluster[]) => ws.map((w) => w.name);

describe("placeRunner", () => {
  it("one cluster: that one, whatever is known", () => {
    const one = [cluster("a")];
    expect(placeRunner(one, { tracked: tracked({ cluster: "elsewhere" }) })).toBe(one);
  });

  it("a row's or an unseen row's recorded cluster, when watched; not watched: every cluster", () => {
    const all = [cluster("a"), cluster("b")];
    expect(names(placeRunner(all, { tracked: tracked({ cluster: "b" }) }))).toEqual(["b"]);
    const unseen: UnseenRunner = { name: "r-1", uid: "u", cluster: "a", namespace: "arc", runId: 7, repo: "o/r", firstSeen: 0, dueAt: null, reason: null };
    expect(names(placeRunner(all, { unseen }))).toEqual(["a"]);
    expect(placeRunner(all, { tracked: tracked({ cluster: "gone" }) })).toBe(all);
    expect(placeRunner(all, { unseen: { ...unseen, cluster: undefined } })).toBe(all);
  });

  it("no row cluster: the view that shows the facts' runner (busy on its run, or its runner id)", () => {
    const all = [cluster("a", { "r-1": obj({ workflowRunId: 8 }) }), cluster("b", { "r-1": obj({ uid: "u-2", workflowRunId: 7 }) })];
    expect(names(placeRunner(all, { tracked: tracked() }))).toEqual(["b"]);
    const byId = [cluster("a", { "r-1": obj({ runnerId: 11 }) }), cluster("b", {})];
    expect(names(placeRunner(byId, { tracked: tracked({ runnerId: 11 }) }))).toEqual(["a"]);
  });

  it("no view shows it, views that cannot say (direct mode), or two views that each could be it: every cluster", () => {
    const none = [cluster("a", {}), cluster("b", {})];
    expect(placeRunner(none, { tracked: tracked() })).toBe(none);
    const direct = [cluster("a"), cluster("b")];
    expect(placeRunner(direct, { tracked: tracked() })).toBe(direct);
    const twins = [cluster("a", { "r-1": obj({ workflowRunId: 7 }) }), cluster("b", { "r-1": obj({ uid: "u-2", workflowRunId: 7 }) })];
    expect(placeRunner(twins, { tracked: tracked() })).toBe(twins);
    const idle = [cluster("a", { "r-1": obj() }), cluster("b", {})];
    expect(placeRunner(idle, { tracked: tracked() })).toBe(idle);
  });
});
