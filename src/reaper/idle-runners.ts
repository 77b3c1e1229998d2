// The sweep's count of runners that never work (src/model/idle.ts): one walk over
// the lists the sweep already holds, a counter per (cluster, namespace, scale set,
// runner version, why): no row per runner, no call. A runner counts as idle when
// it carries no run, is not being deleted, is not Failed, no open row names it,
// and was created at least REAPER_IDLE_ALERT_SECONDS ago; as outdated when ARC
// marked it Outdated. Never a verdict: nothing here deletes.
import { OUTDATED_PHASE, isFailed } from "../cluster/arc-failure.ts";
import type { IdleGroup, IdleWhy } from "../model/idle.ts";
import type { ClusterRunner } from "../model/runner.ts";
import type { Lookup } from "../model/view.ts";

interface Listing {
  lookup: (name: string) => Lookup;
  names: () => Iterable<string>;
}

/** Why `runner` never works, or undefined: it works, may still, or cannot be told. */
export function whyIdle(runner: ClusterRunner, now: number, idleAlertSeconds: number): IdleWhy | undefined {
  if (runner.phase === OUTDATED_PHASE) return "outdated";
  if (runner.workflowRunId !== undefined || runner.deletionTimestamp || isFailed(runner)) return undefined;
  const created = runner.createdAt ? Date.parse(runner.createdAt) : Number.NaN;
  return Number.isFinite(created) && now - created >= idleAlertSeconds * 1000 ? "idle" : undefined;
}

/**
 * The groups of runners that never work in `listing`, sorted. `named`: runner names an open row holds
 * (a job started on them, whatever their status shows: on ARC 0.15 the job fields may come late or never).
 */
export function countIdle(listing: Listing, named: ReadonlySet<string>, now: number, idleAlertSeconds: number): IdleGroup[] {
  const groups = new Map<string, IdleGroup>();
  for (const name of listing.names()) {
    if (named.has(name)) continue;
    for (const runner of listing.lookup(name).found) {
      const why = whyIdle(runner, now, idleAlertSeconds);
      if (why === undefined) continue;
      const g: Omit<IdleGroup, "n" | "oldestCreatedAt"> = {
        cluster: runner.cluster ?? "default",
        namespace: runner.namespace,
        scaleSet: runner.scaleSet ?? "",
        runnerVersion: runner.runnerVersion ?? "",
        why,
      };
      const key = [g.cluster, g.namespace, g.scaleSet, g.runnerVersion, g.why].join("\u0000");
      const created = runner.createdAt ? Date.parse(runner.createdAt) : now;
      const old = groups.get(key);
      if (old) {
        old.n += 1;
        if (created < old.oldestCreatedAt) old.oldestCreatedAt = created;
      } else groups.set(key, { ...g, n: 1, oldestCreatedAt: Number.isFinite(created) ? created : now });
    }
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
}
