// The admin listing: one row per tracked runner, derived from the facts alone
// (one KV list pass), with the judge's words for why it is in that state.
import { finishedEvidence, judgeByFacts, type Policy } from "../reaper/judge.ts";
import { trackedRunners, type TrackedRunner } from "../reaper/tracked-runners.ts";
import type { Fact } from "../store/facts.ts";

export const RUNNER_STATES = ["running", "finished", "reaped", "gone"] as const;
export type RunnerState = (typeof RUNNER_STATES)[number];

export interface RunnerRow {
  name: string;
  state: RunnerState;
  repository: string;
  runId: number;
  runAttempt: number;
  jobId: number;
  startedAt: string | null;
  completedAt: string | null;
  conclusion: string | null;
  dueAt: string | null;
  reason: string;
}

/** Every tracked runner's row, in runner-name order: what the listing, the page and /metrics show. */
export function runnerRows(facts: readonly Fact[], now: number, policy: Policy & { dryRun: boolean }): RunnerRow[] {
  return trackedRunners(facts).map((t) => runnerRow(t, now, policy, policy.dryRun));
}

function runnerRow(t: TrackedRunner, now: number, policy: Policy, dryRun: boolean): RunnerRow {
  const finished = finishedEvidence(t);
  const row: RunnerRow = {
    name: t.runner,
    state: "running",
    repository: t.repo,
    runId: t.runId,
    runAttempt: t.runAttempt,
    jobId: t.jobId,
    startedAt: t.startedAt ?? null,
    completedAt: finished?.at ?? null,
    conclusion: finished?.conclusion ?? null,
    dueAt: null,
    reason: "",
  };
  if (t.closed) {
    return { ...row, state: t.closed.outcome, reason: t.closed.reason };
  }
  const verdict = judgeByFacts(t, undefined, now, policy);
  row.dueAt = verdict.dueAt ?? null;
  if (!finished) return { ...row, reason: verdict.reason };
  if (verdict.verdict === "wait") return { ...row, state: "finished", reason: `waiting for the grace: ${verdict.reason}` };
  const reason = dryRun ? `dry run, kept: would delete: ${verdict.reason}` : `due, waiting for the next sweep: ${verdict.reason}`;
  return { ...row, state: "finished", dueAt: finished.at ? dueAfterGrace(finished.at, policy) : null, reason };
}

const dueAfterGrace = (completedAt: string, policy: Policy): string =>
  new Date(Date.parse(completedAt) + policy.graceSeconds * 1000).toISOString();

function isRunnerState(value: string): value is RunnerState {
  return (RUNNER_STATES as readonly string[]).includes(value);
}

/** The `?state=` filter: absent, a known state, or an error that names the allowed ones. */
export function stateFilter(wanted: string | undefined): { state?: RunnerState; error?: string } {
  if (wanted === undefined) return {};
  if (isRunnerState(wanted)) return { state: wanted };
  return { error: `state must be one of ${RUNNER_STATES.join(", ")}, got ${JSON.stringify(wanted)}` };
}
