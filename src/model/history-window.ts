// How far back the ledger keeps what it heard: REAPER_HISTORY_DAYS, and never
// less than the bound and a day, so a job still within the bound is never
// outside it. Facts about a job that started before it are stale; a row of a
// cluster no longer watched that heard nothing within it is closed (Unwatched).
const DAY_MS = 86_400_000;

/** The history window in ms: the longer of REAPER_HISTORY_DAYS and the bound plus a day. */
export function historyWindowMs(policy: { historyDays: number; maxJobSeconds: number }): number {
  return Math.max(policy.historyDays * DAY_MS, policy.maxJobSeconds * 1000 + DAY_MS);
}
