// What a cluster name points at: the uid of that cluster's `kube-system` namespace, which the API
// server gives once and never changes while the cluster lives. Read by the direct mode (once per
// KUBE_API_URL) or reported by the agent in its hello. "Runner ids match" is known per identity, not
// per name: a name re-pointed at another cluster (a new KUBE_API_URL, a reused agent cluster name)
// carries nothing over. Unknown (kube-system forbidden, an agent too old to say): ids are not trusted.

export interface ClusterIdentity {
  /** The kube-system namespace's metadata.uid; absent: unknown (then `why`). */
  uid?: string;
  /** Who said it: the direct mode's read, or the agent's hello. */
  source: "kube-system" | "agent";
  /** Direct mode: the API server's URL it was read from (read again when KUBE_API_URL changes). */
  url?: string;
  /** When it was read or reported (ms). */
  at: number;
  /** Why it is unknown. */
  why?: string;
  /** The identity before the last change, and when it changed (ms). */
  previous?: string;
  changedAt?: number;
}
