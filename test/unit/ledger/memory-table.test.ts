// The ledger's note of how direct mode lists each cluster (src/model/list-shape.ts): written on the first
// refusal of Tables and kept a day (the namespaces of one sweep write it once), gone when Tables serve again,
// per cluster; a ledger from before has none, which reads as Tables.
import { describe, expect, it } from "vitest";
import { MemoryTable } from "../../../src/ledger/memory-table.ts";
import { migrate } from "../../../src/ledger/schema.ts";
import { noteHolds } from "../../../src/model/list-shape.ts";
import { nodeSql } from "../support/node-sql.ts";

const T0 = Date.parse("2026-12-03T10:00:00Z");
const DAY = 86_400_000;

function memory(): MemoryTable {
  const { sql } = nodeSql();
  migrate(sql);
  return new MemoryTable(sql);
}

describe("MemoryTable.listShape", () => {
  it("has no note in a fresh ledger: the cluster lists as Tables", () => {
    const m = memory();
    expect(m.listShape("default").note()).toBeUndefined();
  });

  it("keeps the first refusal for a day, then takes a new one; forgets it when Tables serve", () => {
    const m = memory();
    const shape = m.listShape("default");
    shape.refused("HTTP 406: only the following media types are accepted", T0);
    shape.refused("the Table has no Message column (an older CRD?)", T0 + 1000);
    expect(shape.note()).toEqual({ shape: "full", since: T0, why: "HTTP 406: only the following media types are accepted" });
    expect(noteHolds(shape.note(), T0 + DAY - 1)).toBe(true);
    expect(noteHolds(shape.note(), T0 + DAY)).toBe(false);
    shape.refused("the Table has no Message column (an older CRD?)", T0 + DAY);
    expect(shape.note()).toEqual({ shape: "full", since: T0 + DAY, why: "the Table has no Message column (an older CRD?)" });
    shape.served();
    expect(shape.note()).toBeUndefined();
  });

  it("keeps one note per cluster, its reason bounded", () => {
    const m = memory();
    m.listShape("eu").refused("x".repeat(1000), T0);
    m.listShape("us").refused("HTTP 406", T0 + 5);
    expect(m.listShape("eu").note()?.why).toHaveLength(300);
    expect(m.listShape("us").note()).toEqual({ shape: "full", since: T0 + 5, why: "HTTP 406" });
    expect(m.listShape("ap").note()).toBeUndefined();
  });
});

describe("MemoryTable: 'runner ids match' per cluster identity", () => {
  it("a ledger of the release before (the match kept per name) trusts nothing until a match is seen under the cluster's identity", () => {
    const m = memory();
    m.set("runner-ids-match", { default: T0 }); // as the previous release stored it
    expect(m.runnerIdsMatch()).toEqual({});
    m.runnerIdsMatched(["default"], T0 + 1); // no identity known: proves nothing
    expect(m.runnerIdsMatch()).toEqual({});
    m.noteClusterIdentity("default", { uid: "uid-a", source: "kube-system", url: "https://a", at: T0 + 2 });
    m.runnerIdsMatched(["default"], T0 + 3);
    expect(m.runnerIdsMatch()).toEqual({ default: T0 + 3 });
  });

  it("a change of identity is answered, kept beside the new one, and forgets the old identity's match; the same identity again changes nothing", () => {
    const m = memory();
    m.noteClusterIdentity("eu", { uid: "uid-a", source: "agent", at: T0 });
    m.runnerIdsMatched(["eu"], T0 + 1);
    expect(m.noteClusterIdentity("eu", { uid: "uid-a", source: "agent", at: T0 + 2 })).toEqual({});
    expect(m.runnerIdsMatch()).toEqual({ eu: T0 + 1 });
    expect(m.noteClusterIdentity("eu", { uid: "uid-b", source: "agent", at: T0 + 3 })).toEqual({ changedFrom: "uid-a" });
    expect(m.runnerIdsMatch()).toEqual({});
    expect(m.clusterIdentity("eu")).toMatchObject({ uid: "uid-b", previous: "uid-a", changedAt: T0 + 3 });
    // Back to cluster A: its match was forgotten with the change.
    expect(m.noteClusterIdentity("eu", { uid: "uid-a", source: "agent", at: T0 + 4 })).toEqual({ changedFrom: "uid-b" });
    expect(m.runnerIdsMatch()).toEqual({});
  });

  it("an unknown identity (an agent that says none, kube-system forbidden) trusts nothing; the next known one is compared with the last known", () => {
    const m = memory();
    m.noteClusterIdentity("eu", { uid: "uid-a", source: "agent", at: T0 });
    m.runnerIdsMatched(["eu"], T0 + 1);
    m.noteClusterIdentity("eu", { source: "agent", at: T0 + 2, why: "no identity in hello" });
    expect(m.runnerIdsMatch()).toEqual({});
    m.runnerIdsMatched(["eu"], T0 + 3); // proves nothing while unknown
    expect(m.noteClusterIdentity("eu", { uid: "uid-a", source: "agent", at: T0 + 4 })).toEqual({});
    expect(m.runnerIdsMatch()).toEqual({ eu: T0 + 1 });
    expect(m.noteClusterIdentity("eu", { uid: "uid-c", source: "agent", at: T0 + 5 })).toEqual({ changedFrom: "uid-a" });
    // Several clusters: each by its own identity.
    m.noteClusterIdentity("us", { uid: "uid-us", source: "agent", at: T0 });
    m.runnerIdsMatched(["us", "eu"], T0 + 6);
    expect(m.runnerIdsMatch()).toEqual({ us: T0 + 6, eu: T0 + 6 });
    expect(Object.keys(m.clusterIdentities()).sort()).toEqual(["eu", "us"]);
  });
});
