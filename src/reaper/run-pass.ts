// One pass, for the alarm and the sweep alike: gather the runners to look at
// (the alarm: the due rows, read by name; the sweep: every place listed once),
// reconcile each with one clock and one set of windows, look at our deletions,
// and (the sweep) redeliver failed deliveries now and then. The ledger builds
// the clients once and stores what comes of it.
import { gatherDue } from "./gather-due.ts";
import { gatherListed } from "./gather-listed.ts";
import type { Caller } from "./reconcile.ts";
import { reconcileAll, type PassDeps } from "./reconcile-all.ts";
import { redeliverFailed, type RedeliveryReport } from "./redeliver-failed.ts";
import { errorText } from "../model/error-text.ts";

export type PassKind = Caller;

/** What one pass (the alarm's or a sweep's) did, counted: the sweep line and the last sweep on /admin read it. */
export interface PassSummary {
  kind: PassKind;
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
  /** GitHub requests made (the per-sweep cap and the per-minute window count these). */
  githubCalls: number;
  /** Of those, the ones GitHub counts against the primary rate limit: all but the 304s (conditional requests answered "not modified"). */
  githubCounted: number;
  /** Runners left for the next sweep's first look (the sweep judges at most FIRST_LOOKS_PER_SWEEP new ones). */
  deferred?: number;
  /** Runners whose ask to GitHub (a recheck, a run's read) the budget or a rate limit left for a later pass, oldest asked first. */
  heldForBudget?: number;
  /** The sweep's redelivery of failed deliveries (the alarm redelivers nothing). */
  redelivery?: RedeliveryReport | { error: string };
  /** The places the sweep could not list, and why (the address and the runtime's words). */
  unreadable?: string[];
}

export async function runPass(kind: PassKind, deps: PassDeps): Promise<PassSummary> {
  // The sweep makes sure what each cluster name points at is known before it judges by ids (a name re-pointed
  // carries nothing over); the alarm judges by what is known (an identity read from another URL: no id trusted).
  if (kind === "sweep")
    for (const w of deps.watched) if (w.confirmIdentity) ({ idsMatch: w.idsMatch, current: w.identityCurrent } = await w.confirmIdentity(deps.now));
  const { items, lookAtDeletions, deferred, unreadable } = kind === "alarm" ? await gatherDue(deps) : await gatherListed(deps);
  const redelivery = kind === "sweep" ? await redeliverIfDue(deps) : undefined;
  const { results, deleted: reaped } = await reconcileAll(items, deps, kind);
  const deleted = reaped + (await lookAtDeletions());
  // A job's runner found by its runner id: ids are GitHub's in its cluster, and from now on another id rules an object out there.
  const matched = results.flatMap((r) => (r.view.kind === "found" && r.view.byId ? [r.view.runner.cluster ?? "default"] : []));
  // Not where ids already match, nor where the identity held is not the cluster's now (a KUBE_API_URL not read yet).
  const fresh = matched.filter((c) => !deps.watched.some((w) => w.name === c && (w.idsMatch || w.identityCurrent === false)));
  if (fresh.length > 0) deps.ledger.runnerIdsMatched?.(new Set(fresh), deps.now);

  const count = (v: string) => results.filter((r) => r.verdict.verdict === v && !r.close).length;
  const errorsByKind: Record<string, number> = { cluster: 0, github: 0 };
  if (redelivery) errorsByKind.redelivery = "error" in redelivery ? 1 : redelivery.failed.length;
  for (const r of results) if (r.verdict.error) errorsByKind[r.errorKind ?? "github"] = (errorsByKind[r.errorKind ?? "github"] ?? 0) + 1;
  // A place that could not be listed is an error of its kind even when no runner there is tracked (then no result counts it).
  if (unreadable) errorsByKind[unreadable.kind] = Math.max(errorsByKind[unreadable.kind] ?? 0, unreadable.why.length);
  const report: PassSummary = {
    kind,
    checked: results.length,
    deleted,
    kept: count("keep") + count("delete"),
    waiting: count("wait"),
    gone: results.filter((r) => r.close === "gone").length,
    heldBack: results.filter((r) => r.heldFor === "cap").length,
    errors: Object.values(errorsByKind).reduce((a, b) => a + b, 0),
    errorsByKind,
    dryRun: deps.settings.dryRun,
    paused: deps.ledger.paused(),
    githubCalls: deps.budget.used,
    githubCounted: deps.budget.used - deps.budget.notModified,
  };
  if (deferred) report.deferred = deferred;
  if (unreadable) report.unreadable = unreadable.why;
  const heldForBudget = results.filter((r) => r.heldFor === "budget").length;
  if (heldForBudget) report.heldForBudget = heldForBudget;
  if (redelivery) report.redelivery = redelivery;
  return report;
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
