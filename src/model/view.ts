// What one look at the cluster showed of one runner name: every object of that
// name in every watched place (cluster, namespace), the places that could not be
// read, and how fresh an absence is. Both the alarm (reads by name) and the
// sweep (lists) build this, and reconcile reads it one way.
import type { ClusterRunner } from "./runner.ts";

export interface Lookup {
  /** Every object of the name in every place that could be read. */
  found: ClusterRunner[];
  /** The places that could not be read, and why: a cluster whose places all answered is judged though another's agent is away. */
  unreadable: { place: ClusterNamespace; why: string }[];
  /**
   * Absence of the name is certain as of this time (ms, the ledger's clock), in
   * one place or (no place) in all of them: when the read or list of the API
   * server was sent; for the agent's view, its last complete snapshot less a
   * margin, or the watch's word that the object left (a remove event).
   */
  absentAsOf: (place?: ClusterNamespace) => number;
  /** The places that were looked in are held by an agent that is away or incomplete: say "agent". */
  agentAway?: boolean;
  /**
   * Whether ARC's runner ids (`status.runnerId`) have been seen to match GitHub's (`runner_id`) in a cluster:
   * only there does another id prove an object is not the job's runner. Absent: never seen.
   */
  idsMatch?: (cluster: string) => boolean;
  /** Whether a cluster was retired by the operator (agent mode: not in AGENT_CLUSTERS, no agent connected): its rows close as gone. */
  retired?: (cluster: string) => boolean;
  /**
   * Why a row of `cluster` whose last word was at `lastAt` (ms) is closed unjudged, or undefined: its cluster is no
   * longer watched (direct mode: not KUBE_CLUSTER_NAME; agent mode: no agent of it connected) and nothing was heard
   * of it within the history window. Nothing is deleted for it: nobody looks at that cluster to judge its runner.
   */
  unwatched?: (cluster: string, lastAt: number) => string | undefined;
}

/** The one object the facts (or the unseen row) name, or why none can be named. */
export type ClusterView =
  /** byId: the object carries the job's runner id (the registration that took it). */
  | { kind: "found"; runner: ClusterRunner; byId?: boolean }
  /** code Unwatched: its cluster is no longer watched (Lookup.unwatched), not seen absent; closed all the same, nothing deleted. */
  | { kind: "missing"; why?: string; code?: "Unwatched" }
  | { kind: "unknown"; why: string; agent?: boolean; stale?: boolean };

/** A place: one namespace of one cluster (watched or not; the reaper reads only watched ones). */
export interface ClusterNamespace {
  cluster: string;
  namespace: string;
}
