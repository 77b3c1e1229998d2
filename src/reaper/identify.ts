// Which object of a name, among every watched place, the facts (or an unseen row) are about: one
// meaning for the alarm and the sweep (docs/design.md, "Identity"). In order:
//  - the object carrying the job's runner id (the registration that took it), whatever its fields;
//  - never one of another id in a cluster where ids were seen to match GitHub's;
//  - the uid seen busy on the job, else the one object busy on its run (several: ambiguous);
//  - an object carrying no run or another run is idle or moved on, never it (one that cannot be
//    it by uid or creation time is named, so the judge closes the facts as replaced);
//  - absent only on fresh evidence in the runner's own cluster once known; a stale view, a place
//    that could not be read, or a cluster without a view is no evidence of absence;
//  - a row of a cluster no longer watched that heard nothing within the history is closed
//    unjudged (Unwatched): not absent, only never to be looked at again.
// Never the first place that answers. Pure.
import type { ClusterRunner, TrackedRunner, UnseenRunner } from "../model/runner.ts";
import type { ClusterView, Lookup } from "../model/view.ts";
import { notTheJobsRunner } from "./judge.ts";

const where = (r: ClusterRunner): string => (r.cluster && r.cluster !== "default" ? `${r.cluster}/${r.namespace}` : r.namespace);

/** The object an open row's facts name. */
export function identifyTracked(tracked: TrackedRunner, lookup: Lookup): ClusterView {
  const { runner: name, runnerId: id } = tracked;
  const registered = id === undefined ? [] : lookup.found.filter((r) => r.runnerId === id);
  if (registered.length > 1) return ambiguous(name, registered, `each with runner id ${id}`);
  if (registered.length === 1) return { kind: "found", runner: registered[0]!, byId: true };
  const candidates = lookup.found.filter((r) => !otherRegistration(id, r, lookup));
  const same = tracked.uid ? candidates.find((r) => r.uid === tracked.uid) : undefined;
  if (same) return { kind: "found", runner: same };
  const onRun = candidates.filter((r) => r.workflowRunId === tracked.runId);
  if (onRun.length > 1) return ambiguous(name, onRun, `busy on run ${tracked.runId}`);
  if (onRun.length === 1 && !blocks(lookup, onRun[0]!.cluster ?? "default")) return { kind: "found", runner: onRun[0]! };
  const ownCluster = tracked.cluster ?? (tracked.uid && tracked.namespace ? "default" : undefined);
  const forgotten = unwatched(lookup, name, tracked.cluster, tracked.factAt ?? 0);
  if (forgotten) return forgotten;
  if (blocks(lookup, lookup.found.length === 0 ? ownCluster : undefined)) return unreadable(lookup);
  // None carries the facts' run: idle or moved on, never the facts' runner. One that cannot be it
  // by its uid or creation time is named (the judge closes the facts as replaced, deletes nothing).
  const replaced = candidates.filter((r) => notTheJobsRunner(tracked, r) !== undefined);
  if (replaced.length === 1 && lookup.found.length === 1) return { kind: "found", runner: replaced[0]! };
  const others = lookup.found.map((r) => `${where(r)} (${otherRegistration(id, r, lookup) ? `runner id ${r.runnerId}` : busyOn(r)})`).sort();
  // Rows from before clusters were recorded: the oldest view over all places.
  const own = tracked.cluster !== undefined ? { cluster: tracked.cluster, namespace: tracked.namespace ?? "" } : undefined;
  return absence(name, lookup.absentAsOf(own), tracked.factAt ?? 0, others, own?.cluster, lookup.retired);
}

/** An object of another registration than the job's, where ARC's ids are known to be GitHub's. */
const otherRegistration = (id: number | undefined, r: ClusterRunner, lookup: Lookup): boolean =>
  id !== undefined && r.runnerId !== undefined && r.runnerId !== id && lookup.idsMatch?.(r.cluster ?? "default") === true;

const busyOn = (r: ClusterRunner): string => (r.workflowRunId === undefined ? "idle" : `on run ${r.workflowRunId}`);

/** The very object an unseen row was seen busy as (by uid); another object of the name means it was replaced. */
export function identifyUnseen(unseen: UnseenRunner, lookup: Lookup): ClusterView {
  const same = lookup.found.find((r) => r.uid === unseen.uid);
  if (same) return { kind: "found", runner: same };
  const forgotten = unwatched(lookup, unseen.name, unseen.cluster, unseen.firstSeen);
  if (forgotten) return forgotten;
  if (blocks(lookup, unseen.cluster ?? "default")) return unreadable(lookup);
  // Seen busy at firstSeen: a view from before then says nothing of it.
  const own = unseen.cluster !== undefined ? { cluster: unseen.cluster, namespace: unseen.namespace } : undefined;
  return absence(unseen.name, lookup.absentAsOf(own), unseen.firstSeen, [], own?.cluster, lookup.retired);
}

/** A row of a cluster no longer watched, heard of last at `lastAt` before the history: closed unjudged (Lookup.unwatched). */
function unwatched(lookup: Lookup, name: string, cluster: string | undefined, lastAt: number): ClusterView | undefined {
  const why = cluster === undefined ? undefined : lookup.unwatched?.(cluster, lastAt);
  return why === undefined ? undefined : { kind: "missing", code: "Unwatched", why: `runner ${name}: ${why}` };
}

/** Whether places that could not be read leave the answer open: any of them, or (when known) one in `cluster`. */
function blocks(lookup: Lookup, cluster: string | undefined): boolean {
  if (cluster === undefined) return lookup.unreadable.length > 0;
  return lookup.unreadable.some((u) => u.place.cluster === cluster);
}

function absence(name: string, asOf: number, lastFactAt: number, others: string[], cluster?: string, retired?: (cluster: string) => boolean): ClusterView {
  const besides = others.length > 0 ? ` (only objects of its name that are not it: ${others.join(", ")})` : "";
  if (asOf > lastFactAt) return besides ? { kind: "missing", why: `runner ${name} is no longer in the cluster${besides}` } : { kind: "missing" };
  if (asOf <= 0 && cluster !== undefined && retired?.(cluster) === true) {
    // The operator's word (AGENT_CLUSTERS without it, and no agent of it connected): nothing will ever look there again.
    return { kind: "missing", why: `runner ${name} was in cluster ${cluster}, which is retired (not in AGENT_CLUSTERS, no agent of it connected)` };
  }
  if (asOf <= 0 && cluster !== undefined) {
    // Its cluster has no view now (its agent away, or not in AGENT_CLUSTERS): other clusters' views say nothing of it.
    return { kind: "unknown", why: `runner ${name} was seen in cluster ${cluster}, which has no view now${besides}: kept until it has one`, agent: true };
  }
  return {
    kind: "unknown",
    why: `runner ${name} is not in the view${besides}, but the view (as of ${iso(asOf)}) is not newer than its last fact (${iso(lastFactAt)}): kept until a fresh look`,
    // Held for the agent (its next snapshot releases it) and looked at again soon (a read by name).
    agent: true,
    stale: true,
  };
}

function unreadable(lookup: Lookup): ClusterView {
  return { kind: "unknown", why: whyUnreadable(lookup), agent: lookup.agentAway };
}

export const whyUnreadable = (lookup: Lookup): string => lookup.unreadable.map((u) => u.why).join("; ");

function ambiguous(name: string, candidates: ClusterRunner[], what: string): ClusterView {
  const places = candidates.map(where).join(", ");
  return { kind: "unknown", why: `ambiguous: runners named ${name} in ${places}, ${what}; kept, checked again` };
}

const iso = (ms: number): string => (Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : "never");
