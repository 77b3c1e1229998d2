// One look at a deletion we made whose watch is due: read its object by name in
// its own place, ask GitHub about its job once when it is first found stuck
// (within the budget), decide (check-deletion.ts) and have the ledger store it.
import type { DeletionWatch } from "../model/runner.ts";
import type { ClusterView, Lookup } from "../model/view.ts";
import { checkDeletion } from "./check-deletion.ts";
import { finishStuck, githubOnDeletion } from "./finish-stuck.ts";
import { whyUnreadable } from "./identify.ts";
import { clusterOf, readByName } from "./look.ts";
import type { Caller } from "./reconcile.ts";
import type { PassDeps } from "./reconcile-all.ts";
import { errorText } from "../model/error-text.ts";

export async function lookAtDeletion(w: DeletionWatch, deps: PassDeps, by: Caller, lookup?: Lookup): Promise<void> {
  const place = clusterOf(deps.watched, { cluster: w.cluster });
  const seen = lookup ?? (place ? await readByName([{ ...place, namespaces: [w.namespace] }], w.name, w.deletedAt) : undefined);
  const view = deletionView(w, seen);
  let github: string | undefined;
  // With REAPER_FINISH_STUCK, GitHub is read once, by the finish itself (finish-stuck.ts).
  const finishing = deps.settings.finishStuck && view.kind === "found" && view.runner.uid === w.uid;
  if (!finishing && view.kind === "found" && view.runner.uid === w.uid && w.stuckAt === undefined && !(deps.github instanceof Error)) {
    try {
      github = (await githubOnDeletion(w, deps.github))?.says;
    } catch (e) {
      github = `nothing: it could not be read (${errorText(e)})`;
    }
  }
  const check = checkDeletion(w, view, deps.now, deps.settings.stuckSeconds, github);
  if (!finishing || check.kind !== "stuck" || view.kind !== "found") return deps.ledger.storeDeletionCheck(w, check, deps.now, by);
  const finished = await finishStuck(w, view.runner, check, deps);
  if (finished.kind !== "went") return deps.ledger.storeDeletionCheck(w, finished, deps.now, by);
  // Stuck first (the row's story says ARC held it), then reaped with how long.
  if (w.stuckAt === undefined) deps.ledger.storeDeletionCheck(w, check, deps.now, by);
  deps.ledger.storeDeletionCheck({ ...w, stuckAt: w.stuckAt ?? deps.now }, finished, deps.now, by);
}

/** The object of this very uid in its place; absent only on fresh evidence (newer than our delete). */
function deletionView(w: DeletionWatch, lookup: Lookup | undefined): ClusterView {
  if (!lookup) return { kind: "unknown", why: `no cluster named ${w.cluster} is watched` };
  const same = lookup.found.find((r) => r.uid === w.uid && r.namespace === w.namespace);
  if (same) return { kind: "found", runner: same };
  if (lookup.unreadable.length > 0) return { kind: "unknown", why: whyUnreadable(lookup) };
  if (lookup.absentAsOf({ cluster: w.cluster, namespace: w.namespace }) > w.deletedAt) return { kind: "missing" };
  return { kind: "unknown", why: "the view is not newer than our delete" };
}
