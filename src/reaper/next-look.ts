// When is this runner looked at again? The one answer, for every case: each
// branch of reconcile (the judge's own time, a stale view, the wait for a
// webhook, a failed ask's back-off, the budget, the cap, a hold, a close), the
// facts a webhook or a REST read brought (src/reaper/schedule-facts.ts), a
// recheck answered by the repository's runs in progress, a lifted hold, a Failed
// runner's failed DELETE and a deletion we watch.
// Like a Kubernetes controller's Result{RequeueAfter}, it answers a NextLook
// (src/model/next-look.ts); only the ledger's tables turn it into due_at. Pure.
import { backoffMs, dueAtOf, lookAt, NEVER, nextLookOf, WITH_SWEEP, type NextLook } from "../model/next-look.ts";
import { SETTLE_MS, STALE_RECHECK_MS, type Policy } from "../model/policy.ts";
import type { RunnerRecord, TrackedRunner } from "../model/runner.ts";
import type { HeldFor, Verdict } from "../model/verdict.ts";
import { finishedEvidence, nextRecheck } from "./judge.ts";

/** A held look (the cap, the budget) is never sooner than this after the pass's now. */
const HELD_AT_LEAST_MS = 1000;

export type LookCase =
  /** Closed (reaped or gone): never looked at again. */
  | { kind: "closed" }
  /** The judge's own time (a grace end, the bound, the next recheck), or with the sweep when it gave none. */
  | { kind: "judged"; verdict: Pick<Verdict, "dueAt"> }
  /** A view older than the facts: looked at again soon, by a read by name. */
  | { kind: "stale-view"; now: number }
  /** A busy runner nobody told us about: the wait for its webhook ends 3 minutes after it was first seen. */
  | { kind: "awaiting-webhook"; firstSeen: number }
  /** Its back-off is not over: the stored look stands. */
  | { kind: "backing-off"; stored: NextLook }
  /**
   * This look's ask failed, the `failures`-th in a row: asked again after the back-off (no sooner than `at`, the
   * step's own time, when it has one). Held for the agent: at `at`, else with the sweep (its return lifts the hold).
   */
  | { kind: "failed"; failures: number; now: number; at?: number | undefined; heldFor?: HeldFor | undefined }
  /** GitHub's budget (or a rate limit) left the ask: when GitHub may be asked again. */
  | { kind: "budget"; until: number; now: number }
  /** The deletion cap of the last 60 s is reached: when the window frees a delete. */
  | { kind: "cap"; freeAt: number; now: number }
  /** Would delete, but a dry run or the pause holds it: with the sweep (resume lifts the pause). */
  | { kind: "dry-run" }
  | { kind: "paused" }
  /** Facts just recorded (a webhook, a REST read), before any look at the cluster. */
  | { kind: "facts"; record: TrackedRunner; policy: Policy }
  /** A running job the repository's runs in progress answered: re-read now; its time moves only where the facts set it. */
  | { kind: "rechecked"; before: RunnerRecord; after: RunnerRecord; policy: Policy }
  /** A hold lifted (resume; an agent's return): due now. */
  | { kind: "released"; now: number }
  /** A Failed runner's DELETE that failed, the `failures`-th in a row: sent again after the back-off. */
  | { kind: "delete-failed"; failures: number; now: number }
  /** A deletion we made, still watched (just sent, stuck, or not told): looked at again when it would count as stuck. */
  | { kind: "deletion-watch"; now: number; stuckSeconds: number };

/** The cases whose answer is always a time of their own. */
type TimedCase = Extract<LookCase, { kind: "stale-view" | "awaiting-webhook" | "budget" | "cap" | "released" | "delete-failed" | "deletion-watch" }>;

export function nextLook(c: TimedCase): { at: number };
export function nextLook(c: LookCase): NextLook;
export function nextLook(c: LookCase): NextLook {
  switch (c.kind) {
    case "closed":
      return NEVER;
    case "judged":
      return c.verdict.dueAt === undefined ? WITH_SWEEP : lookAt(c.verdict.dueAt);
    case "stale-view":
      return lookAt(c.now + STALE_RECHECK_MS);
    case "awaiting-webhook":
      return lookAt(c.firstSeen + SETTLE_MS);
    case "backing-off":
      return c.stored;
    case "failed":
      if (c.heldFor === "agent") return c.at === undefined ? WITH_SWEEP : lookAt(c.at);
      return lookAt(Math.max(c.at ?? 0, c.now + backoffMs(c.failures)));
    case "budget":
      return lookAt(Math.max(c.until, c.now + HELD_AT_LEAST_MS));
    case "cap":
      return lookAt(Math.max(c.freeAt, c.now + HELD_AT_LEAST_MS));
    case "dry-run":
    case "paused":
      return WITH_SWEEP;
    case "facts":
      return factsLook(c.record, c.policy);
    case "rechecked": {
      // Moved only when the facts set the stored time (no hold, no earlier look asked for).
      const factsSetIt = c.before.dueAt === dueAtOf(factsLook(c.before, c.policy));
      return factsSetIt ? factsLook(c.after, c.policy) : nextLookOf(c.before.dueAt);
    }
    case "released":
      return lookAt(c.now);
    case "delete-failed":
      return lookAt(c.now + backoffMs(c.failures));
    case "deletion-watch":
      return lookAt(c.now + c.stuckSeconds * 1000);
  }
}

/** The facts alone: the grace end of a completion (possibly past: due at once), else the bound or the next recheck. */
function factsLook(record: TrackedRunner, policy: Policy): NextLook {
  const finished = finishedEvidence(record);
  if (finished) return lookAt(Date.parse(finished.at) + policy.graceSeconds * 1000);
  if (!record.startedAt) return WITH_SWEEP;
  const bound = Date.parse(record.startedAt) + policy.maxJobSeconds * 1000;
  return lookAt(Math.min(bound, nextRecheck(record, policy) ?? Infinity));
}
