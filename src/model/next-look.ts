// The shape of "when is this runner looked at again", in ms since the epoch: a
// time of its own (the alarm fires then), with the next sweep (no time of its
// own: the sweep looks every minute), or never (a closed row). Which one, in
// every case, is answered by one function: nextLook (src/reaper/next-look.ts).
// Only the ledger's tables turn it into due_at. A failed ask backs off per
// row: 1 minute, doubling to 1 hour.

export type NextLook = { at: number } | { withSweep: true } | { never: true };

export const lookAt = (at: number): NextLook => ({ at });
export const WITH_SWEEP: NextLook = { withSweep: true };
export const NEVER: NextLook = { never: true };

/** The stored due time: the alarm's time, or null (no time of its own). */
export const dueAtOf = (next: NextLook): number | null => ("at" in next ? next.at : null);

/** A stored due time read back as a next look. */
export const nextLookOf = (dueAt: number | null): NextLook => (dueAt === null ? WITH_SWEEP : lookAt(dueAt));

const BACKOFF_FIRST_MS = 60_000;
const BACKOFF_MAX_MS = 3_600_000;

/** How long after its `failures`-th failed ask in a row a row is asked again. */
export function backoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.min(failures - 1, 20));
}
