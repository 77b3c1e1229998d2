// Reconcile's next look for a row whose facts just arrived (a webhook, a REST
// read), before any look at the cluster, and the words that stand as its reason
// until reconcile judges it. The time is nextLook's (src/reaper/next-look.ts),
// and may lie in the past (a completion that came after its grace): the alarm
// then fires at once. Pure.
import type { NextLook } from "../model/next-look.ts";
import type { Policy } from "../model/policy.ts";
import type { TrackedRunner } from "../model/runner.ts";
import { judgeByFacts } from "./judge.ts";
import { nextLook } from "./next-look.ts";

export interface FactsSchedule {
  next: NextLook;
  reason: string;
}

export function scheduleFromFacts(record: TrackedRunner, now: number, policy: Policy): FactsSchedule {
  const verdict = judgeByFacts(record, undefined, now, policy);
  const reason =
    verdict.verdict === "wait" ? `waiting for the grace: ${verdict.reason}` : verdict.verdict === "delete" ? `due now: ${verdict.reason}` : verdict.reason;
  return { next: nextLook({ kind: "facts", record, policy }), reason };
}
