// What a listing of a repository's runs in progress says of a tracked job
// (the long-jobs day). Pure. A run listed in progress at this very
// attempt answers a recheck "still running" for every open job of it: the
// judge keeps them and their next recheck moves. A run not listed (it ended,
// waits, is a later attempt, or lies past GitHub's 1,000 runs of a filtered
// search) proves nothing either way: its jobs are read, as before. A listing
// never condemns a runner.
import type { Policy } from "../model/policy.ts";
import type { RunnerRecord } from "../model/runner.ts";
import type { GithubWord } from "../model/verdict.ts";
import { nextRecheck } from "./judge.ts";

/** Run id → its latest attempt, of the runs a listing showed in progress. */
export type RunningRuns = ReadonlyMap<number, number>;

/** The word a listing gives on one tracked job, or undefined when the job must be read on its own. */
export function listedWord(record: Pick<RunnerRecord, "runId" | "runAttempt">, running: RunningRuns): GithubWord | undefined {
  const attempt = running.get(record.runId);
  // A later attempt in progress means this one ended, but says not when: the job's own read tells.
  if (attempt === undefined || record.runAttempt < 1 || attempt !== record.runAttempt) return undefined;
  return { kind: "run-running", runId: record.runId, runAttempt: attempt };
}

/**
 * The open rows of a listed run that the listing counts as rechecked now: running jobs of that attempt
 * with no completion heard, not asked in this pass (their own answer was stored). With `leaveDue`
 * (REAPER_RECHECK_LISTED_RUNS=read), a row already due for its recheck is left due: its run's jobs
 * are read for it (beyond an alarm's batch: by the next pass), never put off by the listing.
 */
export function rowsStillRunning(
  rows: readonly RunnerRecord[],
  running: RunningRuns,
  asked: ReadonlySet<number>,
  leaveDue?: { policy: Policy; now: number },
): RunnerRecord[] {
  return rows.filter(
    (r) =>
      !r.jobCompleted &&
      !r.runCompleted &&
      r.startedAt !== undefined &&
      (r.id === undefined || !asked.has(r.id)) &&
      listedWord(r, running) !== undefined &&
      !(leaveDue && (nextRecheck(r, leaveDue.policy) ?? Infinity) <= leaveDue.now),
  );
}
