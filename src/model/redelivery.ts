// A failed delivery arc-reaper asked GitHub to redeliver, as the ledger remembers it.

export interface RedeliveryRow {
  guid: string;
  event: string;
  /** The delivery to ask GitHub to redeliver (the latest failed attempt). */
  deliveryId: string;
  /** The last ask itself failed: no new attempt will show up, so ask again. */
  askFailed: boolean;
  attempts: number;
  /** The listing (its start time, ms) that last asked for this GUID: never twice in one listing. */
  lastListing: number;
  firstFailedAt: number;
  succeeded: boolean;
}
