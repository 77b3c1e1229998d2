// What the API server's answer to a finish patch means in direct mode (the
// agent reads its own answers in src/agent/finish-orders.ts).
import type { FinishOutcome } from "./finish-patch.ts";
import { describe, isNotFound, statusOf } from "./runner-answers.ts";

/** What a failed finish means: never retried at once (the caller looks again a REAPER_STUCK_SECONDS later). */
export function finishFailure(e: unknown): FinishOutcome {
  const status = statusOf(e);
  if (isNotFound(e)) return { kind: "gone" };
  if (status === 403) return { kind: "refused", why: describe(e) };
  if (status === 409 || status === 422) return { kind: "conflict", why: describe(e) };
  return { kind: "failed", status, why: describe(e) };
}
