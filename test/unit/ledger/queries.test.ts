// The admin rows of Failed runners carry their decision's code (FAILED_CODES): their story's last entry's,
// which a new code always adds (src/reaper/failed-runners.ts); entries stored before codes name none.
import { describe, expect, it } from "vitest";
import { FailedTable } from "../../../src/ledger/failed-table.ts";
import { ledgerQueries } from "../../../src/ledger/queries.ts";
import { migrate } from "../../../src/ledger/schema.ts";
import type { FailedRunner, FailedStoryEntry } from "../../../src/model/failed.ts";
import { nodeSql } from "../support/node-sql.ts";

const NOW = Date.parse("2026-12-03T10:00:00Z");
const at = new Date(NOW).toISOString();

const failed = (name: string, story: FailedStoryEntry[], o: Partial<FailedRunner> = {}): FailedRunner => ({
  cluster: "default",
  namespace: "arc-a",
  name,
  uid: `u-${name}`,
  failedAt: NOW - 3_600_000,
  firstSeen: NOW - 3_600_000,
  state: "failed",
  reason: story.at(-1)?.what ?? "",
  story,
  ...o,
});

describe("Failed rows' codes in the admin listing and story", () => {
  it("answer their story's last entry's code; null for a row never judged or judged before codes", () => {
    const { sql } = nodeSql();
    migrate(sql);
    const table = new FailedTable(sql);
    table.put(
      failed("f-cap", [
        { at, what: "seen Failed: ARC marked it Failed 3600s ago; due for deletion", source: "sweep", code: "NotDue" },
        { at, what: "deletion cap of 1 in 60s reached, held back", source: "sweep", code: "Cap" },
      ]),
    );
    table.put(failed("f-old", [{ at, what: "seen Failed: ARC marked it Failed 3600s ago", source: "sweep" }]));
    table.put(failed("f-new", []));
    table.put(failed("f-gone", [{ at, what: "closed gone: it left the cluster without us", source: "sweep", code: "Gone" }], { state: "gone", closedAt: NOW }));
    const q = ledgerQueries(sql);
    const codes = Object.fromEntries(q.page({ state: "failed" }).runners.map((r) => [r.name, r.code]));
    expect(codes).toEqual({ "f-cap": "Cap", "f-old": null, "f-new": null });
    expect(q.story("f-gone").jobs.map((j) => [j.state, j.code])).toEqual([["gone", "Gone"]]);
    expect(q.story("f-cap").jobs[0]).toMatchObject({ code: "Cap", reason: "deletion cap of 1 in 60s reached, held back" });
  });
});
