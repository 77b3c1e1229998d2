// The admin page's words for a closed runner: when it closed and how, instead
// of a due time (nothing more will happen to it).
import { delayAfterGraceMs } from "../ledger/close-delay.ts";
import type { RunnerRow } from "../ledger/queries.ts";
import { formatDuration } from "./format-duration.ts";

/** "reaped 12s after the grace ended", "reaped 3m 2s after the bound", "reaped", "gone", "closed unjudged: its cluster is no longer watched". */
export function closedHow(row: RunnerRow, policy: { graceSeconds: number; maxJobSeconds: number }): string {
  if (row.state === "gone") return row.code === "Unwatched" ? "closed unjudged: its cluster is no longer watched" : "gone";
  const closedAt = row.closedAt === null ? NaN : Date.parse(row.closedAt);
  const delay = Number.isNaN(closedAt)
    ? undefined
    : delayAfterGraceMs({ cause: row.cause, completedAt: row.completedAt, startedAt: row.startedAt, closedAt }, policy);
  if (delay === undefined) return "reaped";
  return `reaped ${formatDuration(delay)} after the ${row.cause === "over-bound" ? "bound" : "grace"} ended`;
}
