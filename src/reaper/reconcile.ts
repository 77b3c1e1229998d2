// The one reconcile step, like a Kubernetes controller's Reconcile(key) ->
// Result{RequeueAfter}: for one runner (its open row, or a busy runner nobody
// told us about) and one view of the cluster, judge, act (delete, ask GitHub
// within the budget, or nothing) and answer the verdict, what was done, its next
// look (src/model/next-look.ts, ms) and what holds it. The judge may say when;
// reconcile decides, and backs off a row whose ask failed (1 minute doubling to
// 1 hour). The pass (run-pass.ts) is its one caller; the ledger stores what it
// answers, and nothing else picks a due time.
import type { DeleteContext, DeleteOutcome } from "../cluster/ephemeral-runners.ts";
import { GithubBudgetExhausted, GithubRateLimited } from "../github/call-budget.ts";
import type { Github } from "../github/github-client.ts";
import { backoffMs, lookAt, NEVER, nextLookOf, WITH_SWEEP, type NextLook } from "../model/next-look.ts";
import { SETTLE_MS, STALE_RECHECK_MS, UNSEEN_RETRY_MS, WINDOW_MS, type Policy } from "../model/policy.ts";
import type { ClusterRunner, RunnerRecord, UnseenRunner } from "../model/runner.ts";
import type { ClusterView } from "../model/view.ts";
import type { HeldFor, Verdict } from "../model/verdict.ts";
import type { SlidingWindow } from "../model/window.ts";
import { askAboutJob, askAboutRunner, type AskDeps } from "./ask-github.ts";
import { judge, notTheJobsRunner } from "./judge.ts";
import { errorText } from "../model/error-text.ts";

export type ErrorKind = "cluster" | "github" | "agent";
export type Caller = "alarm" | "sweep";

/** One runner to reconcile: an open row, or an unseen busy runner, and the object the view names. */
export interface ReconcileInput {
  name: string;
  record?: RunnerRecord;
  unseen?: UnseenRunner;
  view: ClusterView;
  /** The kind of error a view that could not be had counts as. */
  viewErrorKind?: ErrorKind;
}

export interface Result extends ReconcileInput {
  verdict: Verdict;
  /** Close the row (an unseen row: end it). */
  close?: "reaped" | "gone";
  /** GitHub's REST API was asked about this runner now. */
  asked?: boolean;
  /** This step sent the DELETE (not another row's delete of the same object). */
  deleted?: boolean;
  /** When to look again: a time (ms), with the next sweep, or never (closed). */
  next: NextLook;
  /** Failed asks in a row (a GitHub error or 404, an unreadable place): the back-off's count. */
  failures: number;
  heldFor?: HeldFor;
  errorKind?: ErrorKind;
  /** The object seen doing the facts' job: only its uid may ever be deleted for it. */
  identity?: Pick<ClusterRunner, "uid" | "namespace" | "cluster">;
}

export interface ReconcileContext {
  /** The pass's one clock: max(scheduled time, Date.now()) at its start. */
  now: number;
  /** The real clock at the moment of a call, for the deletion window (never the scheduled time). */
  clock: () => number;
  policy: Policy;
  dryRun: boolean;
  paused: boolean;
  github: Github | Error;
  /** When GitHub may be asked again after the window's budget ran out. */
  githubFreeAt: () => number;
  deletions: SlidingWindow;
  deleteRunner: (runner: ClusterRunner, context: DeleteContext) => Promise<DeleteOutcome>;
  /** The error kind of a failed delete of this runner (its cluster's: "cluster" or "agent"). */
  deleteErrorKind: (runner: ClusterRunner) => ErrorKind;
  learn: AskDeps["learn"];
  /** A recheck's answer from the repository's runs in progress (running-runs.ts). */
  listed?: AskDeps["listed"];
  /** A listed run's tracked job as its attempt's first page of jobs shows it (recheck-runs.ts). */
  attemptJob?: AskDeps["attemptJob"];
  /** Objects deleted in this invocation: two open jobs naming one object are served by one delete. */
  reapedUids: Set<string>;
}

export async function reconcile(item: ReconcileInput, ctx: ReconcileContext): Promise<Result> {
  return settle(await decide(item, ctx), item, ctx.now);
}

async function decide(item: ReconcileInput, ctx: ReconcileContext): Promise<UnsettledVerdict & Partial<Result>> {
  const first = item.record ? trackedVerdict(item.record, item.view, ctx) : unseenVerdict(item.unseen!, item.view, ctx.now, ctx.policy);
  if (first.close || first.dueAt !== undefined) return { ...finish(item, first.verdict, first), ...first };
  let result: UnsettledVerdict & Partial<Result> = finish(item, first.verdict, {});
  // A row whose last ask failed is not asked again (the sweep visits it every minute) before its back-off ends.
  if (result.verdict.askGithub && item.record && backingOff(item, ctx.now))
    return { ...result, verdict: { code: "BackingOff", verdict: "keep", reason: item.record.reason }, deferred: true };
  if (result.verdict.askGithub) result = await ask(result as Result, ctx);
  if (result.verdict.verdict === "delete") result = await act(result as Result, ctx);
  return result;
}

/** A verdict before settle(): its own time, close, hold, and whether its ask failed or was deferred; settle() turns these into the next look and the back-off count. */
type UnsettledVerdict = {
  verdict: Verdict;
  close?: "reaped" | "gone";
  /** A time of the step's own (ms), null: none (with the sweep); undefined: the verdict's own. */
  dueAt?: number | null;
  heldFor?: HeldFor;
  /** This look's ask failed (GitHub, or a place that could not be read). */
  failed?: boolean;
  /** Not looked at for want of time: the row's back-off is not over; its count and time stand. */
  deferred?: boolean;
};

const failuresOf = (item: ReconcileInput): number => item.record?.failures ?? item.unseen?.failures ?? 0;
const storedDue = (item: ReconcileInput): number | null => (item.record ? item.record.dueAt : (item.unseen?.dueAt ?? null));
/** Failed before, and its next ask lies ahead. */
const backingOff = (item: ReconcileInput, now: number): boolean => failuresOf(item) > 0 && (storedDue(item) ?? 0) > now;

/**
 * The next look, from the step's time and the back-off: a failed ask counts once per look that was due
 * (a sweep's visit before then keeps the count and the time), and is asked again 1, 2, 4 ... 60 minutes later.
 */
function settle(step: UnsettledVerdict & Partial<Result>, item: ReconcileInput, now: number): Result {
  const { dueAt, failed, deferred, ...rest } = step;
  const r = rest as Result;
  const before = failuresOf(item);
  if (r.close) return { ...r, next: NEVER, failures: 0 };
  const own = dueAt === undefined ? null : dueAt;
  if (deferred) return { ...r, next: nextLookOf(storedDue(item)), failures: before };
  if (failed) {
    if (backingOff(item, now)) return { ...r, next: nextLookOf(storedDue(item)), failures: before };
    const failures = before + 1;
    // Held for the agent: its return lifts the hold (the row is due then); no alarm of its own meanwhile.
    if (r.heldFor === "agent") return { ...r, next: own === null ? WITH_SWEEP : lookAt(own), failures };
    return { ...r, next: lookAt(Math.max(own ?? 0, now + backoffMs(failures))), failures };
  }
  return { ...r, next: own === null ? WITH_SWEEP : lookAt(own), failures: 0 };
}

function trackedVerdict(record: RunnerRecord, view: ClusterView, ctx: ReconcileContext): UnsettledVerdict {
  const verdict = judge({ tracked: record, cluster: view, now: ctx.now, policy: ctx.policy });
  if (verdict.verdict === "gone") return { verdict, close: "gone" };
  // A view older than the facts: looked at again soon, by a read by name (the agent's fresh GET).
  if (view.kind === "unknown" && view.stale) return { verdict, dueAt: ctx.now + STALE_RECHECK_MS };
  return { verdict };
}

/** A busy runner without facts: asked about once the wait for its webhook is over, then after a back-off. */
function unseenVerdict(unseen: UnseenRunner, view: ClusterView, now: number, policy: Policy): UnsettledVerdict {
  if (view.kind === "missing")
    return { verdict: { code: "Gone", verdict: "gone", reason: `runner ${unseen.name} left the cluster before any webhook named it` }, close: "gone" };
  if (view.kind === "unknown") {
    const verdict: Verdict = { code: "CannotJudge", verdict: "keep", reason: `cannot judge: ${view.why}`, error: true };
    return view.stale ? { verdict, dueAt: now + STALE_RECHECK_MS } : { verdict, failed: true };
  }
  const runner = view.runner;
  const verdict = judge({ cluster: view, now, policy });
  if (!verdict.askGithub || runner.workflowRunId !== unseen.runId) {
    return {
      verdict: { code: "Gone", verdict: "gone", reason: `runner ${unseen.name} is no longer busy on run ${unseen.runId}: ${verdict.reason}` },
      close: "gone",
    };
  }
  if (now - unseen.firstSeen < SETTLE_MS) {
    const reason = `runner works on run ${runner.workflowRunId} and no webhook told us about it yet: waiting ${SETTLE_MS / 1000}s for one before asking GitHub`;
    return { verdict: { code: "AwaitingWebhook", verdict: "keep", reason }, dueAt: unseen.firstSeen + SETTLE_MS };
  }
  // The sweep sees every unseen row each minute; one GitHub could not place waits for its back-off.
  if (unseen.dueAt !== null && unseen.dueAt > now && unseen.reason !== null)
    return { verdict: { code: "BackingOff", verdict: "keep", reason: unseen.reason }, dueAt: unseen.dueAt, deferred: (unseen.failures ?? 0) > 0 };
  return { verdict };
}

type Acted = UnsettledVerdict & Result;

async function ask(r: Acted, ctx: ReconcileContext): Promise<Acted> {
  const { github } = ctx;
  const withoutAsk = r.verdict.subject ?? r.verdict.reason;
  if (github instanceof Error)
    return {
      ...r,
      verdict: { code: "GithubError", verdict: "keep", reason: `cannot ask GitHub: ${github.message}`, error: true },
      errorKind: "github",
      dueAt: null,
      failed: true,
    };
  try {
    const deps: AskDeps = { github, policy: ctx.policy, now: ctx.now, learn: ctx.learn, listed: ctx.listed, attemptJob: ctx.attemptJob };
    const asked = r.record
      ? await askAboutJob(r.record, r.view, deps, r.verdict.recheck === true)
      : r.view.kind === "found"
        ? await askAboutRunner(r.view.runner, r.view, deps)
        : undefined;
    if (!asked) return r;
    const next = finish({ ...r, record: asked.record ?? r.record }, asked.verdict, {});
    // A busy runner GitHub could not place is a failed ask: asked again after its back-off (at least UNSEEN_RETRY_MS).
    if (!r.record && !asked.record) return { ...next, asked: true, dueAt: ctx.now + UNSEEN_RETRY_MS, failed: true };
    return { ...next, asked: true };
  } catch (e) {
    if (e instanceof GithubBudgetExhausted || e instanceof GithubRateLimited) {
      const until = e instanceof GithubBudgetExhausted ? ctx.githubFreeAt() : ctx.now + WINDOW_MS;
      return {
        ...r,
        verdict: { code: "Budget", verdict: "keep", reason: `${withoutAsk}: not asked now (${e.message})` },
        heldFor: "budget",
        dueAt: Math.max(until, ctx.now + 1000),
      };
    }
    // A recheck is once per interval even when it fails: retried every minute, a job GitHub cannot
    // read (a deleted run answers 404) would be asked first, oldest first, by every sweep until the bound.
    const verdict: Verdict = { code: "GithubError", verdict: "keep", reason: `GitHub could not be read, kept: ${errorText(e)}`, error: true };
    if (r.record && r.verdict.recheck)
      return {
        ...finish(r, judge({ tracked: { ...r.record, checkedAt: ctx.now }, cluster: r.view, now: ctx.now, policy: ctx.policy }), {}),
        verdict,
        asked: true,
        errorKind: "github",
        failed: true,
      };
    return { ...r, verdict, errorKind: "github", dueAt: null, failed: true };
  }
}

async function act(r: Acted, ctx: ReconcileContext): Promise<Acted> {
  if (r.view.kind !== "found") return r; // the judge never condemns what it cannot see
  const runner = r.view.runner;
  const why = r.verdict.reason;
  if (ctx.reapedUids.has(runner.uid)) return { ...r, close: "reaped" };
  if (ctx.dryRun) return { ...r, verdict: { code: "DryRun", verdict: "keep", reason: `dry run: would delete: ${why}` }, dueAt: null };
  if (ctx.paused) return { ...r, verdict: { code: "Paused", verdict: "keep", reason: `paused: would delete: ${why}` }, heldFor: "paused", dueAt: null };
  // The window counts real time: late passes (a queued cron) never share a cap stamped in the past.
  const at = ctx.clock();
  if (ctx.deletions.left(at) <= 0) {
    return {
      ...r,
      verdict: { code: "Cap", verdict: "keep", reason: `deletion cap of ${ctx.deletions.limit} in 60s reached, held back: ${why}` },
      heldFor: "cap",
      dueAt: Math.max(ctx.deletions.freeAt(at), ctx.now + 1000),
    };
  }
  ctx.deletions.take(at);
  const outcome = await ctx.deleteRunner(runner, { runId: r.record?.runId ?? runner.workflowRunId, reason: why });
  if (outcome.kind === "deleted") {
    ctx.reapedUids.add(runner.uid);
    return { ...r, close: "reaped", deleted: true };
  }
  if (outcome.kind === "gone")
    return { ...r, verdict: { code: "Gone", verdict: "gone", reason: `runner ${r.name} was already gone from ${runner.namespace} (404)` }, close: "gone" };
  const errorKind = ctx.deleteErrorKind(runner);
  return {
    ...r,
    verdict: { code: "DeleteFailed", verdict: "keep", reason: `delete failed, retried later: ${outcome.why}`, error: true },
    errorKind,
    heldFor: errorKind === "agent" ? "agent" : undefined,
    dueAt: null,
    failed: true,
  };
}

/** The verdict with its time and hold; the identity the facts' runner is known by. */
function finish(item: ReconcileInput, verdict: Verdict, step: Omit<UnsettledVerdict, "verdict">): Acted {
  const result: Acted = { ...item, verdict, dueAt: step.dueAt !== undefined ? step.dueAt : (verdict.dueAt ?? null), next: WITH_SWEEP, failures: 0 };
  if (step.close) result.close = step.close;
  if (step.heldFor) result.heldFor = step.heldFor;
  if (verdict.error) {
    result.errorKind = item.view.kind === "unknown" ? (item.viewErrorKind ?? "cluster") : "github";
    if (item.view.kind === "unknown" && item.view.agent) result.heldFor = "agent";
    // A look that could not be had (an unreadable place, an away agent) is a failed ask; a stale view is not.
    if (item.view.kind === "unknown" && !item.view.stale) result.failed = true;
  }
  const runner = item.view.kind === "found" ? item.view.runner : undefined;
  const record = item.record;
  const theJobs = item.view.kind === "found" && (item.view.byId === true || runner?.workflowRunId === record?.runId);
  if (record && runner && theJobs && !notTheJobsRunner(record, runner)) {
    result.identity = { uid: record.uid ?? runner.uid, namespace: record.namespace ?? runner.namespace, cluster: record.cluster ?? runner.cluster };
  }
  return result;
}
