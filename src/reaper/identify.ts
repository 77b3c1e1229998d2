// One view semantics, for the alarm and the sweep alike: which object of a
// name, among every watched place, the facts (or an unseen row) are about.
//
//  - the object with the uid the facts' runner had (uids are unique: this holds
//    even when another place could not be read);
//  - else the one object busy on the facts' run; several such: ambiguous;
//  - else, when no place failed, the only object of that name (the judge then
//    finds it idle, moved on or replaced); several: ambiguous;
//  - a place that failed in another cluster does not stand in the way of an
//    object's own cluster (its agent away keeps only its own runners): the one
//    object busy on the run, or the absence of the uid seen doing the job in its
//    own cluster, is judged as usual;
//  - none: missing only on fresh evidence (a read by name, or a view taken after
//    the runner's last fact); a stale view or a place that could not be read is
//    not evidence of absence.
// Never the first place that answers. Pure.
import type { ClusterRunner, TrackedRunner, UnseenRunner } from "../model/runner.ts";
import type { ClusterView, Lookup } from "../model/view.ts";

const where = (r: ClusterRunner): string => (r.cluster && r.cluster !== "default" ? `${r.cluster}/${r.namespace}` : r.namespace);

/** The object an open row's facts name. */
export function identifyTracked(tracked: TrackedRunner, lookup: Lookup): ClusterView {
  const name = tracked.runner;
  if (tracked.uid) {
    const same = lookup.found.find((r) => r.uid === tracked.uid);
    if (same) return { kind: "found", runner: same };
  }
  const onRun = lookup.found.filter((r) => r.workflowRunId === tracked.runId);
  if (onRun.length > 1) return ambiguous(name, onRun, `busy on run ${tracked.runId}`);
  if (onRun.length === 1 && !blocks(lookup, onRun[0]!.cluster ?? "default")) return { kind: "found", runner: onRun[0]! };
  const seenIn = tracked.uid && tracked.namespace && lookup.found.length === 0 ? (tracked.cluster ?? "default") : undefined;
  if (blocks(lookup, seenIn)) return unreadable(lookup);
  if (onRun.length === 1) return { kind: "found", runner: onRun[0]! };
  if (lookup.found.length > 1) return ambiguous(name, lookup.found, "none of them busy on the facts' run");
  if (lookup.found.length === 1) return { kind: "found", runner: lookup.found[0]! };
  // The object seen doing the job lived in one place: its absence there is enough.
  const own = tracked.uid && tracked.namespace ? { cluster: tracked.cluster ?? "default", namespace: tracked.namespace } : undefined;
  return absence(name, lookup.absentAsOf(own), tracked.factAt ?? 0);
}

/** The very object an unseen row was seen busy as (by uid); another object of the name means it was replaced. */
export function identifyUnseen(unseen: UnseenRunner, lookup: Lookup): ClusterView {
  const same = lookup.found.find((r) => r.uid === unseen.uid);
  if (same) return { kind: "found", runner: same };
  if (blocks(lookup, unseen.cluster ?? "default")) return unreadable(lookup);
  // Seen busy at firstSeen: a view from before then says nothing of it.
  return absence(unseen.name, lookup.absentAsOf({ cluster: unseen.cluster ?? "default", namespace: unseen.namespace }), unseen.firstSeen);
}

/** Whether places that could not be read leave the answer open: any of them, or (when known) one in `cluster`. */
function blocks(lookup: Lookup, cluster: string | undefined): boolean {
  if (cluster === undefined) return lookup.unreadable.length > 0;
  return lookup.unreadable.some((u) => u.place.cluster === cluster);
}

function absence(name: string, asOf: number, lastFactAt: number): ClusterView {
  if (asOf > lastFactAt) return { kind: "missing" };
  return {
    kind: "unknown",
    why: `runner ${name} is not in the view, but the view (as of ${iso(asOf)}) is not newer than its last fact (${iso(lastFactAt)}): kept until a fresh look`,
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
