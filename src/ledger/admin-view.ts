// Everything GET /admin shows, read in one call: a page of runners, the
// snapshot (counts, last sweep, pause) and the day at a glance, with the rows
// it read, so a test can hold the page's cost flat however long the history.
import { readDay, type DayAtGlance } from "./day-at-glance.ts";
import { ledgerQueries, type LedgerSnapshot, type RunnerPage, type RunnerQuery } from "./queries.ts";
import type { Sql } from "./sql.ts";

export interface AdminView {
  page: RunnerPage;
  snapshot: LedgerSnapshot;
  day: DayAtGlance;
  /** SQLite rows read for this view. */
  rowsRead: number;
}

export async function adminView(sql: Sql, storage: DurableObjectStorage, query: RunnerQuery, now: number): Promise<AdminView> {
  const before = sql.cost.rowsRead;
  const queries = ledgerQueries(sql);
  const page = queries.page(query);
  const snapshot = await queries.snapshot(storage);
  const day = readDay(sql, now);
  return { page, snapshot, day, rowsRead: sql.cost.rowsRead - before };
}
