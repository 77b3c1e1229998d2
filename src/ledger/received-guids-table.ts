// Delivery GUIDs the ledger received, kept REAPER_HISTORY_DAYS. A GUID seen
// again is a replay; a failed delivery whose GUID is here needs no redelivery.
import type { Sql } from "./sql.ts";

export class ReceivedGuidsTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Records the GUID; false when it was known already (a duplicate or a replay). */
  add(guid: string, at: number): boolean {
    return this.sql.run("INSERT INTO deliveries_received (guid, at) VALUES (?, ?) ON CONFLICT DO NOTHING", guid, at) > 0;
  }

  has(guid: string): boolean {
    return this.sql.first<{ n: number }>("SELECT 1 AS n FROM deliveries_received WHERE guid = ?", guid) !== undefined;
  }

  prune(before: number): number {
    return this.sql.run("DELETE FROM deliveries_received WHERE at < ?", before);
  }
}
