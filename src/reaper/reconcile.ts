// The one reconcile step, like a Kubernetes controller's Reconcile(key) ->
// Result{RequeueAfter}: for one runner (its open row, or a busy runner nobody
// told us about) and one view of the cluster, judge, act (delete, ask GitHub
// within the budget, or nothing) and answer the verdict, what was done, its next
// look and what holds it. Each branch answers its next look whole, from the one
// function that answers it (src/reaper/next-look.ts: the judge's time, a failed
// ask's back-off of 1 minute doubling to 1 hour, a hold); the facts' schedule, a
// recheck and a lifted hold take theirs from the same function. Its one caller
// is reconcileAll (reconcile-all.ts, within a pass); the ledger stores what it answers.
import type { DeleteContext, DeleteOutcome } from "../cluster/ephemeral-runners.ts";
import { GithubBudgetExhausted, GithubRateLimited } from "../github/call-budget.ts";
import type { Github } from "../github/github-client.ts";
import { nextLookOf, type NextLook } from "../model/next-look.ts";
import { SETTLE_MS, UNSEEN_RETRY_MS, WINDOW_MS, type Policy } from "../model/policy.ts";
import type { ClusterRunner, RunnerRecord, UnseenRunner } from "../model/runner.ts";
import type { ClusterView } from "../model/view.ts";
import { type HeldFor, type Verdict, verdictKey } from "../model/verdict.ts";
import type { SlidingWindow } from "../model/window.ts";
import { askAboutJob, askAboutRunner, type AskDeps } from "./ask-github.ts";
import { JobNamesAnotherRunner } from "./job-names-runner.ts";
import { judge, notTheJobsRunner } from "./judge.ts";
import { nextLook } from "./next-look.ts";
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
  /** deleteInItsCluster (look.ts) over the pass's watched clusters; the unit tests hand in a fake cluster's. */
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
  const before: Before = { now: ctx.now, failures: failuresOf(item), stored: storedLook(item) };
  const first = item.record ? trackedVerdict(item, item.record, ctx, before) : unseenVerdict(item, item.unseen!, ctx, before);
  if ("next" in first) return first;
  let result = resultOfVerdict(item, first.judged, before);
  // A row whose last ask failed is not asked again (the sweep visits it every minute) before its back-off ends.
  if (result.verdict.askGithub && item.record && backingOff(before))
    return { ...result, verdict: { code: "BackingOff", verdict: "keep", reason: item.record.reason }, ...keptForBackoff(before) };
  if (result.verdict.askGithub) result = await ask(result, ctx, before);
  // Nor is a DELETE that failed sent again before its back-off ends: a struggling API server is not hit every sweep.
  if (result.verdict.verdict === "delete" && item.record?.verdictKey === DELETE_FAILED && backingOff(before))
    return { ...result, verdict: { code: "BackingOff", verdict: "keep", reason: item.record.reason }, ...keptForBackoff(before) };
  if (result.verdict.verdict === "delete") result = await act(result, ctx, before);
  return result;
}

/** The runner as it came in, for the back-off: the pass's now, its failed asks in a row, its stored next look. */
interface Before {
  now: number;
  failures: number;
  stored: NextLook;
}

/** The key a row keeps while its last DELETE failed (a back-off keeps the key it had). */
const DELETE_FAILED = verdictKey({ verdict: "keep", code: "DeleteFailed" });
const failuresOf = (item: ReconcileInput): number => item.record?.failures ?? item.unseen?.failures ?? 0;
/** The row's stored due time, read back as a next look. */
const storedLook = (item: ReconcileInput): NextLook => nextLookOf(item.record ? item.record.dueAt : (item.unseen?.dueAt ?? null));
/** Failed before, and its next ask lies ahead. */
const backingOff = (b: Before): boolean => b.failures > 0 && "at" in b.stored && b.stored.at > b.now;

/** Not looked at for want of time: the back-off is not over; its count and time stand. */
const keptForBackoff = (b: Before): Pick<Result, "next" | "failures"> => ({ next: nextLook({ kind: "backing-off", stored: b.stored }), failures: b.failures });

/**
 * A failed ask (GitHub, or a place that could not be read) counts once per look that was due (a sweep's
 * visit before then keeps the count and the time), and is asked again 1, 2, 4 ... 60 minutes later, no
 * sooner than `at`, the step's own time.
 */
function afterFailure(b: Before, at: number | undefined, heldFor: HeldFor | undefined): Pick<Result, "next" | "failures"> {
  if (backingOff(b)) return keptForBackoff(b);
  const failures = b.failures + 1;
  return { next: nextLook({ kind: "failed", failures, now: b.now, at, heldFor }), failures };
}

const closed = (close: "reaped" | "gone"): Pick<Result, "close" | "next" | "failures"> => ({ close, next: nextLook({ kind: "closed" }), failures: 0 });

/** The first look's answer: whole (closed, a stale view, waiting, backing off), or the judge's verdict to ask or act on. */
type FirstLook = Result | { judged: Verdict };

/** A tracked row: closed by the judge, looked at again soon when its view is older than its facts, or judged on. */
function trackedVerdict(item: ReconcileInput, record: RunnerRecord, ctx: ReconcileContext, before: Before): FirstLook {
  const verdict = judge({ tracked: record, cluster: item.view, now: ctx.now, policy: ctx.policy });
  if (verdict.verdict === "gone") return { ...resultOfVerdict(item, verdict, before), ...closed("gone") };
  // A view older than the facts: looked at again soon, by a read by name (the agent's fresh GET).
  if (item.view.kind === "unknown" && item.view.stale)
    return { ...resultOfVerdict(item, verdict, before), next: nextLook({ kind: "stale-view", now: ctx.now }), failures: 0 };
  return { judged: verdict };
}

/** A busy runner without facts: asked about once the wait for its webhook is over, then after a back-off. */
function unseenVerdict(item: ReconcileInput, unseen: UnseenRunner, ctx: ReconcileContext, before: Before): FirstLook {
  const { view } = item;
  const { now, policy } = ctx;
  if (view.kind === "missing") {
    const verdict: Verdict =
      view.code === "Unwatched"
        ? { code: "Unwatched", verdict: "gone", reason: view.why ?? `runner ${unseen.name}: its cluster is no longer watched` }
        : { code: "Gone", verdict: "gone", reason: `runner ${unseen.name} left the cluster before any webhook named it` };
    return { ...resultOfVerdict(item, verdict, before), ...closed("gone") };
  }
  if (view.kind === "unknown") {
    const verdict: Verdict = { code: "CannotJudge", verdict: "keep", reason: `cannot judge: ${view.why}`, error: true };
    const result = resultOfVerdict(item, verdict, before);
    return view.stale ? { ...result, next: nextLook({ kind: "stale-view", now }), failures: 0 } : result;
  }
  const runner = view.runner;
  const verdict = judge({ cluster: view, now, policy });
  if (!verdict.askGithub || runner.workflowRunId !== unseen.runId) {
    const gone: Verdict = { code: "Gone", verdict: "gone", reason: `runner ${unseen.name} is no longer busy on run ${unseen.runId}: ${verdict.reason}` };
    return { ...resultOfVerdict(item, gone, before), ...closed("gone") };
  }
  if (now - unseen.firstSeen < SETTLE_MS) {
    const reason = `runner works on run ${runner.workflowRunId} and no webhook told us about it yet: waiting ${SETTLE_MS / 1000}s for one before asking GitHub`;
    const waiting: Verdict = { code: "AwaitingWebhook", verdict: "keep", reason };
    return { ...resultOfVerdict(item, waiting, before), next: nextLook({ kind: "awaiting-webhook", firstSeen: unseen.firstSeen }), failures: 0 };
  }
  // The sweep sees every unseen row each minute; one GitHub could not place waits for its back-off.
  if (unseen.dueAt !== null && unseen.dueAt > now && unseen.reason !== null)
    return { ...resultOfVerdict(item, { code: "BackingOff", verdict: "keep", reason: unseen.reason }, before), ...keptForBackoff(before) };
  return { judged: verdict };
}

async function ask(r: Result, ctx: ReconcileContext, before: Before): Promise<Result> {
  const { github } = ctx;
  const withoutAsk = r.verdict.subject ?? r.verdict.reason;
  if (github instanceof Error)
    return {
      ...r,
      verdict: { code: "GithubError", verdict: "keep", reason: `cannot ask GitHub: ${github.message}`, error: true },
      errorKind: "github",
      ...afterFailure(before, undefined, r.heldFor),
    };
  try {
    const deps: AskDeps = { github, policy: ctx.policy, now: ctx.now, learn: ctx.learn, listed: ctx.listed, attemptJob: ctx.attemptJob };
    const asked = r.record
      ? await askAboutJob(r.record, r.view, deps, r.verdict.recheck === true)
      : r.view.kind === "found"
        ? await askAboutRunner(r.view.runner, r.view, deps)
        : undefined;
    if (!asked) return r;
    const next = resultOfVerdict({ ...r, record: asked.record ?? r.record }, asked.verdict, before);
    // A busy runner GitHub could not place is a failed ask: asked again after its back-off (at least UNSEEN_RETRY_MS).
    if (!r.record && !asked.record) return { ...next, asked: true, ...afterFailure(before, ctx.now + UNSEEN_RETRY_MS, next.heldFor) };
    return { ...next, asked: true };
  } catch (e) {
    if (e instanceof GithubBudgetExhausted || e instanceof GithubRateLimited) {
      const until = e instanceof GithubBudgetExhausted ? ctx.githubFreeAt() : ctx.now + WINDOW_MS;
      return {
        ...r,
        verdict: { code: "Budget", verdict: "keep", reason: `${withoutAsk}: not asked now (${e.message})` },
        heldFor: "budget",
        next: nextLook({ kind: "budget", until, now: ctx.now }),
        failures: 0,
      };
    }
    // A recheck is once per interval even when it fails: retried every minute, a job GitHub cannot
    // read (a deleted run answers 404) would be asked first, oldest first, by every sweep until the bound.
    const verdict: Verdict =
      e instanceof JobNamesAnotherRunner
        ? { code: "JobNamesAnotherRunner", verdict: "keep", reason: e.message, error: true }
        : { code: "GithubError", verdict: "keep", reason: `GitHub could not be read, kept: ${errorText(e)}`, error: true };
    if (r.record && r.verdict.recheck) {
      const own = judge({ tracked: { ...r.record, checkedAt: ctx.now }, cluster: r.view, now: ctx.now, policy: ctx.policy });
      const rechecked = resultOfVerdict(r, own, before);
      return { ...rechecked, verdict, asked: true, errorKind: "github", ...afterFailure(before, own.dueAt, rechecked.heldFor) };
    }
    return { ...r, verdict, errorKind: "github", ...afterFailure(before, undefined, r.heldFor) };
  }
}

async function act(r: Result, ctx: ReconcileContext, before: Before): Promise<Result> {
  if (r.view.kind !== "found") return r; // the judge never condemns what it cannot see
  const runner = r.view.runner;
  const why = r.verdict.reason;
  if (ctx.reapedUids.has(runner.uid)) return { ...r, ...closed("reaped") };
  if (ctx.dryRun)
    return { ...r, verdict: { code: "DryRun", verdict: "keep", reason: `dry run: would delete: ${why}` }, next: nextLook({ kind: "dry-run" }), failures: 0 };
  if (ctx.paused)
    return {
      ...r,
      verdict: { code: "Paused", verdict: "keep", reason: `paused: would delete: ${why}` },
      heldFor: "paused",
      next: nextLook({ kind: "paused" }),
      failures: 0,
    };
  // The window counts real time: late passes (a queued cron) never share a cap stamped in the past.
  const at = ctx.clock();
  if (ctx.deletions.left(at) <= 0) {
    return {
      ...r,
      verdict: { code: "Cap", verdict: "keep", reason: `deletion cap of ${ctx.deletions.limit} in 60s reached, held back: ${why}` },
      heldFor: "cap",
      next: nextLook({ kind: "cap", freeAt: ctx.deletions.freeAt(at), now: ctx.now }),
      failures: 0,
    };
  }
  ctx.deletions.take(at);
  const outcome = await ctx.deleteRunner(runner, { runId: r.record?.runId ?? runner.workflowRunId, reason: why });
  if (outcome.kind === "deleted") {
    ctx.reapedUids.add(runner.uid);
    return { ...r, ...closed("reaped"), deleted: true };
  }
  if (outcome.kind === "gone")
    return { ...r, verdict: { code: "Gone", verdict: "gone", reason: `runner ${r.name} was already gone from ${runner.namespace} (404)` }, ...closed("gone") };
  const errorKind = ctx.deleteErrorKind(runner);
  const heldFor: HeldFor | undefined = errorKind === "agent" ? "agent" : undefined;
  return {
    ...r,
    verdict: { code: "DeleteFailed", verdict: "keep", reason: `delete failed, retried later: ${outcome.why}`, error: true },
    errorKind,
    heldFor,
    ...afterFailure(before, undefined, heldFor),
  };
}

/**
 * The result a verdict makes of a runner: its error kind and hold (an unreadable place, an away agent), its next
 * look (the judge's own time, or a failed look's back-off) and the identity the facts' runner is known by.
 */
function resultOfVerdict(item: ReconcileInput, verdict: Verdict, before: Before): Result {
  const result: Result = { ...item, verdict, next: nextLook({ kind: "judged", verdict }), failures: 0 };
  if (verdict.error) {
    result.errorKind = item.view.kind === "unknown" ? (item.viewErrorKind ?? "cluster") : "github";
    if (item.view.kind === "unknown" && item.view.agent) result.heldFor = "agent";
    // A look that could not be had (an unreadable place, an away agent) is a failed ask; a stale view is not.
    if (item.view.kind === "unknown" && !item.view.stale) Object.assign(result, afterFailure(before, verdict.dueAt, result.heldFor));
  }
  const runner = item.view.kind === "found" ? item.view.runner : undefined;
  const record = item.record;
  const theJobs = item.view.kind === "found" && (item.view.byId === true || runner?.workflowRunId === record?.runId);
  if (record && runner && theJobs && !notTheJobsRunner(record, runner)) {
    result.identity = { uid: record.uid ?? runner.uid, namespace: record.namespace ?? runner.namespace, cluster: record.cluster ?? runner.cluster };
  }
  return result;
}
