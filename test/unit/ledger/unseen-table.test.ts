// The unseen table's "never judged": null in code, '' in storage (the column's default, and what
// every never-judged row stored before null held), so rows from before read as they meant.
import { describe, expect, it } from "vitest";
import { migrate } from "../../../src/ledger/schema.ts";
import { UnseenTable } from "../../../src/ledger/unseen-table.ts";
import type { UnseenRunner } from "../../../src/model/runner.ts";
import { nodeSql } from "../support/node-sql.ts";

const row = (over: Partial<UnseenRunner> = {}): UnseenRunner => ({
  name: "r-1",
  uid: "u-1",
  cluster: "default",
  namespace: "arc-a",
  runId: 7,
  repo: "octo/repo",
  firstSeen: 1_000,
  dueAt: 2_000,
  reason: null,
  ...over,
});

describe("UnseenTable: never judged", () => {
  it("a row stored before with reason '' reads as never judged; a judged one keeps its reason", () => {
    const { sql, db } = nodeSql();
    migrate(sql);
    const insert = db.prepare(
      "INSERT INTO unseen (name, uid, namespace, run_id, repo, first_seen, due_at, reason) VALUES (?, ?, 'arc-a', 7, NULL, 1000, ?, ?)",
    );
    insert.run("old-fresh", "u-1", 2_000, "");
    insert.run("old-judged", "u-2", 1_500, "GitHub lists no job of run 7 for runner old-judged");
    const byName = new Map(new UnseenTable(sql).all().map((u) => [u.name, u]));
    expect(byName.get("old-fresh")?.reason).toBeNull();
    expect(byName.get("old-judged")?.reason).toBe("GitHub lists no job of run 7 for runner old-judged");
    expect(new UnseenTable(sql).due(1_600, 10).map((u) => [u.name, u.reason])).toEqual([["old-judged", "GitHub lists no job of run 7 for runner old-judged"]]);
  });

  it("writes never judged as '' (what an older release reads as never judged), and reads it back as null", () => {
    const { sql, db } = nodeSql();
    migrate(sql);
    const table = new UnseenTable(sql);
    table.put(row());
    expect(db.prepare("SELECT reason FROM unseen").all()).toEqual([{ reason: "" }]);
    expect(table.all()).toEqual([row()]);
    table.put(row({ reason: "waiting for its webhook" }));
    expect(table.all()).toEqual([row({ reason: "waiting for its webhook" })]);
  });
});
