// A sliding window: the deletion cap and the GitHub budget count what happened
// in the last WINDOW_MS, so no 60 s span ever exceeds them (a calendar minute
// let a burst straddle its boundary). The ledger stores the times; this counts.
import { WINDOW_MS } from "./policy.ts";

export class SlidingWindow {
  readonly limit: number;
  private readonly times: number[];

  constructor(times: readonly number[], limit: number, now: number) {
    this.limit = limit;
    this.times = times.filter((t) => t > now - WINDOW_MS).sort((a, b) => a - b);
  }

  /** How many more fit in the window at `now`. */
  left(now: number): number {
    return Math.max(0, this.limit - this.times.filter((t) => t > now - WINDOW_MS).length);
  }

  take(now: number, n = 1): void {
    for (let i = 0; i < n; i++) this.times.push(now);
  }

  /** When one more fits again: now if it fits now, else when the oldest that counts leaves the window. */
  freeAt(now: number): number {
    // Stryker disable next-line EqualityOperator: a time exactly WINDOW_MS old, if counted, is picked only when it alone makes the limit, and then it answers t + WINDOW_MS = now, as without it (equivalent).
    const live = this.times.filter((t) => t > now - WINDOW_MS);
    if (live.length < this.limit) return now;
    return live[live.length - this.limit]! + WINDOW_MS;
  }

  /** What the ledger keeps: the times still inside the window. */
  toJSON(): number[] {
    return [...this.times];
  }
}
