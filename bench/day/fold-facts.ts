// The bench's model of the day folds a runner's facts with the ledger's own code
// (src/model/merge-fact.ts), from a list rather than from rows.
import { mergeJobFact, mergeRunCompletion } from "../../src/model/merge-fact.ts";
import type { Fact, RunCompleted } from "../../src/model/facts.ts";
import type { RunnerRecord, TrackedRunner } from "../../src/model/runner.ts";

export type { TrackedRunner };

/** Written when a runner's story ends (the model's own fact). */
export interface RunnerClosed {
  type: "runner-closed";
  runner: string;
  jobId: number;
  outcome: "reaped" | "gone";
  at: string;
  reason: string;
}

const runKey = (repo: string, runId: number): string => `${repo}#${runId}`;

/**
 * Folds facts into one record per runner with the ledger's own folding (src/model/merge-fact.ts): a job's
 * facts into its record, each run completion into the records of its jobs. The result depends only on the
 * set of facts, never on the order they arrived in, so duplicated and reordered deliveries give the same state.
 */
export function trackedRunners(facts: readonly (Fact | RunnerClosed)[]): TrackedRunner[] {
  const jobs = new Map<string, RunnerRecord>();
  const closed = new Map<string, RunnerClosed>();
  const runs: RunCompleted[] = [];
  for (const fact of facts) {
    if (fact.type === "run-completed") runs.push(fact);
    else if (fact.type === "runner-closed") closed.set(`${fact.runner}#${fact.jobId}`, fact);
    else jobs.set(`${fact.runner}#${fact.jobId}`, mergeJobFact(jobs.get(`${fact.runner}#${fact.jobId}`), fact, undefined, ""));
  }
  const byRun = new Map<string, RunCompleted[]>();
  for (const run of runs) byRun.set(runKey(run.repo, run.runId), [...(byRun.get(runKey(run.repo, run.runId)) ?? []), run]);

  const byRunner = new Map<string, TrackedRunner>();
  for (const [key, folded] of jobs) {
    let record = folded;
    for (const run of byRun.get(runKey(record.repo, record.runId)) ?? []) record = mergeRunCompletion(record, run, "");
    const tracked: TrackedRunner = {
      runner: record.runner,
      repo: record.repo,
      runId: record.runId,
      runAttempt: record.runAttempt,
      jobId: record.jobId,
      startedAt: record.startedAt,
      installationId: record.installationId,
    };
    if (record.jobCompleted) tracked.jobCompleted = record.jobCompleted;
    if (record.runCompleted) tracked.runCompleted = record.runCompleted;
    const end = closed.get(key);
    if (end) tracked.closed = { outcome: end.outcome, at: end.at, reason: end.reason };

    // An ephemeral runner takes one job; should a name ever be reused, the latest job speaks for it.
    const previous = byRunner.get(tracked.runner);
    if (!previous || isLater(tracked, previous)) byRunner.set(tracked.runner, tracked);
  }
  return [...byRunner.values()].sort((a, b) => a.runner.localeCompare(b.runner));
}

function isLater(a: TrackedRunner, b: TrackedRunner): boolean {
  const as = a.startedAt ?? "";
  const bs = b.startedAt ?? "";
  return as !== bs ? as > bs : a.jobId > b.jobId;
}
