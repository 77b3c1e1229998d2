// The facts, objects and lookups the identity tests (identify*.test.ts) judge: one job of run 7 on
// runner r-1, objects of that name per namespace, and a lookup as fresh as asked.
import type { ClusterRunner, TrackedRunner } from "../../../src/model/runner.ts";
import type { ClusterNamespace, Lookup } from "../../../src/model/view.ts";

export const T0 = Date.parse("2026-12-01T12:00:00Z");
export const iso = (ms: number) => new Date(ms).toISOString();

export const facts = (o: Partial<TrackedRunner> = {}): TrackedRunner => ({
  runner: "r-1",
  repo: "o/r",
  runId: 7,
  runAttempt: 1,
  jobId: 70,
  startedAt: iso(T0 - 900_000),
  factAt: T0 - 60_000,
  ...o,
});

export const obj = (o: Partial<ClusterRunner> & { namespace: string }): ClusterRunner => ({
  name: "r-1",
  uid: `uid-${o.namespace}`,
  createdAt: iso(T0 - 3_600_000),
  cluster: "default",
  ...o,
});

/** A lookup whose places were all looked in at `asOf` (a fresh read), unless given; ids seen matching in `idsMatch` clusters. */
export const lookup = (
  found: ClusterRunner[],
  o: { asOf?: number; places?: ClusterNamespace[]; unreadable?: Lookup["unreadable"]; idsMatch?: string[] } = {},
): Lookup => {
  const places = o.places ?? [
    { cluster: "default", namespace: "arc-a" },
    { cluster: "default", namespace: "arc-b" },
  ];
  return {
    found,
    unreadable: o.unreadable ?? [],
    absentAsOf: (p?: ClusterNamespace) => {
      if (!p) return o.asOf ?? T0;
      return places.some((x) => x.cluster === p.cluster) ? (o.asOf ?? T0) : 0;
    },
    ...(o.idsMatch ? { idsMatch: (cluster: string) => o.idsMatch!.includes(cluster) } : {}),
  };
};
