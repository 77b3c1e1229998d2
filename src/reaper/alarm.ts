// The alarm: edge-triggered, at the exact time a runner is due (a grace end, a
// bound, a recheck, the end of the wait for a webhook). It reads each due runner
// by name (one GET), judges it with the same step as the sweep, and deletes at
// once. A runner reaped on a webhook's word costs one read and one delete.
import type { Cluster } from "../cluster/ephemeral-runners.ts";
import { judge, type ClusterView } from "./judge.ts";
import type { Case } from "./judge-and-act.ts";
import { judgeActAndRecord, policyOf, unseenCase, type SweepDeps } from "./sweep.ts";

/** At most this many due runners per alarm run; the rest are due still and set the next alarm at once. */
export const ALARM_BATCH = 100;

export type AlarmDeps = Omit<SweepDeps, "log">;

export interface AlarmReport {
  judged: number;
  deleted: number;
  errors: number;
}

export async function runAlarm(deps: AlarmDeps): Promise<AlarmReport> {
  const { ledger, settings, now } = deps;
  const policy = policyOf(settings);
  const cases: Case[] = [];
  for (const record of ledger.dueRunners(now, ALARM_BATCH)) {
    const cluster = await readView(deps.cluster, record.namespace ? [record.namespace] : settings.namespaces, record.runner);
    cases.push({ name: record.runner, record, cluster, verdict: judge({ tracked: record, cluster, now, policy }), errorKind: cluster.kind === "unknown" ? (deps.cluster.errorKind ?? "cluster") : undefined });
  }
  for (const unseen of ledger.dueUnseen(now, ALARM_BATCH)) {
    const cluster = await readView(deps.cluster, [unseen.namespace], unseen.name);
    // Only the very object that was seen busy; anything else is the sweep's to find.
    if (cluster.kind !== "found" || cluster.runner.uid !== unseen.uid) continue;
    const verdict = judge({ cluster, now, policy });
    if (verdict.askGithub) cases.push(unseenCase(cluster.runner, unseen, verdict, now));
  }
  if (cases.length === 0) return { judged: 0, deleted: 0, errors: 0 };
  const deleted = await judgeActAndRecord(cases, deps, "alarm");
  return { judged: cases.length, deleted, errors: cases.filter((c) => c.verdict.error).length };
}

/** One runner by name: the first namespace that has it; missing when none has; unknown when one could not be read. */
export async function readView(cluster: Cluster, namespaces: string[], name: string): Promise<ClusterView> {
  const errors: string[] = [];
  for (const ns of namespaces) {
    try {
      const runner = await cluster.readRunner(ns, name);
      if (runner) return { kind: "found", runner };
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  return errors.length > 0 ? { kind: "unknown", why: errors.join("; ") } : { kind: "missing" };
}
