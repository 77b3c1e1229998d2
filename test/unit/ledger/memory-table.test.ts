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
