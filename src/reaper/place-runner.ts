// Where a due runner is read by name (the alarm): only where it is, when that is already known. A row's
// recorded cluster (it was identified there) or an unseen row's (it was seen busy there) places it; so
// does a cluster's view (the agent's, held beside the ledger: no call) that shows the facts' runner by
// the identity rules (its runner id, the uid seen busy, the one object busy on its run). Placed, it is
// read in that cluster alone: a runner reaped on a webhook costs no call to any other. Not placed (no
// row cluster, no view shows it): read in every watched cluster, as before. Safe either way: once a
// row's cluster is known only that cluster's view can close it (identify.ts), and an object of its
// name in another cluster is never the facts' runner. Pure.
import type { TrackedRunner, UnseenRunner } from "../model/runner.ts";
import type { ClusterRunner } from "../model/runner.ts";
import type { Lookup } from "../model/view.ts";
import { identifyTracked } from "./identify.ts";
import type { WatchedCluster } from "./look.ts";

export function placeRunner(watched: readonly WatchedCluster[], row: { tracked: TrackedRunner } | { unseen: UnseenRunner }): readonly WatchedCluster[] {
  if (watched.length <= 1) return watched;
  const recorded = "tracked" in row ? row.tracked.cluster : row.unseen.cluster;
  const own = recorded === undefined ? undefined : watched.filter((w) => w.name === recorded);
  if (own && own.length > 0) return own;
  if (!("tracked" in row)) return watched;
  // The views alone, with no call: the object they show that the facts name, if any.
  const found: ClusterRunner[] = [];
  for (const w of watched) {
    if (!w.cluster.inView) continue;
    for (const ns of w.namespaces) {
      const r = w.cluster.inView(ns, row.tracked.runner);
      if (r) found.push({ ...r, cluster: w.name });
    }
  }
  if (found.length === 0) return watched;
  const lookup: Lookup = {
    found,
    unreadable: [],
    absentAsOf: () => 0,
    idsMatch: (cluster) => watched.some((w) => w.name === cluster && w.idsMatch === true),
  };
  const view = identifyTracked(row.tracked, lookup);
  if (view.kind !== "found") return watched;
  const at = watched.filter((w) => w.name === (view.runner.cluster ?? "default"));
  return at.length > 0 ? at : watched;
}
