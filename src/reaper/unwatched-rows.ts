// Rows of a cluster no longer watched (direct mode: a cluster name no longer in
// the settings; agent mode: a cluster whose agent never came back) would be kept
// forever: nobody looks there to judge their runners. Once nothing was heard of
// one within the history window, its row is closed with the code Unwatched. It
// is never evidence about the runner: nothing is deleted, and the reason says
// that the runner was not judged.
import { historyWindowMs } from "../model/history-window.ts";
import type { Lookup } from "../model/view.ts";

/**
 * Lookup.unwatched for a pass at `now`: `how` says how a cluster is not watched (undefined: it is), and a row is
 * closed once its last word is older than the history window.
 */
export function unwatchedRows(
  how: ((cluster: string) => string | undefined) | undefined,
  now: number,
  policy: { historyDays: number; maxJobSeconds: number },
): Lookup["unwatched"] {
  if (!how) return undefined;
  const windowMs = historyWindowMs(policy);
  return (cluster, lastAt) => {
    if (lastAt >= now - windowMs) return undefined;
    const unwatched = how(cluster);
    if (unwatched === undefined) return undefined;
    const days = Math.round(windowMs / 86_400_000);
    const heard = lastAt > 0 ? `since ${new Date(lastAt).toISOString()}` : "ever";
    return `its cluster ${cluster} is no longer watched (${unwatched}) and nothing was heard of it ${heard}, over the history of ${days} days: closed without judging the runner; nothing deleted`;
  };
}
