// The bench's model of the day folds a runner's facts the way the ledger does
// (src/ledger/merge-fact.ts), from a list rather than from rows.
import type { Fact, JobCompleted, JobStarted, RunCompleted } from "../../src/model/facts.ts";
import type { TrackedRunner } from "../../src/model/runner.ts";

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
 * Folds facts into one record per runner. The result depends only on the set
 * of facts, never on the order they arrived in, so duplicated and reordered
 * deliveries give the same state.
 */
export function trackedRunners(facts: readonly (Fact | RunnerClosed)[]): TrackedRunner[] {
  const jobs = new Map<string, { started?: JobStarted; completed?: JobCompleted; closed?: RunnerClosed }>();
  const runs = new Map<string, RunCompleted[]>();
  for (const fact of facts) {
    if (fact.type === "run-completed") {
      const key = runKey(fact.repo, fact.runId);
      runs.set(key, [...(runs.get(key) ?? []), fact]);
      continue;
    }
    const key = `${fact.runner}#${fact.jobId}`;
    const entry = jobs.get(key) ?? {};
    if (fact.type === "job-started") entry.started = fact;
    else if (fact.type === "job-completed") entry.completed = fact;
    else entry.closed = fact;
    jobs.set(key, entry);
  }

  const byRunner = new Map<string, TrackedRunner>();
  for (const { started, completed, closed } of jobs.values()) {
    const base = completed ?? started;
    if (!base) continue; // a closed fact whose job facts expired: nothing left to judge
    const tracked: TrackedRunner = {
      runner: base.runner,
      repo: base.repo,
      runId: base.runId,
      runAttempt: base.runAttempt,
      jobId: base.jobId,
      startedAt: started?.startedAt ?? completed?.startedAt,
      installationId: started?.installationId ?? completed?.installationId,
    };
    if (completed) tracked.jobCompleted = { at: completed.completedAt, conclusion: completed.conclusion };
    const run = coveringRunCompletion(runs.get(runKey(base.repo, base.runId)) ?? [], base.runAttempt);
    if (run) tracked.runCompleted = { at: run.updatedAt, conclusion: run.conclusion, attempt: run.runAttempt };
    if (closed) tracked.closed = { outcome: closed.outcome, at: closed.at, reason: closed.reason };

    // An ephemeral runner takes one job; should a name ever be reused, the latest job speaks for it.
    const previous = byRunner.get(tracked.runner);
    if (!previous || isLater(tracked, previous)) byRunner.set(tracked.runner, tracked);
  }
  return [...byRunner.values()].sort((a, b) => a.runner.localeCompare(b.runner));
}

// A re-run (attempt N+1) starts only after attempt N completed, so the
// completion of attempt >= the job's own proves the job is over. A later
// attempt's job is not covered by an earlier attempt's completion.
function coveringRunCompletion(completions: RunCompleted[], attempt: number): RunCompleted | undefined {
  if (attempt < 1) return undefined; // attempt unknown: only the job's own completion counts
  return completions.filter((c) => c.runAttempt >= attempt).sort((a, b) => a.runAttempt - b.runAttempt || a.updatedAt.localeCompare(b.updatedAt))[0];
}

function isLater(a: TrackedRunner, b: TrackedRunner): boolean {
  const as = a.startedAt ?? "";
  const bs = b.startedAt ?? "";
  return as !== bs ? as > bs : a.jobId > b.jobId;
}
