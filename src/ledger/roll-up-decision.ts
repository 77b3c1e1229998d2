// What one applied verdict adds to the day at a glance (hourly-rollup.ts): a
// close (reaped or gone) always; a keep only when it is new and the runner's
// job is over (it could have been deleted, and was not: dry run, pause, the
// cap, an error, ARC already deleting it, a runner that moved on).
import type { Policy } from "../model/policy.ts";
import type { Verdict, VerdictCode } from "../model/verdict.ts";
import { delayAfterGraceMs } from "./close-delay.ts";
import { recordOutcome } from "./hourly-rollup.ts";
import { isOpen, type RunnerRecord } from "../model/runner.ts";
import type { Sql } from "./sql.ts";

export interface Decision {
  /** The row as it was judged, and as written. */
  before: RunnerRecord;
  after: RunnerRecord;
  verdict: Verdict;
  /** The verdict is a new decision for the row (src/reaper/transition.ts), not the same one again. */
  newDecision: boolean;
  at: number;
  policy: Policy;
}

export function rollUpDecision(sql: Sql, d: Decision): void {
  const { before, after } = d;
  if (isOpen(before.state) && (after.state === "reaped" || after.state === "gone")) {
    const completedAt = [before.jobCompleted?.at, before.runCompleted?.at].filter((t): t is string => t !== undefined).sort()[0];
    const delay =
      after.state === "reaped" ? delayAfterGraceMs({ cause: after.cause, completedAt, startedAt: before.startedAt, closedAt: d.at }, d.policy) : undefined;
    recordOutcome(sql, { outcome: after.state, at: d.at, delayAfterGraceMs: delay });
    return;
  }
  const jobOver = before.jobCompleted !== undefined || before.runCompleted !== undefined;
  if (isOpen(after.state) && d.verdict.verdict === "keep" && jobOver && d.newDecision) {
    recordOutcome(sql, { outcome: "kept", at: d.at, why: keptWhy(d.verdict) });
  }
}

/** Why a finished runner was kept, in a fixed handful of words, from its code. */
const KEPT_WHY: Partial<Record<VerdictCode, string>> = {
  DryRun: "dry run",
  Paused: "paused",
  Cap: "deletion cap",
  BeingDeleted: "being deleted",
  MovedOn: "moved on",
};

function keptWhy(v: Verdict): string {
  return KEPT_WHY[v.code] ?? (v.error ? "error" : "other");
}
