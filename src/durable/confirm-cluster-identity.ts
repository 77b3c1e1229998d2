// Direct mode: what the cluster name points at, read once per ledger and KUBE_API_URL (the kube-system
// namespace's uid), remembered in the ledger; read again when the URL changes, and an hour after a read
// that could not tell (forbidden, an error). A change is logged (ClusterIdentityChanged) and counted, and
// what was known of the previous identity's runner ids is forgotten; an unknown identity is logged
// (ClusterIdentityUnknown) and trusts no id. Answers whether ids are now known to match in the cluster, and
// whether the identity held is the cluster's now (known, and read from this URL).
import type { Cluster } from "../cluster/ephemeral-runners.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";

/** A read that could not tell the identity is tried again after this long. */
const UNKNOWN_RETRY_MS = 60 * 60_000;

export async function confirmClusterIdentity(
  name: string,
  url: string,
  cluster: Cluster,
  store: LedgerStore,
  log: (line: Record<string, unknown>) => void,
  now: number,
): Promise<{ idsMatch: boolean; current: boolean }> {
  const known = store.memory.clusterIdentity(name);
  const fresh = known?.source === "kube-system" && known.url === url && (known.uid !== undefined || now - known.at < UNKNOWN_RETRY_MS);
  if (!fresh && cluster.identity) {
    const answer = await cluster.identity();
    if (answer.kind === "known") {
      const { changedFrom } = store.memory.noteClusterIdentity(name, { uid: answer.uid, source: "kube-system", url, at: now });
      if (changedFrom !== undefined) {
        store.counters.add("arc_reaper_cluster_identity_changes_total", { cluster: name });
        log({ msg: "cluster identity changed", reason: "ClusterIdentityChanged", cluster: name, from: changedFrom, to: answer.uid, url });
      }
    } else {
      store.memory.noteClusterIdentity(name, { source: "kube-system", url, at: now, why: answer.why });
      log({ msg: "cluster identity unknown", reason: "ClusterIdentityUnknown", cluster: name, url, why: answer.why, forbidden: answer.forbidden });
    }
  }
  const held = store.memory.clusterIdentity(name);
  return { idsMatch: store.memory.runnerIdsMatch()[name] !== undefined, current: held?.url === url && held.uid !== undefined };
}
