// Asking GitHub on the judge's behalf: a tracked job past the bound or due for
// a recheck, or a busy runner no webhook told us about. What GitHub says is
// recorded as facts (through `learn`), then judged like a webhook's word.
import type { Github, GithubJob } from "../github/github-client.ts";
import type { Fact } from "../model/facts.ts";
import type { Policy } from "../model/policy.ts";
import type { ClusterRunner, RunnerRecord } from "../model/runner.ts";
import type { ClusterView } from "../model/view.ts";
import type { GithubWord, Verdict } from "../model/verdict.ts";
import { judge } from "./judge.ts";
import { jobNamingRunner } from "./job-names-runner.ts";
import { learnFromGithub } from "./learn-from-github.ts";

export interface AskDeps {
  github: Github;
  policy: Policy;
  now: number;
  /** Records facts learned from GitHub and answers the runner's record. */
  learn: (facts: Fact[], runner?: ClusterRunner) => RunnerRecord | undefined;
  /** A recheck's answer from the repository's runs in progress (running-runs.ts); undefined: read the job. */
  listed?: (record: RunnerRecord, installationId: number) => Promise<GithubWord | undefined>;
  /**
   * A listed run's tracked job as the first page of its attempt's jobs shows it (recheck-runs.ts); undefined (not on
   * that page): the listing's word stands. Unset (REAPER_RECHECK_LISTED_RUNS=listing): the listing's word stands.
   */
  attemptJob?: (record: RunnerRecord, installationId: number) => Promise<GithubJob | undefined>;
}

export interface Asked {
  verdict: Verdict;
  record?: RunnerRecord;
}

/** A tracked job past the bound or due for a recheck: GitHub's word on it, recorded when it completed. */
export async function askAboutJob(record: RunnerRecord, view: ClusterView, deps: AskDeps, recheck = false): Promise<Asked> {
  // The installation the latest delivery named wins over the row's own (the App may have been installed again).
  const installation = await deps.github.installationFor(record.repo, record.installationId);
  // A recheck within the bound: its run listed in progress answers "still running" (never a delete).
  const listed = recheck ? await deps.listed?.(record, installation) : undefined;
  // Still in progress, yet this job may have ended inside it (its completion lost): the attempt's jobs say.
  const shown = listed && (await deps.attemptJob?.(record, installation));
  if (listed && !shown)
    return { record, verdict: judge({ tracked: { ...record, checkedAt: deps.now }, cluster: view, github: listed, now: deps.now, policy: deps.policy }) };
  // Only a job that names this row's runner speaks for it (else JobNamesAnotherRunner: kept, a GitHub error).
  const job = jobNamingRunner(shown || (await deps.github.job(record.repo, record.jobId, installation)), { name: record.runner, runnerId: record.runnerId });
  let current = record;
  if (job.status === "completed" && job.completedAt) {
    // A completion GitHub reports counts like the webhook's would.
    const fact: Fact = {
      type: "job-completed",
      runner: record.runner,
      repo: record.repo,
      runId: record.runId,
      runAttempt: record.runAttempt,
      jobId: record.jobId,
      startedAt: record.startedAt,
      completedAt: job.completedAt,
      conclusion: job.conclusion ?? "completed",
      installationId: installation,
      source: "rest",
      names: job.names,
    };
    current = deps.learn([fact]) ?? record;
  }
  const word: GithubWord = { kind: "job", status: job.status, conclusion: job.conclusion, completedAt: job.completedAt };
  return { record: current, verdict: judge({ tracked: { ...current, checkedAt: deps.now }, cluster: view, github: word, now: deps.now, policy: deps.policy }) };
}

/** A busy runner no webhook told us about: what GitHub says of its run becomes facts, then it is judged like any other. */
export async function askAboutRunner(runner: ClusterRunner, view: ClusterView, deps: AskDeps): Promise<Asked> {
  const learned = await learnFromGithub(deps.github, runner);
  if (learned.kind === "unknown") return { verdict: { code: "NotPlaced", verdict: "keep", reason: learned.why } };
  const record = deps.learn(learned.facts, runner);
  if (!record)
    return { verdict: { code: "NotRecorded", verdict: "keep", reason: `what GitHub said of runner ${runner.name} could not be recorded`, error: true } };
  let verdict = judge({ tracked: record, cluster: view, now: deps.now, policy: deps.policy });
  // Learned from GitHub just now: an over-the-bound job was confirmed running by this very read.
  if (verdict.askGithub && learned.job) {
    const word: GithubWord = { kind: "job", status: learned.job.status, conclusion: learned.job.conclusion, completedAt: learned.job.completedAt };
    verdict = judge({ tracked: record, cluster: view, github: word, now: deps.now, policy: deps.policy });
  }
  return { record, verdict };
}
