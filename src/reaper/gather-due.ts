// What the alarm's pass looks at: edge-triggered, at the exact time a runner is
// due (a grace end, a bound, a recheck, the end of the wait for a webhook, a
// freed window, a back-off's end). Each due runner is read by name where it is
// (its row's cluster, or the cluster whose view shows it), else in every watched
// place; a runner reaped on a webhook's word costs one read per namespace of its
// cluster and one delete, and no call to another cluster.
import { identifyTracked, identifyUnseen } from "./identify.ts";
import { lookAtDeletion } from "./look-at-deletion.ts";
import { readByName } from "./look.ts";
import { placeRunner } from "./place-runner.ts";
import type { ReconcileInput } from "./reconcile.ts";
import type { PassDeps } from "./reconcile-all.ts";
import type { Gathered } from "./gather-listed.ts";
import type { Lookup } from "../model/view.ts";
import { unwatchedRows } from "./unwatched-rows.ts";

/** At most this many due runners per alarm run; the rest are due still and set the next alarm at once. */
const ALARM_BATCH = 100;

export async function gatherDue(deps: PassDeps): Promise<Gathered> {
  const { ledger, now } = deps;
  // A view that could not be had counts as the clusters' own kind of error ("agent" in agent mode).
  const kind = deps.watched[0]?.cluster.errorKind ?? "cluster";
  const items: ReconcileInput[] = [];
  // Rows of a cluster the operator retired close as gone (AgentLink.retired).
  const r = deps.retired;
  const retired = r ? (cluster: string) => r(cluster, now) : undefined;
  // Rows of a cluster no longer watched close after the history window, unjudged (unwatched-rows.ts).
  const unwatched = unwatchedRows(deps.unwatched, now, deps.settings);
  const withUnwatched = (lookup: Lookup): Lookup => (unwatched ? { ...lookup, unwatched } : lookup);
  for (const record of ledger.dueRunners(now, ALARM_BATCH)) {
    // Read only where it is, when its row or a cluster's view already places it (place-runner.ts); placed by a
    // view alone and not found there when read, it is read everywhere, as if never placed.
    const placed = placeRunner(deps.watched, { tracked: record });
    let lookup = await readByName(placed, record.runner, record.factAt ?? 0, retired);
    if (placed !== deps.watched && record.cluster === undefined && lookup.found.length === 0)
      lookup = await readByName(deps.watched, record.runner, record.factAt ?? 0, retired);
    items.push({ name: record.runner, record, view: identifyTracked(record, withUnwatched(lookup)), viewErrorKind: kind });
  }
  for (const unseen of ledger.dueUnseen(now, ALARM_BATCH)) {
    const lookup = await readByName(placeRunner(deps.watched, { unseen }), unseen.name, unseen.firstSeen, retired);
    items.push({ name: unseen.name, unseen, view: identifyUnseen(unseen, withUnwatched(lookup)), viewErrorKind: kind });
  }
  return {
    items,
    lookAtDeletions: async () => {
      for (const w of ledger.dueDeletions(now, ALARM_BATCH)) await lookAtDeletion(w, deps, "alarm");
      return 0;
    },
  };
}
