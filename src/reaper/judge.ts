// The one judge. Its table is the spec, the same lines as README's decision
// table (test/node/docs/decision-table.test.ts holds them equal). Rows are checked in
// this order and the first that matches decides. Reconcile (reconcile.ts) acts
// on the verdict and says when to look again; identify.ts picks the object.
//
// | # | what is known | verdict |
// |---|---|---|
// | 1 | facts; no object that is the facts' runner (its runner id; where either side has none, or ids never matched in its cluster: its uid, or busy on the facts' run: an object of its name that carries no run, another run or another id is idle or moved on, never it), on fresh evidence (a read by name, or a view newer than the runner's last fact) in its own cluster once known | gone: close the facts (never over a `reaped`); the idle object is never deleted on them |
// | 2 | the cluster, the agent or a watched place could not be read; several objects could be the facts' runner; a view older than the facts | keep, counted as an error: cannot judge (ambiguous: checked again) |
// | 3 | facts; the object's uid differs from the one seen busy on the job's run | gone: it was replaced; the new object is judged on its own |
// | 4 | facts; the object was created after the job started (+60 s skew) | gone: not that job's runner; the new object is judged on its own |
// | 5 | no facts, no `status.workflowRunId` | keep: idle |
// | 6 | the object has a `deletionTimestamp` | keep: already being deleted |
// | 7 | the very object seen busy on the job (its uid): `status.workflowRunId` names another run than the facts' | keep: runner moved on |
// | 8 | no facts, `status.workflowRunId` set (busy, nobody told us), seen busy for 3 minutes | keep; ask GitHub (the run, then its jobs), record what it says, judge |
// | 9 | the job, or its run (this attempt or a later one), completed | < grace ago: wait (due at the grace end); ≥ grace ago: delete "job J in owner/repo is <conclusion>, completed Ns ago" or "run X in owner/repo is <conclusion>, completed Ns ago" |
// | 10 | running past `REAPER_RECHECK_SECONDS` with no completion heard, not re-read within it, within the bound | keep; ask GitHub: its run (this attempt) among the repository's in-progress runs has that attempt's jobs read (one page, once per run and interval), else the job is re-read (a completion either reports counts like the webhook's); a job not on that page, or with `REAPER_RECHECK_LISTED_RUNS=listing`, is answered "still running" by the listing (never a delete) |
// | 11 | running, started within the bound | keep (due at the bound or the next recheck) |
// | 12 | running past the bound, GitHub not asked yet | keep; ask GitHub |
// | 13 | GitHub unreachable, token refused, or an answer that is not the API's (a redirect, HTML, `{}`) | keep, counted as an error |
// | 14 | past the bound, GitHub says still running / says completed | delete "job J has been in_progress for Ns, over the bound of Bs" / as row 9, with GitHub's `completed_at` |
// | 15 | `status.phase: Failed` (ARC could not make its pod; it holds a slot of its scale set), no `status.workflowRunId`, not being deleted, not deleted by us before (judge-failed.ts, each sweep) | keep: failed, shown with ARC's reason and message; with `REAPER_FAILED_SECONDS`, failed and created at least that long ago: delete "ARC marked it Failed Ns ago (<reason>: <message>) …" (cause `failed`, within the cap, once); carrying a run: its job's rows judge it |
// | 16 | we deleted it and it is still there `REAPER_STUCK_SECONDS` later (check-deletion.ts) | keep: stuck, never deleted again; with `REAPER_FINISH_STUCK=true` and GitHub saying, read at that moment, that its job completed: remove ARC's finalizers (JSON patch testing the uid and the finalizers), close reaped; GitHub says it runs, cannot be asked, or the object changed: keep |
//
// Pure: no I/O, no clock, no settings beyond the policy passed in.
import type { ClusterRunner, TrackedRunner } from "../model/runner.ts";
import type { ClusterView } from "../model/view.ts";
import { CLOCK_SKEW_MS, type Policy } from "../model/policy.ts";
import type { GithubWord, Verdict } from "../model/verdict.ts";

export interface JudgeInput {
  tracked?: TrackedRunner;
  cluster: ClusterView;
  github?: GithubWord;
  now: number; // ms since epoch
  policy: Policy;
}

const seconds = (ms: number): number => Math.max(0, Math.floor(ms / 1000));

/** A keep that asks GitHub: the reason says so, and `subject` is what it says without the ask (reconcile words its outcome). */
const asking = (subject: string): Pick<Verdict, "reason" | "subject"> => ({ subject, reason: `${subject}: asking GitHub` });

export function judge({ tracked, cluster, github, now, policy }: JudgeInput): Verdict {
  if (tracked && cluster.kind === "missing") {
    return { code: cluster.code ?? "Gone", verdict: "gone", reason: cluster.why ?? `runner ${tracked.runner} is no longer in the cluster` };
  }
  if (cluster.kind === "unknown") {
    return { code: "CannotJudge", verdict: "keep", reason: `cannot judge: ${cluster.why}`, error: true };
  }
  const onCluster = cluster.kind === "found" ? cluster.runner : undefined;
  if (tracked && onCluster) {
    const replaced = notTheJobsRunner(tracked, onCluster);
    if (replaced) return { code: "Replaced", verdict: "gone", reason: replaced };
  }
  if (!tracked && onCluster?.workflowRunId === undefined) {
    return { code: "Idle", verdict: "keep", reason: "idle: no job recorded for this runner" };
  }
  if (onCluster?.deletionTimestamp) {
    return { code: "BeingDeleted", verdict: "keep", reason: `already being deleted since ${onCluster.deletionTimestamp}` };
  }
  if (tracked && onCluster?.workflowRunId !== undefined && onCluster.workflowRunId !== tracked.runId) {
    return {
      code: "MovedOn",
      verdict: "keep",
      reason: `runner moved on: it works on run ${onCluster.workflowRunId}, the facts are about run ${tracked.runId}`,
      about: `run ${onCluster.workflowRunId}`,
    };
  }
  if (!tracked) {
    return {
      code: "UnknownBusy",
      verdict: "keep",
      ...asking(
        `runner works on run ${onCluster?.workflowRunId} in ${onCluster?.jobRepositoryName ?? "an unknown repository"} and no webhook told us about it`,
      ),
      askGithub: true,
    };
  }

  return judgeByFacts(tracked, github, now, policy);
}

/** Rows 3 and 4: the object in the cluster is not the one that took the job, though it has its name. */
export function notTheJobsRunner(tracked: TrackedRunner, onCluster: ClusterRunner): string | undefined {
  if (tracked.uid && tracked.uid !== onCluster.uid) {
    return `runner ${tracked.runner} was replaced: the job's runner had uid ${tracked.uid}, the cluster's has uid ${onCluster.uid}`;
  }
  if (tracked.startedAt && onCluster.createdAt && Date.parse(onCluster.createdAt) > Date.parse(tracked.startedAt) + CLOCK_SKEW_MS) {
    return `runner ${tracked.runner} was created at ${onCluster.createdAt}, after job ${tracked.jobId} started at ${tracked.startedAt}: a new runner of the same name, the job's runner is gone`;
  }
  return undefined;
}

/** Rows 9 to 14: what the facts (and GitHub, when asked) say about the job itself. */
export function judgeByFacts(tracked: TrackedRunner, github: GithubWord | undefined, now: number, policy: Policy): Verdict {
  const finished = finishedEvidence(tracked);
  if (finished) return afterCompletion(finished, now, policy);

  if (!tracked.startedAt) {
    return { code: "NoStartTime", verdict: "keep", reason: `job ${tracked.jobId} has no start time recorded`, error: true };
  }
  const startedMs = Date.parse(tracked.startedAt);
  const runningMs = now - startedMs;
  const boundMs = policy.maxJobSeconds * 1000;
  if (github?.kind === "run-running") return runStillRunning(tracked, github, now, policy);
  if (runningMs <= boundMs) {
    const recheckAt = nextRecheck(tracked, policy);
    if (recheckAt !== undefined && recheckAt <= now && github === undefined) {
      return {
        code: "Recheck",
        verdict: "keep",
        ...asking(`job ${tracked.jobId} in ${tracked.repo} is in_progress for ${seconds(runningMs)}s with no completion heard`),
        askGithub: true,
        recheck: true,
      };
    }
    if (recheckAt !== undefined && github?.kind === "error") {
      return {
        code: "GithubError",
        verdict: "keep",
        reason: `job ${tracked.jobId} in ${tracked.repo} could not be re-read from GitHub: ${github.why}`,
        error: true,
      };
    }
    if (recheckAt !== undefined && github?.kind === "job" && github.status === "completed" && github.completedAt) {
      return afterCompletion(
        { cause: "job-completed", what: `job ${tracked.jobId}`, repo: tracked.repo, conclusion: github.conclusion ?? "completed", at: github.completedAt },
        now,
        policy,
      );
    }
    const due = Math.min(startedMs + boundMs, recheckAt !== undefined && recheckAt > now ? recheckAt : Infinity);
    return {
      code: "Running",
      verdict: "keep",
      reason: `job ${tracked.jobId} in ${tracked.repo} is in_progress for ${seconds(runningMs)}s, within the bound of ${policy.maxJobSeconds}s`,
      dueAt: due,
    };
  }
  if (!github) {
    return {
      code: "OverBoundAsk",
      verdict: "keep",
      ...asking(`job ${tracked.jobId} in ${tracked.repo} is in_progress for ${seconds(runningMs)}s, over the bound of ${policy.maxJobSeconds}s`),
      askGithub: true,
    };
  }
  if (github.kind === "error") {
    return { code: "GithubError", verdict: "keep", reason: `job ${tracked.jobId} is past the bound but GitHub could not confirm: ${github.why}`, error: true };
  }
  if (github.status === "completed" && github.completedAt) {
    return afterCompletion(
      { cause: "job-completed", what: `job ${tracked.jobId}`, repo: tracked.repo, conclusion: github.conclusion ?? "completed", at: github.completedAt },
      now,
      policy,
    );
  }
  return {
    code: "OverBound",
    verdict: "delete",
    reason: `job ${tracked.jobId} has been ${github.status} for ${seconds(runningMs)}s, over the bound of ${policy.maxJobSeconds}s`,
    cause: "over-bound",
  };
}

/**
 * Row 10 answered by the repository's in-progress runs: the job's run (this attempt) is still running, so
 * the job may be. Never a delete; past the bound the job itself must be read (row 12).
 */
function runStillRunning(tracked: TrackedRunner, word: { runId: number; runAttempt: number }, now: number, policy: Policy): Verdict {
  const startedMs = Date.parse(tracked.startedAt ?? "");
  const boundMs = policy.maxJobSeconds * 1000;
  const story = `job ${tracked.jobId} in ${tracked.repo} started ${seconds(now - startedMs)}s ago with no completion heard`;
  if (word.runId !== tracked.runId || word.runAttempt !== tracked.runAttempt) {
    return {
      code: "GithubError",
      verdict: "keep",
      reason: `${story}: the in-progress runs name run ${word.runId} attempt ${word.runAttempt}, not its run ${tracked.runId} attempt ${tracked.runAttempt}`,
      error: true,
    };
  }
  if (now - startedMs > boundMs) {
    return {
      code: "OverBoundAsk",
      verdict: "keep",
      reason: `${story}, over the bound of ${policy.maxJobSeconds}s: its run is in progress; asking GitHub for the job`,
      askGithub: true,
    };
  }
  const recheckAt = nextRecheck(tracked, policy);
  return {
    code: "Running",
    verdict: "keep",
    reason: `${story}, within the bound of ${policy.maxJobSeconds}s; its run ${tracked.runId} is among ${tracked.repo}'s in-progress runs`,
    dueAt: Math.min(startedMs + boundMs, recheckAt !== undefined && recheckAt > now ? recheckAt : Infinity),
  };
}

export interface Finished {
  cause: "job-completed" | "run-completed";
  what: string;
  repo: string;
  conclusion: string;
  at: string;
}

/** When a running job is next re-read from GitHub: a recheck interval after its start, then after each read. */
export function nextRecheck(t: TrackedRunner, policy: Policy): number | undefined {
  if (!policy.recheckSeconds || !t.startedAt) return undefined;
  const every = policy.recheckSeconds * 1000;
  const first = Date.parse(t.startedAt) + every;
  return t.checkedAt === undefined ? first : Math.max(first, t.checkedAt + every);
}

// The earliest positive evidence wins: either proves the job is over.
export function finishedEvidence(t: TrackedRunner): Finished | undefined {
  const evidence: Finished[] = [];
  if (t.jobCompleted) {
    evidence.push({ cause: "job-completed", what: `job ${t.jobId}`, repo: t.repo, conclusion: t.jobCompleted.conclusion, at: t.jobCompleted.at });
  }
  if (t.runCompleted) {
    const attempt = t.runCompleted.attempt > t.runAttempt ? ` (attempt ${t.runCompleted.attempt})` : "";
    evidence.push({ cause: "run-completed", what: `run ${t.runId}${attempt}`, repo: t.repo, conclusion: t.runCompleted.conclusion, at: t.runCompleted.at });
  }
  return evidence.sort((a, b) => Date.parse(a.at) - Date.parse(b.at))[0];
}

function afterCompletion(f: Finished, now: number, policy: Policy): Verdict {
  const completedMs = Date.parse(f.at);
  const agoMs = now - completedMs;
  const story = `${f.what} in ${f.repo} is ${f.conclusion}, completed ${seconds(agoMs)}s ago`;
  if (agoMs < policy.graceSeconds * 1000) {
    return { code: "InGrace", verdict: "wait", reason: `${story}; grace ${policy.graceSeconds}s`, dueAt: completedMs + policy.graceSeconds * 1000 };
  }
  return { code: f.cause === "job-completed" ? "JobCompleted" : "RunCompleted", verdict: "delete", reason: story, cause: f.cause };
}
