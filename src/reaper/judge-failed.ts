// The judge's row 15 (judge.ts, README's decision table): a runner ARC marked
// Failed. Kept and shown (state failed, ARC's reason and message) unless
// REAPER_FAILED_SECONDS is set and it failed at least that long ago; then
// deleted once. Never one busy on a run (its job's rules judge it), one being
// deleted, or one we already deleted. A replacement (created after we deleted
// the one before) also waits REAPER_FAILED_SECONDS from its creation, so a scale
// set whose replacements keep failing is churned at most once per that time per slot.
// Pure: no I/O, no clock.
import type { FailedCode } from "../model/failed-codes.ts";
import type { FailedRunner } from "../model/failed.ts";
import type { ClusterRunner } from "../model/runner.ts";

export type FailedVerdict = { verdict: "keep"; code: FailedCode; reason: string; dueAt?: number } | { verdict: "delete"; code: "FailedLong"; reason: string };

export interface FailedInput {
  row: FailedRunner;
  runner: ClusterRunner;
  now: number;
  /** REAPER_FAILED_SECONDS; undefined: never delete a Failed runner. */
  failedSeconds: number | undefined;
  /** Failed runners of its scale set we deleted in the last REAPER_FAILED_SECONDS (its replacements failing again). */
  recentlyDeleted: number;
}

const secs = (ms: number): number => Math.max(0, Math.floor(ms / 1000));

/** "ARC marked it Failed 620s ago (PodCreateFailed: admission webhook denied ...)": what ARC said, as of `at`. */
export function failedSince(row: FailedRunner, at: number): string {
  const why = [row.arcReason, row.arcMessage].filter((s): s is string => s !== undefined).join(": ");
  return `ARC marked it Failed ${secs(at - row.failedAt)}s ago${why ? ` (${why})` : ""}`;
}

function failedStory(row: FailedRunner, now: number): string {
  return `${failedSince(row, now)}; it holds a slot of scale set ${row.scaleSet ?? "(unlabelled)"}`;
}

export function judgeFailed({ row, runner, now, failedSeconds, recentlyDeleted }: FailedInput): FailedVerdict {
  const story = failedStory(row, now);
  if (runner.workflowRunId !== undefined) {
    return { verdict: "keep", code: "CarriesRun", reason: `${story}; it carries run ${runner.workflowRunId}, so its job's rules judge it, never this one` };
  }
  if (row.deletedAt !== undefined) {
    return { verdict: "keep", code: "AlreadyDeleted", reason: `${story}; deleted ${secs(now - row.deletedAt)}s ago, ARC still holds it: never deleted again` };
  }
  if (runner.deletionTimestamp) return { verdict: "keep", code: "BeingDeleted", reason: `${story}; already being deleted since ${runner.deletionTimestamp}` };
  if (failedSeconds === undefined) return { verdict: "keep", code: "NeverDeleted", reason: `${story}; REAPER_FAILED_SECONDS is unset: never deleted` };
  const churn =
    recentlyDeleted > 0
      ? `; replacements keep failing: ${recentlyDeleted} of scale set ${row.scaleSet ?? "(unlabelled)"} deleted in the last ${failedSeconds}s`
      : "";
  const due = Math.max(row.failedAt, row.createdAt ?? row.failedAt) + failedSeconds * 1000;
  if (now < due)
    return {
      verdict: "keep",
      code: "NotDue",
      reason: `${story}; due for deletion at ${new Date(due).toISOString()} (REAPER_FAILED_SECONDS=${failedSeconds})${churn}`,
      dueAt: due,
    };
  return {
    verdict: "delete",
    code: "FailedLong",
    reason: `${story}; failed at least REAPER_FAILED_SECONDS=${failedSeconds} ago: deleted so ARC can make a new one${churn}`,
  };
}
