// The one "judge and act" step that the alarm and the sweep both call. The
// callers differ only in how they see the cluster (one read per due runner, or
// one list per namespace); from here on every runner is judged, asked about
// and deleted the same way.
import type { Cluster } from "../cluster/ephemeral-runners.ts";
import { GithubBudgetExhausted, GithubRateLimited } from "../github/call-budget.ts";
import type { Github } from "../github/github-client.ts";
import type { RunnerRecord } from "../ledger/runner-record.ts";
import type { UnseenRunner } from "../ledger/unseen-table.ts";
import type { Fact } from "../store/facts.ts";
import { judge, type ClusterRunner, type ClusterView, type GithubWord, type Policy, type Verdict } from "./judge.ts";
import { learnFromGithub } from "./learn-from-github.ts";

export type ErrorKind = "cluster" | "github" | "agent";

export interface Case {
  name: string;
  /** The open ledger row the facts give this runner, if any. */
  record?: RunnerRecord;
  /** A busy runner nobody told us about, as the ledger remembers it. */
  unseen?: UnseenRunner;
  cluster: ClusterView;
  verdict: Verdict;
  errorKind?: ErrorKind;
  /** GitHub's REST API was asked about this runner's job now. */
  asked?: boolean;
  /** The runner was deleted now. */
  reaped?: boolean;
  /** Condemned, but kept because the deletion cap was reached. */
  heldBack?: boolean;
  /** Not asked about because the minute's GitHub budget was spent or GitHub asked us to wait: due again in a minute. */
  deferred?: boolean;
}

export interface ActDeps {
  cluster: Pick<Cluster, "deleteRunner" | "errorKind">;
  github: Github | Error;
  policy: Policy;
  now: number;
  dryRun: boolean;
  paused: boolean;
  maxDeletions: number;
  /** Deletions still allowed in this minute's window. */
  deletionsLeft: number;
  /** Records facts learned from GitHub and answers the runner's record. */
  learn: (facts: Fact[], runner?: ClusterRunner) => RunnerRecord | undefined;
}

/** Judges every case (asking GitHub where the judge needs it) and deletes the condemned. Answers how many were deleted. */
export async function judgeAndAct(cases: Case[], deps: ActDeps): Promise<number> {
  await askGithub(cases, deps);
  return reap(cases, deps);
}

const withoutAsk = (reason: string): string => reason.replace(/: asking GitHub$/, "");

async function askGithub(cases: Case[], deps: ActDeps): Promise<void> {
  const { github } = deps;
  // Oldest first; repositories whose installation could not be found go last.
  const failedRepo = (c: Case): number => {
    const repo = c.record?.repo ?? (c.cluster.kind === "found" ? c.cluster.runner.jobRepositoryName : undefined);
    return repo && !(github instanceof Error) && github.cache.memory.installationFailedUntil(repo) > Date.now() ? 1 : 0;
  };
  const asks = cases.filter((c) => c.verdict.askGithub).sort((a, b) => failedRepo(a) - failedRepo(b) || ageKey(a).localeCompare(ageKey(b)));
  if (github instanceof Error) {
    for (const c of asks) Object.assign(c, { verdict: { verdict: "keep", reason: `cannot ask GitHub: ${github.message}`, error: true }, errorKind: "github" });
    return;
  }
  let stopped: string | undefined;
  for (const c of asks) {
    if (stopped) {
      c.verdict = { verdict: "keep", reason: `${withoutAsk(c.verdict.reason)}: not asked now (${stopped})` };
      c.deferred = true;
      continue;
    }
    try {
      if (c.record) await askAboutJob(c, c.record, github, deps);
      else if (c.cluster.kind === "found") await learnAboutRunner(c, c.cluster.runner, github, deps);
    } catch (e) {
      if (e instanceof GithubBudgetExhausted || e instanceof GithubRateLimited) {
        stopped = e.message;
        c.verdict = { verdict: "keep", reason: `${withoutAsk(c.verdict.reason)}: not asked now (${stopped})` };
        c.deferred = true;
        continue;
      }
      // A recheck is once per interval even when it fails: retried every minute, a job GitHub cannot
      // read (a deleted run answers 404) would be asked first, oldest first, by every sweep until the bound.
      if (c.record && c.verdict.recheck) c.asked = true;
      c.verdict = { verdict: "keep", reason: `GitHub could not be read, kept: ${(e as Error).message}`, error: true };
      c.errorKind = "github";
    }
  }
}

/** A tracked job past the bound or due for a recheck: GitHub's word on it, recorded when it completed. */
async function askAboutJob(c: Case, record: RunnerRecord, github: Github, deps: ActDeps): Promise<void> {
  // The installation the latest delivery named wins over the row's own (the App may have been installed again).
  const installation = await github.installationFor(record.repo, record.installationId);
  const job = await github.job(record.repo, record.jobId, installation);
  c.asked = true;
  if (job.status === "completed" && job.completedAt) {
    // A completion GitHub reports counts like the webhook's would.
    const fact: Fact = {
      type: "job-completed", runner: record.runner, repo: record.repo, runId: record.runId, runAttempt: record.runAttempt, jobId: record.jobId,
      startedAt: record.startedAt, completedAt: job.completedAt, conclusion: job.conclusion ?? "completed", installationId: installation, source: "rest",
    };
    c.record = deps.learn([fact]) ?? record;
  }
  const word: GithubWord = { kind: "job", status: job.status, conclusion: job.conclusion, completedAt: job.completedAt };
  c.verdict = judge({ tracked: { ...c.record!, checkedAt: deps.now }, cluster: c.cluster, github: word, now: deps.now, policy: deps.policy });
}

/** A busy runner no webhook told us about: what GitHub says of its run becomes facts, then it is judged like any other. */
async function learnAboutRunner(c: Case, runner: ClusterRunner, github: Github, deps: ActDeps): Promise<void> {
  const learned = await learnFromGithub(github, runner);
  c.asked = true;
  if (learned.kind === "unknown") {
    c.verdict = { verdict: "keep", reason: learned.why };
    return;
  }
  const record = deps.learn(learned.facts, runner);
  if (!record) {
    c.verdict = { verdict: "keep", reason: `what GitHub said of runner ${runner.name} could not be recorded`, error: true };
    return;
  }
  c.record = record;
  c.verdict = judge({ tracked: record, cluster: c.cluster, now: deps.now, policy: deps.policy });
  // Learned from GitHub just now: an over-the-bound job was confirmed running by this very read.
  if (c.verdict.askGithub && learned.job) {
    const word: GithubWord = { kind: "job", status: learned.job.status, conclusion: learned.job.conclusion, completedAt: learned.job.completedAt };
    c.verdict = judge({ tracked: record, cluster: c.cluster, github: word, now: deps.now, policy: deps.policy });
  }
}

// Oldest first: a job's start, or a runner's creation when no facts exist.
function ageKey(c: Case): string {
  return c.record?.startedAt ?? (c.cluster.kind === "found" ? (c.cluster.runner.createdAt ?? "") : "");
}

async function reap(cases: Case[], deps: ActDeps): Promise<number> {
  let deleted = 0;
  let left = deps.deletionsLeft;
  // Two open jobs can name one object (a job learned from GitHub, then its webhook): one delete serves both.
  const deletedUids = new Set<string>();
  for (const c of cases) {
    if (c.verdict.verdict !== "delete" || c.cluster.kind !== "found") continue; // the judge never condemns what it cannot see
    const runner = c.cluster.runner;
    if (deletedUids.has(runner.uid)) {
      c.reaped = true;
      continue;
    }
    if (deps.dryRun) {
      c.verdict = { verdict: "keep", reason: `dry run: would delete: ${c.verdict.reason}` };
      continue;
    }
    if (deps.paused) {
      c.verdict = { verdict: "keep", reason: `paused: would delete: ${c.verdict.reason}` };
      continue;
    }
    if (left <= 0) {
      c.verdict = { verdict: "keep", reason: `deletion cap of ${deps.maxDeletions} a minute reached, held back: ${c.verdict.reason}` };
      c.heldBack = true;
      continue;
    }
    left--;
    const outcome = await deps.cluster.deleteRunner(runner, { runId: c.record?.runId ?? runner.workflowRunId, reason: c.verdict.reason });
    if (outcome.kind === "deleted") {
      deleted++;
      c.reaped = true;
      deletedUids.add(runner.uid);
    } else if (outcome.kind === "gone") {
      c.verdict = { verdict: "gone", reason: `runner ${c.name} was already gone from ${runner.namespace} (404)` };
    } else {
      c.verdict = { verdict: "keep", reason: `delete failed, retried later: ${outcome.why}`, error: true };
      c.errorKind = deps.cluster.errorKind ?? "cluster";
    }
  }
  return deleted;
}
