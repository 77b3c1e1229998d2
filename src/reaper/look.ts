// How the callers look at the cluster: the alarm reads one name in every
// watched place, the sweep lists every place once. Both answer Lookups with the
// same meaning (src/model/view.ts), so reconcile judges them one way.
import type { Cluster, DeleteContext, DeleteOutcome } from "../cluster/ephemeral-runners.ts";
import type { ClusterRunner } from "../model/runner.ts";
import type { Lookup, ClusterNamespace } from "../model/view.ts";
import { errorText } from "../model/error-text.ts";

/** One cluster and the namespaces watched in it. */
export interface WatchedCluster {
  name: string;
  cluster: Cluster;
  namespaces: readonly string[];
  /** ARC's runner ids were seen to match GitHub's in this cluster (the ledger remembers it): then another id rules an object out. */
  idsMatch?: boolean;
  /**
   * Makes sure the ledger knows what the cluster name points at (direct mode: its kube-system uid, read once per
   * KUBE_API_URL) before a pass judges by ids; answers whether ids are known to match there now.
   */
  confirmIdentity?: (now: number) => Promise<{ idsMatch: boolean; current: boolean }>;
  /**
   * Whether the identity the ledger holds for this name is the cluster's now (direct mode: read from the current
   * KUBE_API_URL); false: a match seen here is not recorded (it would be kept for another cluster's identity).
   */
  identityCurrent?: boolean;
}

const idsMatchIn =
  (watched: readonly WatchedCluster[]) =>
  (cluster: string): boolean =>
    watched.some((w) => w.name === cluster && w.idsMatch === true);

// Errors name their place when there are several to tell apart.
const placeName = (watched: readonly WatchedCluster[], w: WatchedCluster, ns: string): string =>
  watched.reduce((n, x) => n + x.namespaces.length, 0) === 1 ? "" : `${w.name === "default" ? ns : `${w.name}/${ns}`}: `;

/** The cluster a runner lives in. */
export function clusterOf(watched: readonly WatchedCluster[], runner: Pick<ClusterRunner, "cluster">): WatchedCluster | undefined {
  return watched.find((w) => w.name === (runner.cluster ?? "default"));
}

/** A condemned runner deleted in the watched cluster it was found in; a runner of a cluster not watched is a failed delete. */
export function deleteInItsCluster(watched: readonly WatchedCluster[], runner: ClusterRunner, context: DeleteContext): Promise<DeleteOutcome> {
  const w = clusterOf(watched, runner);
  return w ? w.cluster.deleteRunner(runner, context) : Promise.resolve({ kind: "failed", status: null, why: `no cluster named ${runner.cluster} is watched` });
}

/**
 * One name, read in every watched place (a read by name: fresh as of when it was sent). `since`: the
 * row's last fact; a view already certain of the name's absence after it need not read again.
 */
export async function readByName(watched: readonly WatchedCluster[], name: string, since?: number, retired?: (cluster: string) => boolean): Promise<Lookup> {
  const asOf = new Map<string, number>();
  const lookup: Lookup = { found: [], unreadable: [], absentAsOf: (place) => absentAsOf(asOf, place), idsMatch: idsMatchIn(watched) };
  if (retired) lookup.retired = retired;
  await Promise.all(
    watched.flatMap((w) =>
      w.namespaces.map(async (ns) => {
        const sent = Date.now();
        try {
          const runner = await w.cluster.readRunner(ns, name, since);
          if (runner) lookup.found.push({ ...runner, cluster: w.name });
          asOf.set(key({ cluster: w.name, namespace: ns }), w.cluster.viewAsOf?.(ns, name) ?? sent);
        } catch (e) {
          lookup.unreadable.push(unreadablePlace(watched, w, ns, e));
          asOf.set(key({ cluster: w.name, namespace: ns }), 0);
          if (w.cluster.errorKind === "agent") lookup.agentAway = true;
        }
      }),
    ),
  );
  return lookup;
}

/** Every place listed once; answers each name's Lookup, and every name seen. */
export async function listWatched(
  watched: readonly WatchedCluster[],
  retired?: (cluster: string) => boolean,
  now?: number,
): Promise<{ lookup: (name: string) => Lookup; names: () => Iterable<string>; unreadable: Lookup["unreadable"] }> {
  const byName = new Map<string, ClusterRunner[]>();
  const unreadable: Lookup["unreadable"] = [];
  // Per place: the time its list was sent, or how the agent's view says absence (per name).
  const asOfIn = new Map<string, (name: string) => number>();
  let agentAway = false;
  await Promise.all(
    watched.flatMap((w) =>
      w.namespaces.map(async (ns) => {
        const sent = Date.now();
        const place = key({ cluster: w.name, namespace: ns });
        try {
          for (const runner of await w.cluster.listRunners(ns, now))
            byName.set(runner.name, [...(byName.get(runner.name) ?? []), { ...runner, cluster: w.name }]);
          const viewAsOf = w.cluster.viewAsOf?.bind(w.cluster);
          asOfIn.set(place, viewAsOf ? (name) => viewAsOf(ns, name) : () => sent);
        } catch (e) {
          unreadable.push(unreadablePlace(watched, w, ns, e));
          asOfIn.set(place, () => 0);
          if (w.cluster.errorKind === "agent") agentAway = true;
        }
      }),
    ),
  );
  return {
    lookup: (name) => ({
      found: byName.get(name) ?? [],
      unreadable,
      agentAway,
      idsMatch: idsMatchIn(watched),
      ...(retired ? { retired } : {}),
      absentAsOf: (place) => absentAsOf(new Map([...asOfIn].map(([k, f]) => [k, f(name)])), place),
    }),
    names: () => byName.keys(),
    unreadable,
  };
}

/** A place that could not be read; its error names the place when there are several to tell apart. */
function unreadablePlace(watched: readonly WatchedCluster[], w: WatchedCluster, ns: string, e: unknown): Lookup["unreadable"][number] {
  return { place: { cluster: w.name, namespace: ns }, why: `${placeName(watched, w, ns)}${errorText(e)}` };
}

const key = (p: ClusterNamespace): string => `${p.cluster}\u0000${p.namespace}`;

/**
 * In one place (when it was looked in), else the oldest over the places looked in of its cluster; a
 * cluster not looked in at all (its agent away, or not in AGENT_CLUSTERS) is no evidence: 0. Without
 * a place: the oldest over all places looked in.
 */
function absentAsOf(asOf: ReadonlyMap<string, number>, place?: ClusterNamespace): number {
  if (place && asOf.has(key(place))) return asOf.get(key(place))!;
  const inCluster = place ? [...asOf].filter(([k]) => k.startsWith(`${place.cluster}\u0000`)).map(([, v]) => v) : [...asOf.values()];
  if (place && inCluster.length === 0) return 0;
  return inCluster.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...inCluster);
}
