import { describe, expect, it } from "vitest";
import type { UnseenRunner } from "../../../src/model/runner.ts";
import type { ClusterNamespace, Lookup } from "../../../src/model/view.ts";
import { identifyTracked, identifyUnseen } from "../../../src/reaper/identify.ts";
import { facts, iso, lookup, obj, T0 } from "../support/identity-fixtures.ts";

describe("identifyTracked (plain Node)", () => {
  it("the issue's bug: the only object of the name is idle in arc-a, created before the job started: never the facts' runner, which is gone on fresh evidence", () => {
    const view = identifyTracked(facts(), lookup([obj({ namespace: "arc-a" })]));
    expect(view).toEqual({ kind: "missing", why: "runner r-1 is no longer in the cluster (only objects of its name that are not it: arc-a (idle))" });
  });

  it("an idle object while the view is older than the facts: kept as unknown (stale)", () => {
    const view = identifyTracked(facts(), lookup([obj({ namespace: "arc-a" })], { asOf: T0 - 120_000 }));
    expect(view).toMatchObject({ kind: "unknown", stale: true });
  });

  it("an object on another run is moved on, never the facts' runner", () => {
    expect(identifyTracked(facts(), lookup([obj({ namespace: "arc-a", workflowRunId: 8 })]))).toMatchObject({
      kind: "missing",
      why: expect.stringContaining("arc-a (on run 8)"),
    });
  });

  it("the object busy on the facts' run is named, and the very uid seen busy even when idle now", () => {
    const busy = obj({ namespace: "arc-b", workflowRunId: 7 });
    expect(identifyTracked(facts(), lookup([obj({ namespace: "arc-a" }), busy]))).toEqual({ kind: "found", runner: busy });
    const same = obj({ namespace: "arc-a", uid: "u-seen" });
    expect(identifyTracked(facts({ uid: "u-seen", namespace: "arc-a", cluster: "default" }), lookup([same]))).toEqual({ kind: "found", runner: same });
  });

  it("an object created after the job started is named so the judge closes the facts as replaced (it deletes nothing)", () => {
    const fresh = obj({ namespace: "arc-a", createdAt: iso(T0 - 60_000) });
    expect(identifyTracked(facts(), lookup([fresh]))).toEqual({ kind: "found", runner: fresh });
  });

  it("two objects busy on the facts' run are ambiguous", () => {
    expect(identifyTracked(facts(), lookup([obj({ namespace: "arc-a", workflowRunId: 7 }), obj({ namespace: "arc-b", workflowRunId: 7 })]))).toMatchObject({
      kind: "unknown",
      why: expect.stringContaining("ambiguous"),
    });
  });

  it("a row whose cluster is known is never closed by another cluster's view: kept, held for its agent", () => {
    const view = identifyTracked(
      facts({ uid: "u-ap", namespace: "arc-a", cluster: "ap-south" }),
      lookup([], { places: [{ cluster: "eu", namespace: "arc-a" }] }),
    );
    expect(view).toMatchObject({ kind: "unknown", agent: true, why: expect.stringContaining("was seen in cluster ap-south, which has no view now") });
  });

  it("a row of a retired cluster (the operator's word, no agent of it): missing, saying so; never by another cluster's view alone", () => {
    const row = facts({ uid: "u-ap", namespace: "arc-a", cluster: "ap-south" });
    const look = lookup([], { places: [{ cluster: "eu", namespace: "arc-a" }] });
    expect(identifyTracked(row, { ...look, retired: (c) => c === "ap-south" })).toEqual({
      kind: "missing",
      why: "runner r-1 was in cluster ap-south, which is retired (not in AGENT_CLUSTERS, no agent of it connected)",
    });
    expect(identifyTracked(row, { ...look, retired: () => false })).toMatchObject({ kind: "unknown", agent: true });
    expect(identifyUnseen({ ...unseen, cluster: "ap-south" }, { ...look, retired: () => true })).toMatchObject({ kind: "missing" });
  });

  it("a place that could not be read leaves a row of no known place open", () => {
    const view = identifyTracked(facts(), lookup([], { unreadable: [{ place: { cluster: "default", namespace: "arc-b" }, why: "arc-b: HTTP 503" }] }));
    expect(view).toEqual({ kind: "unknown", why: "arc-b: HTTP 503", agent: undefined });
  });
});

/** A busy runner first seen a minute ago, no webhook about it yet. */
const unseen: UnseenRunner = {
  name: "r-1",
  uid: "uid-arc-a",
  cluster: "default",
  namespace: "arc-a",
  runId: 7,
  repo: "o/r",
  firstSeen: T0 - 60_000,
  dueAt: null,
  reason: null,
};

describe("identifyUnseen (plain Node)", () => {
  it("finds the very object by uid, and another object of the name is not it", () => {
    const it1 = obj({ namespace: "arc-a" });
    expect(identifyUnseen(unseen, lookup([obj({ namespace: "arc-b" }), it1]))).toEqual({ kind: "found", runner: it1 });
    expect(identifyUnseen(unseen, lookup([obj({ namespace: "arc-a", uid: "uid-new" })]))).toEqual({ kind: "missing" });
  });

  it("keeps when its own cluster could not be read, saying why and whether the agent is away", () => {
    const unreadable = [{ place: { cluster: "default", namespace: "arc-a" }, why: "arc-a: HTTP 503" }];
    expect(identifyUnseen(unseen, { ...lookup([], { unreadable }), agentAway: true })).toEqual({ kind: "unknown", why: "arc-a: HTTP 503", agent: true });
    // Another cluster's unreadable place says nothing of this one: absence decides.
    const elsewhere = [{ place: { cluster: "eu", namespace: "arc-a" }, why: "eu/arc-a: HTTP 503" }];
    expect(identifyUnseen(unseen, lookup([], { unreadable: elsewhere }))).toEqual({ kind: "missing" });
  });

  it("a view not newer than when it was seen busy says nothing: kept as stale, with both times", () => {
    expect(identifyUnseen(unseen, lookup([], { asOf: T0 - 60_000 }))).toEqual({
      kind: "unknown",
      why: `runner r-1 is not in the view, but the view (as of ${iso(T0 - 60_000)}) is not newer than its last fact (${iso(T0 - 60_000)}): kept until a fresh look`,
      agent: true,
      stale: true,
    });
    expect(identifyUnseen(unseen, lookup([], { asOf: T0 - 59_999 }))).toEqual({ kind: "missing" });
  });

  it("its cluster with no view at all: kept for the agent, naming the cluster", () => {
    expect(identifyUnseen({ ...unseen, cluster: "eu" }, lookup([]))).toEqual({
      kind: "unknown",
      why: "runner r-1 was seen in cluster eu, which has no view now: kept until it has one",
      agent: true,
    });
  });
});

describe("identify's edges: places, clusters and the words of its answers (plain Node)", () => {
  const east = (ns: string): ClusterNamespace => ({ cluster: "east", namespace: ns });
  const west = (ns: string): ClusterNamespace => ({ cluster: "west", namespace: ns });
  const down = (p: ClusterNamespace, why = `${p.cluster}/${p.namespace}: HTTP 503`) => ({ place: p, why });
  const places = [east("arc-a"), west("arc-a")];

  it("the very uid is found even while another place could not be read, and even when it is idle now", () => {
    const same = obj({ namespace: "arc-a", cluster: "east", uid: "u-seen" });
    const view = identifyTracked(facts({ uid: "u-seen", cluster: "east", namespace: "arc-a" }), lookup([same], { places, unreadable: [down(west("arc-a"))] }));
    expect(view).toEqual({ kind: "found", runner: same });
  });

  it("the one object busy on the run is found when only another cluster could not be read, and kept when its own could not", () => {
    const busy = obj({ namespace: "arc-a", cluster: "east", workflowRunId: 7 });
    expect(identifyTracked(facts(), lookup([busy], { places, unreadable: [down(west("arc-a"))] }))).toEqual({ kind: "found", runner: busy });
    expect(
      identifyTracked(
        facts(),
        lookup([busy], { places, unreadable: [down(east("arc-b"), "east/arc-b: HTTP 503"), down(west("arc-a"), "west/arc-a: timed out")] }),
      ),
    ).toEqual({
      kind: "unknown",
      why: "east/arc-b: HTTP 503; west/arc-a: timed out",
      agent: undefined,
    });
  });

  it("ambiguity names each place, the cluster before the namespace outside the default cluster", () => {
    const a = obj({ namespace: "arc-a", cluster: "east", workflowRunId: 7, uid: "u-a" });
    const b = obj({ namespace: "arc-b", cluster: "default", workflowRunId: 7, uid: "u-b" });
    expect(identifyTracked(facts(), lookup([a, b], { places }))).toEqual({
      kind: "unknown",
      why: "ambiguous: runners named r-1 in east/arc-a, arc-b, busy on run 7; kept, checked again",
    });
  });

  it("a row seen in a known cluster (uid and namespace, no cluster recorded: the default one) is not held by another cluster's failure", () => {
    const row = facts({ uid: "u-gone", namespace: "arc-a" });
    const fresh = lookup([], { places: [{ cluster: "default", namespace: "arc-a" }, west("arc-a")], unreadable: [down(west("arc-a"))] });
    expect(identifyTracked(row, fresh)).toEqual({ kind: "missing" });
    const ownDown = lookup([], {
      places: [{ cluster: "default", namespace: "arc-a" }],
      unreadable: [down({ cluster: "default", namespace: "arc-b" }, "arc-b: HTTP 403")],
    });
    expect(identifyTracked(row, ownDown)).toMatchObject({ kind: "unknown", why: "arc-b: HTTP 403" });
  });

  it("a row of no known place is held by any place that could not be read, naming why and whether the agent is away", () => {
    const l = { ...lookup([], { places, unreadable: [down(west("arc-a"), "west/arc-a: the agent is away")] }), agentAway: true };
    expect(identifyTracked(facts(), l)).toEqual({ kind: "unknown", why: "west/arc-a: the agent is away", agent: true });
  });

  it("the one object that cannot be the job's runner (created after the job started) is named alone; beside another object it is only listed", () => {
    const late = obj({ namespace: "arc-a", createdAt: iso(T0 - 60_000), uid: "u-late" });
    expect(identifyTracked(facts(), lookup([late]))).toEqual({ kind: "found", runner: late });
    const idle = obj({ namespace: "arc-b", uid: "u-idle" });
    expect(identifyTracked(facts(), lookup([late, idle]))).toEqual({
      kind: "missing",
      why: "runner r-1 is no longer in the cluster (only objects of its name that are not it: arc-a (idle), arc-b (idle))",
    });
  });

  it("absence is dated by the row's own place once its cluster is known, and the stale answer gives both times", () => {
    const asked: (ClusterNamespace | undefined)[] = [];
    const l: Lookup = {
      found: [],
      unreadable: [],
      absentAsOf: (p) => {
        asked.push(p);
        return T0 - 120_000;
      },
    };
    const view = identifyTracked(facts({ cluster: "east", namespace: "arc-a" }), l);
    expect(asked).toEqual([{ cluster: "east", namespace: "arc-a" }]);
    expect(view).toEqual({
      kind: "unknown",
      why: `runner r-1 is not in the view, but the view (as of ${iso(T0 - 120_000)}) is not newer than its last fact (${iso(T0 - 60_000)}): kept until a fresh look`,
      agent: true,
      stale: true,
    });
    // A row of no recorded cluster: the oldest view over every place; no fact time reads "never".
    const none: (ClusterNamespace | undefined)[] = [];
    const older: Lookup = {
      found: [],
      unreadable: [],
      absentAsOf: (p) => {
        none.push(p);
        return 0;
      },
    };
    expect(identifyTracked(facts({ factAt: undefined }), older)).toMatchObject({
      kind: "unknown",
      why: "runner r-1 is not in the view, but the view (as of never) is not newer than its last fact (never): kept until a fresh look",
    });
    expect(none).toEqual([undefined]);
  });

  it("an unseen row: another cluster's failure does not hold it; its own cluster's does", () => {
    const u: UnseenRunner = { ...unseen, uid: "u-1", cluster: "east" };
    expect(identifyUnseen(u, lookup([], { places, unreadable: [down(west("arc-a"))] }))).toEqual({ kind: "missing" });
    expect(identifyUnseen(u, lookup([], { places, unreadable: [down(east("arc-b"), "east/arc-b: HTTP 500")] }))).toMatchObject({
      kind: "unknown",
      why: "east/arc-b: HTTP 500",
    });
    const noCluster = { ...u, cluster: undefined };
    expect(identifyUnseen(noCluster, lookup([], { places, unreadable: [down({ cluster: "default", namespace: "arc-b" }, "arc-b: HTTP 500")] }))).toMatchObject({
      kind: "unknown",
      why: "arc-b: HTTP 500",
    });
  });
});
