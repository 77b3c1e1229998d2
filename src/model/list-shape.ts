// How direct mode lists a cluster's EphemeralRunners: as Tables (the printer
// columns and the metadata; src/cluster/runner-table.ts) or as full objects,
// which it falls back on when the API server refuses Tables or serves them
// without a column it needs. The fallback is remembered in the ledger per
// cluster (a sweep may start in a fresh isolate) and tried again after a day.

/** A cluster that lists full objects, since when (ms) and why it fell back. */
export interface ListShapeNote {
  shape: "full";
  since: number;
  why: string;
}

/** Tables are tried again this long after a cluster refused them (a CRD or API server upgraded in the meantime). */
const RETRY_TABLES_MS = 86_400_000;

/** What the listing reads and writes of one cluster's note. */
export interface ListShapeMemory {
  /** The cluster's note, or undefined: it lists as Tables. */
  note(): ListShapeNote | undefined;
  /** Tables were refused at `at` for `why`: a note stands until RETRY_TABLES_MS after it was made. */
  refused(why: string, at: number): void;
  /** Tables were served after the note expired: it goes. */
  served(): void;
}

/** Whether a note still holds at `now` (Tables are not tried before it expires). */
export const noteHolds = (note: ListShapeNote | undefined, now: number): note is ListShapeNote => note !== undefined && now - note.since < RETRY_TABLES_MS;
