// How long after its grace ended (or, over the bound, after the bound) a runner
// was reaped: the admin page's "reaped N s after the grace" and the day's p50
// and p99 both come from here. Pure.
import type { Policy } from "../model/policy.ts";

export interface Closing {
  cause: string | null | undefined;
  /** The earliest completion GitHub told of (the job's or its run's). */
  completedAt: string | null | undefined;
  startedAt: string | null | undefined;
  closedAt: number;
}

/** Milliseconds from the moment the runner could be deleted to its deletion (at least 0); undefined when that moment is unknown. */
export function delayAfterGraceMs(c: Closing, policy: Pick<Policy, "graceSeconds" | "maxJobSeconds">): number | undefined {
  const from =
    c.cause === "over-bound"
      ? c.startedAt && Date.parse(c.startedAt) + policy.maxJobSeconds * 1000
      : c.completedAt && Date.parse(c.completedAt) + policy.graceSeconds * 1000;
  if (typeof from !== "number" || Number.isNaN(from)) return undefined;
  return Math.max(0, c.closedAt - from);
}
