// What the sweep's pass looks at: the level-triggered net, once a minute. It
// lists every watched place once, reads the ledger's open runners and unseen
// rows only (never the closed history), and brings every busy runner that no
// open row accounts for.
import type { ClusterRunner, UnseenRunner } from "../model/runner.ts";
import type { Lookup } from "../model/view.ts";
import { identifyTracked, identifyUnseen } from "./identify.ts";
import { notTheJobsRunner } from "./judge.ts";
import { lookAtFailed } from "./failed-runners.ts";
import { countIdle } from "./idle-runners.ts";
import { lookAtDeletion } from "./look-at-deletion.ts";
import { listWatched } from "./look.ts";
import type { ReconcileInput } from "./reconcile.ts";
import type { PassDeps } from "./reconcile-all.ts";
import { unwatchedRows } from "./unwatched-rows.ts";

/** The runners a pass reconciles, and its look at our deletions (after them): answers how many it deleted itself. */
export interface Gathered {
  items: ReconcileInput[];
  lookAtDeletions: () => Promise<number>;
  /** Runners left for the next sweep's first look (see FIRST_LOOKS_PER_SWEEP). */
  deferred?: number;
  /** The places the sweep could not list, each with why, and the kind of error they count as. */
  unreadable?: { why: string[]; kind: string };
}

/**
 * At most this many runners get their first look (a row never judged, a busy runner first seen) in one
 * sweep: a first look writes the row's verdict and logs a decision line. In the bench (BENCHMARKS.md
 * table 6) 10,000 of them add 1 to 2 s of CPU to a direct sweep over 50,000 runners, so 50,000 arriving
 * at once would make one sweep of 10 to 15 s. They are judged over the next sweeps instead, oldest first
 * (5 sweeps for 50,000); a runner waiting for its first look is kept, and the alarm still judges any row
 * whose facts made it due.
 */
const FIRST_LOOKS_PER_SWEEP = 10_000;

export async function gatherListed(deps: PassDeps, firstLooks = FIRST_LOOKS_PER_SWEEP): Promise<Gathered> {
  const { now, ledger } = deps;
  // The ledger's rows are read before the cluster is listed: a row whose facts come in while the
  // lists are out is judged by the next look, never against lists taken before it existed.
  // Read for judging: without the stories and names, which only the rows written need (the store reads them then).
  const open = ledger.openToJudge?.() ?? ledger.openRunners();
  const unseen = ledger.unseen();
  // Rows of a cluster the operator retired close as gone (AgentLink.retired).
  const r = deps.retired;
  const listing = await listWatched(deps.watched, r ? (cluster) => r(cluster, now) : undefined, now);
  // A view that could not be had counts as the clusters' own kind of error ("agent" in agent mode).
  const viewErrorKind = deps.watched[0]?.cluster.errorKind ?? "cluster";

  // Rows of a cluster no longer watched close after the history window, unjudged (unwatched-rows.ts).
  const unwatched = unwatchedRows(deps.unwatched, now, deps.settings);
  const lookup = (name: string): Lookup => (unwatched ? { ...listing.lookup(name), unwatched } : listing.lookup(name));
  const items: ReconcileInput[] = open.map((record) => ({
    name: record.runner,
    record,
    view: identifyTracked(record, lookup(record.runner)),
    viewErrorKind,
  }));
  // A replaced runner's facts close as gone; the object of that name is judged on its own below.
  const accounted = new Set(items.filter((i) => !(i.view.kind === "found" && notTheJobsRunner(i.record!, i.view.runner))).map((i) => i.name));
  const remembered = new Map(unseen.map((u) => [`${u.name}#${u.uid}`, u]));
  for (const name of listing.names()) {
    if (accounted.has(name)) continue;
    for (const runner of listing.lookup(name).found) {
      if (runner.workflowRunId === undefined || runner.deletionTimestamp) continue; // idle or being deleted: nothing to do, nothing to log
      const known = remembered.get(`${name}#${runner.uid}`);
      remembered.delete(`${name}#${runner.uid}`);
      items.push({ name, unseen: known ?? firstSeen(runner, now), view: { kind: "found", runner } });
    }
  }
  // Unseen rows whose object the lists no longer show busy: judged on the same lookups (gone only when they are fresh).
  for (const u of remembered.values()) items.push({ name: u.name, unseen: u, view: identifyUnseen(u, lookup(u.name)), viewErrorKind });

  // First looks beyond the sweep's share wait for the next sweep (their names stay accounted for above).
  let first = 0;
  const looked = items.filter((i) => !isFirstLook(i) || ++first <= firstLooks);

  return {
    items: looked,
    deferred: items.length - looked.length,
    ...(listing.unreadable.length > 0 ? { unreadable: { why: listing.unreadable.map((u) => u.why), kind: viewErrorKind } } : {}),
    // Our deletions: gone from the lists (a fresh look) ends their watch without a read of their own.
    lookAtDeletions: async () => {
      // Runners ARC marked Failed: shown, and deleted when REAPER_FAILED_SECONDS says so, within what the cap left.
      const failed = (await lookAtFailed(listing, deps)).deleted;
      // Runners that never work: counted per scale set from the same lists (no row, no call), shown, never deleted.
      if (ledger.idle) {
        const idleAlertSeconds = deps.settings.idleAlertSeconds;
        ledger.idle.store({ at: now, idleAlertSeconds, groups: countIdle(listing, new Set(open.map((r) => r.runner)), now, idleAlertSeconds) });
      }
      for (const w of ledger.deletionWatches()) {
        const lookup = listing.lookup(w.name);
        const there = lookup.found.some((r) => r.uid === w.uid);
        if ((!there && lookup.unreadable.length === 0) || w.dueAt <= now) await lookAtDeletion(w, deps, "sweep", lookup);
      }
      return failed;
    },
  };
}

/** A row never judged, or a busy runner no row accounts for and no unseen row remembers. */
const isFirstLook = (i: ReconcileInput): boolean => (i.record ? i.record.verdictKey === undefined : i.unseen?.reason === null);

function firstSeen(runner: ClusterRunner, now: number): UnseenRunner {
  return {
    name: runner.name,
    uid: runner.uid,
    cluster: runner.cluster,
    namespace: runner.namespace,
    runId: runner.workflowRunId ?? 0,
    repo: runner.jobRepositoryName ?? null,
    firstSeen: now,
    dueAt: null,
    reason: null,
  };
}
