// The sweep: the level-triggered net, once a minute. It lists every watched
// place once, reads the ledger's open runners and unseen rows only (never the
// closed history), brings every busy runner that no open row accounts for, and
// hands each to the same reconcile step as the alarm. Now and then it also
// redelivers failed deliveries.
import type { ClusterRunner, UnseenRunner } from "../model/runner.ts";
import { identifyTracked, identifyUnseen } from "./identify.ts";
import { notTheJobsRunner } from "./judge.ts";
import { lookAtDeletion } from "./look-at-deletion.ts";
import { listWatched } from "./look.ts";
import type { Item } from "./reconcile.ts";
import { reconcileAll, type PassDeps } from "./reconcile-all.ts";
import { redeliverFailed, type RedeliveryReport } from "./redeliver-failed.ts";
import { errorText } from "../model/error-text.ts";

export interface SweepReport {
  checked: number;
  deleted: number;
  kept: number;
  waiting: number;
  gone: number;
  heldBack: number;
  errors: number;
  errorsByKind: Record<string, number>;
  dryRun: boolean;
  paused: boolean;
  githubCalls: number;
  redelivery: RedeliveryReport | { error: string };
}

export async function sweep(deps: PassDeps): Promise<SweepReport> {
  const { settings, now, ledger } = deps;
  // The ledger's rows are read before the cluster is listed: a row whose facts come in while the
  // lists are out is judged by the next look, never against lists taken before it existed.
  const open = ledger.openRunners();
  const unseen = ledger.unseen();
  const listing = await listWatched(deps.watched);
  // A view that could not be had counts as the clusters' own kind of error ("agent" in agent mode).
  const viewErrorKind = deps.watched[0]?.cluster.errorKind ?? "cluster";

  const items: Item[] = open.map((record) => ({ name: record.runner, record, view: identifyTracked(record, listing.lookup(record.runner)), viewErrorKind }));
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
  for (const u of remembered.values()) items.push({ name: u.name, unseen: u, view: identifyUnseen(u, listing.lookup(u.name)), viewErrorKind });

  const redelivery = await redeliverIfDue(deps);
  const { results, deleted } = await reconcileAll(items, deps, "sweep");
  // Our deletions: gone from the lists (a fresh look) ends their watch without a read of their own.
  for (const w of ledger.deletionWatches()) {
    const lookup = listing.lookup(w.name);
    const there = lookup.found.some((r) => r.uid === w.uid);
    if ((!there && lookup.unreadable.length === 0) || w.dueAt <= now) await lookAtDeletion(w, deps, "sweep", lookup);
  }

  const count = (v: string) => results.filter((r) => r.verdict.verdict === v && !r.close).length;
  const errorsByKind: Record<string, number> = { cluster: 0, github: 0, redelivery: "error" in redelivery ? 1 : redelivery.failed.length };
  for (const r of results) if (r.verdict.error) errorsByKind[r.errorKind ?? "github"] = (errorsByKind[r.errorKind ?? "github"] ?? 0) + 1;
  return {
    checked: results.length,
    deleted,
    kept: count("keep") + count("delete"),
    waiting: count("wait"),
    gone: results.filter((r) => r.close === "gone").length,
    heldBack: results.filter((r) => r.heldFor === "cap").length,
    errors: Object.values(errorsByKind).reduce((a, b) => a + b, 0),
    errorsByKind,
    dryRun: settings.dryRun,
    paused: ledger.paused(),
    githubCalls: deps.budget.used,
    redelivery,
  };
}

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
    reason: "",
  };
}

async function redeliverIfDue(deps: PassDeps): Promise<RedeliveryReport | { error: string }> {
  const { ledger, settings, now, github, budget } = deps;
  if (github instanceof Error) return { error: github.message };
  try {
    const result = await redeliverFailed({
      github,
      store: ledger.redeliveries,
      mark: ledger.deliveriesMark(),
      now,
      lookbackSeconds: settings.redeliveryLookbackSeconds,
      everySeconds: settings.deliveriesEverySeconds,
      // Never more than half the budget: runner checks need the rest.
      maxCallsUsed: () => budget.used >= Math.floor(budget.limit / 2),
    });
    ledger.setDeliveriesMark(result.mark);
    return result.report;
  } catch (e) {
    return { error: errorText(e) };
  }
}
