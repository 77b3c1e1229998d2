// When a verdict next needs the judge again: the alarm is set to the earliest
// of these over all open runners. Pure.
import { finishedEvidence, nextRecheck, type Policy, type Verdict } from "../reaper/judge.ts";
import type { RunnerRecord } from "./runner-record.ts";

/** A wait or a keep within the bound is due at its time; a delete or an ask is due now; anything else waits for the sweep. */
export function dueOfVerdict(verdict: Verdict, now: number): number | null {
  if (verdict.dueAt) return Date.parse(verdict.dueAt);
  if (verdict.verdict === "delete" || verdict.askGithub) return now;
  return null;
}

/**
 * The due time the facts alone give an open runner, before any cluster view:
 * the grace end of its earliest completion, else the earlier of its bound and
 * its next recheck. It may lie in the past: the alarm then fires at once.
 */
export function dueFromFacts(record: RunnerRecord, policy: Policy): number | null {
  const finished = finishedEvidence(record);
  if (finished) return Date.parse(finished.at) + policy.graceSeconds * 1000;
  if (!record.startedAt) return null;
  const bound = Date.parse(record.startedAt) + policy.maxJobSeconds * 1000;
  return Math.min(bound, nextRecheck(record, policy) ?? Infinity);
}

/** The verdict and reason with their ages taken out: it changes only when the decision does. */
export function verdictKey(verdict: Pick<Verdict, "verdict" | "reason">): string {
  return `${verdict.verdict}: ${verdict.reason.replace(/\b\d+s\b/g, "Ns")}`;
}
