// Reconcile's next look for a row whose facts just arrived (a webhook, a REST
// read), before any look at the cluster, and the words that stand as its reason
// until reconcile judges it. The time may lie in the past (a completion that
// came after its grace): the alarm then fires at once. Pure.
import { lookAt, WITH_SWEEP, type NextLook } from "../model/next-look.ts";
import type { Policy } from "../model/policy.ts";
import type { TrackedRunner } from "../model/runner.ts";
import { finishedEvidence, judgeByFacts, nextRecheck } from "./judge.ts";

export interface FactsSchedule {
  next: NextLook;
  reason: string;
}

export function scheduleFromFacts(record: TrackedRunner, now: number, policy: Policy): FactsSchedule {
  const verdict = judgeByFacts(record, undefined, now, policy);
  const reason =
    verdict.verdict === "wait" ? `waiting for the grace: ${verdict.reason}` : verdict.verdict === "delete" ? `due now: ${verdict.reason}` : verdict.reason;
  const finished = finishedEvidence(record);
  if (finished) return { next: lookAt(Date.parse(finished.at) + policy.graceSeconds * 1000), reason };
  if (!record.startedAt) return { next: WITH_SWEEP, reason };
  const bound = Date.parse(record.startedAt) + policy.maxJobSeconds * 1000;
  return { next: lookAt(Math.min(bound, nextRecheck(record, policy) ?? Infinity)), reason };
}
