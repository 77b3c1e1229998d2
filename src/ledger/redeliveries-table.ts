// Failed deliveries arc-reaper asked GitHub to redeliver, by GUID: how often,
// in which listing last, and since when the GUID has been failing.
import { ReceivedGuidsTable } from "./received-guids-table.ts";
import type { Sql, SqlRow } from "./sql.ts";

import type { RedeliveryRow } from "../model/redelivery.ts";

export type { RedeliveryRow };

interface Row extends SqlRow {
  guid: string;
  event: string;
  delivery_id: string;
  ask_failed: number;
  attempts: number;
  last_listing: number;
  first_failed_at: number;
  succeeded: number;
}

const toRow = (r: Row): RedeliveryRow => ({
  guid: r.guid,
  event: r.event,
  deliveryId: r.delivery_id,
  askFailed: r.ask_failed === 1,
  attempts: r.attempts,
  lastListing: r.last_listing,
  firstFailedAt: r.first_failed_at,
  succeeded: r.succeeded === 1,
});

export class RedeliveriesTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Whether the ledger received a delivery of this GUID (the first attempt or a redelivery). */
  received(guid: string): boolean {
    return new ReceivedGuidsTable(this.sql).has(guid);
  }

  get(guid: string): RedeliveryRow | undefined {
    const row = this.sql.first<Row>("SELECT * FROM redeliveries WHERE guid = ?", guid);
    return row && toRow(row);
  }

  put(r: RedeliveryRow): void {
    this.sql.run(
      `INSERT INTO redeliveries (guid, event, delivery_id, ask_failed, attempts, last_listing, first_failed_at, succeeded) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (guid) DO UPDATE SET delivery_id = excluded.delivery_id, ask_failed = excluded.ask_failed, attempts = excluded.attempts,
       last_listing = excluded.last_listing, succeeded = excluded.succeeded`,
      r.guid,
      r.event,
      r.deliveryId,
      r.askFailed ? 1 : 0,
      r.attempts,
      r.lastListing,
      r.firstFailedAt,
      r.succeeded ? 1 : 0,
    );
  }

  /** GUIDs still failing that first failed at or after `since`. */
  pending(since: number): RedeliveryRow[] {
    return this.sql.all<Row>("SELECT * FROM redeliveries WHERE succeeded = 0 AND first_failed_at >= ?", since).map(toRow);
  }

  prune(before: number): number {
    return this.sql.run("DELETE FROM redeliveries WHERE first_failed_at < ?", before);
  }
}
