// How the reaper looks at the cluster (look.ts) on plain Node: reads by name and
// lists over several places, errors naming their place, and how fresh an absence is.
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../src/cluster/ephemeral-runners.ts";
import { ClusterError } from "../../../src/cluster/ephemeral-runners.ts";
import type { ClusterRunner } from "../../../src/model/runner.ts";
import { clusterOf, listWatched, readByName, type WatchedCluster } from "../../../src/reaper/look.ts";

const runner = (namespace: string, name: string, uid: string): ClusterRunner => ({ namespace, name, uid });

/** A cluster over fixed namespaces; `broken` namespaces throw; `asOf` makes it a view (the agent's). */
function cluster(o: {
  objects: Record<string, ClusterRunner[]>;
  broken?: string[];
  errorKind?: "cluster" | "agent";
  asOf?: (ns: string, name: string) => number;
}) {
  const reads: { ns: string; name: string; since?: number }[] = [];
  const c: Cluster = {
    errorKind: o.errorKind,
    async listRunners(ns) {
      if (o.broken?.includes(ns)) throw new ClusterError(503, `${ns} is down`);
      return o.objects[ns] ?? [];
    },
    async readRunner(ns, name, since) {
      reads.push({ ns, name, since });
      if (o.broken?.includes(ns)) throw new ClusterError(503, `${ns} is down`);
      return (o.objects[ns] ?? []).find((r) => r.name === name);
    },
    async deleteRunner() {
      return { kind: "gone" };
    },
  };
  if (o.asOf) c.viewAsOf = o.asOf;
  return { c, reads };
}

describe("clusterOf", () => {
  it("finds a runner's cluster by name; an unnamed runner lives in default", () => {
    const a: WatchedCluster = { name: "default", cluster: cluster({ objects: {} }).c, namespaces: ["x"] };
    const b: WatchedCluster = { name: "east", cluster: cluster({ objects: {} }).c, namespaces: ["x"] };
    expect(clusterOf([a, b], {})).toBe(a);
    expect(clusterOf([a, b], { cluster: "east" })).toBe(b);
    expect(clusterOf([a, b], { cluster: "west" })).toBeUndefined();
  });
});

describe("readByName", () => {
  it("reads the name in every place, with the row's last fact; names each object's cluster; absence as of when the read was sent", async () => {
    const d = cluster({ objects: { a: [runner("a", "r-1", "u-1")], b: [] } });
    const e = cluster({ objects: { c: [runner("c", "r-1", "u-2")] } });
    const before = Date.now();
    const lookup = await readByName(
      [
        { name: "default", cluster: d.c, namespaces: ["a", "b"] },
        { name: "east", cluster: e.c, namespaces: ["c"] },
      ],
      "r-1",
      1234,
    );
    const after = Date.now();
    expect(d.reads).toEqual([
      { ns: "a", name: "r-1", since: 1234 },
      { ns: "b", name: "r-1", since: 1234 },
    ]);
    expect(lookup.found.map((r) => `${r.cluster}/${r.namespace}/${r.uid}`).sort()).toEqual(["default/a/u-1", "east/c/u-2"]);
    expect(lookup.unreadable).toEqual([]);
    expect(lookup.agentAway).toBeUndefined();
    const b = lookup.absentAsOf({ cluster: "default", namespace: "b" });
    expect(b).toBeGreaterThanOrEqual(before);
    expect(b).toBeLessThanOrEqual(after);
    expect(lookup.absentAsOf()).toBeGreaterThanOrEqual(before);
  });

  it("a view's own time for an absence (the agent's), per place; a cluster not looked in is no evidence", async () => {
    const v = cluster({ objects: {}, asOf: (ns) => (ns === "a" ? 500 : 700) });
    const lookup = await readByName([{ name: "east", cluster: v.c, namespaces: ["a", "b"] }], "r-9");
    expect(lookup.absentAsOf({ cluster: "east", namespace: "a" })).toBe(500);
    expect(lookup.absentAsOf({ cluster: "east", namespace: "b" })).toBe(700);
    // A place of the cluster not looked in: the oldest of its places.
    expect(lookup.absentAsOf({ cluster: "east", namespace: "zzz" })).toBe(500);
    // A cluster not looked in at all: 0.
    expect(lookup.absentAsOf({ cluster: "west", namespace: "a" })).toBe(0);
    // All places: the oldest.
    expect(lookup.absentAsOf()).toBe(500);
  });

  it("no place at all: an absence certain for ever over all, never in a named place", async () => {
    const lookup = await readByName([], "r-1");
    expect(lookup.absentAsOf()).toBe(Number.POSITIVE_INFINITY);
    expect(lookup.absentAsOf({ cluster: "default", namespace: "a" })).toBe(0);
  });

  it("an unreadable place: its error names the place when there are several, its absence is no evidence", async () => {
    const d = cluster({ objects: { a: [] }, broken: ["b"] });
    const e = cluster({ objects: {}, broken: ["c"], errorKind: "agent" });
    const lookup = await readByName(
      [
        { name: "default", cluster: d.c, namespaces: ["a", "b"] },
        { name: "east", cluster: e.c, namespaces: ["c"] },
      ],
      "r-1",
    );
    expect(lookup.unreadable).toEqual([
      { place: { cluster: "default", namespace: "b" }, why: "b: b is down" },
      { place: { cluster: "east", namespace: "c" }, why: "east/c: c is down" },
    ]);
    expect(lookup.absentAsOf({ cluster: "default", namespace: "b" })).toBe(0);
    expect(lookup.absentAsOf({ cluster: "east", namespace: "c" })).toBe(0);
    expect(lookup.absentAsOf()).toBe(0);
    expect(lookup.agentAway).toBe(true);
  });

  it("one place only: its error is the error alone; a cluster's error is not an agent away", async () => {
    const d = cluster({ objects: {}, broken: ["a"], errorKind: "cluster" });
    const lookup = await readByName([{ name: "default", cluster: d.c, namespaces: ["a"] }], "r-1");
    expect(lookup.unreadable).toEqual([{ place: { cluster: "default", namespace: "a" }, why: "a is down" }]);
    expect(lookup.agentAway).toBeUndefined();
  });
});

describe("listWatched", () => {
  it("lists each place once; a name's objects over all places; every name seen", async () => {
    const d = cluster({ objects: { a: [runner("a", "r-1", "u-1"), runner("a", "r-2", "u-2")], b: [runner("b", "r-1", "u-3")] } });
    const before = Date.now();
    const listing = await listWatched([{ name: "default", cluster: d.c, namespaces: ["a", "b"] }]);
    expect([...listing.names()].sort()).toEqual(["r-1", "r-2"]);
    const r1 = listing.lookup("r-1");
    expect(r1.found.map((r) => `${r.cluster}/${r.namespace}/${r.uid}`).sort()).toEqual(["default/a/u-1", "default/b/u-3"]);
    expect(r1.unreadable).toEqual([]);
    expect(r1.agentAway).toBe(false);
    expect(listing.lookup("r-9").found).toEqual([]);
    expect(listing.lookup("r-9").absentAsOf({ cluster: "default", namespace: "a" })).toBeGreaterThanOrEqual(before);
    expect(d.reads).toEqual([]);
  });

  it("a view answers absence per name; an unreadable place is no evidence and marks the agent away", async () => {
    const v = cluster({ objects: {}, broken: ["b"], errorKind: "agent", asOf: (_ns, name) => (name === "r-1" ? 100 : 200) });
    const listing = await listWatched([{ name: "east", cluster: v.c, namespaces: ["a", "b"] }]);
    expect(listing.lookup("r-1").absentAsOf({ cluster: "east", namespace: "a" })).toBe(100);
    expect(listing.lookup("r-2").absentAsOf({ cluster: "east", namespace: "a" })).toBe(200);
    expect(listing.lookup("r-2").absentAsOf({ cluster: "east", namespace: "b" })).toBe(0);
    expect(listing.lookup("r-2").unreadable).toEqual([{ place: { cluster: "east", namespace: "b" }, why: "east/b: b is down" }]);
    expect(listing.lookup("r-2").agentAway).toBe(true);
  });
});
