// Deletions we watch carry their runner row's run (read from the row, not stored
// twice): a row whose job is unknown (0) is asked about its run, never job 0.
import { describe, expect, it } from "vitest";
import { DeletionsTable } from "../../../src/ledger/deletions-table.ts";
import { migrate } from "../../../src/ledger/schema.ts";
import { nodeSql } from "../support/node-sql.ts";

describe("DeletionsTable", () => {
  it("a watch reads its run from its runner row; one whose row is gone has none", () => {
    const { sql } = nodeSql();
    migrate(sql);
    sql.run("INSERT INTO runners (id, runner, job_id, repo, run_id, run_attempt, state) VALUES (7, 'r', 0, 'o/r', 42, 1, 'reaped')");
    const table = new DeletionsTable(sql);
    const w = { name: "r", cluster: "default", namespace: "arc", uid: "u", repo: "o/r", jobId: 0, deletedAt: 1, dueAt: 2, reason: "run 42 is over" };
    table.put({ ...w, rowId: 7 });
    table.put({ ...w, rowId: 8 });
    expect(table.all().map((d) => [d.rowId, d.runId])).toEqual([
      [7, 42],
      [8, undefined],
    ]);
    expect(table.due(2, 10).find((d) => d.rowId === 7)?.runId).toBe(42);
  });
});
