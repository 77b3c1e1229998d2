// Capped, jittered exponential back-off: base, 2×base, 4×base … up to cap, each
// delay drawn from [half, whole] so that many agents do not retry in step.

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: 30_000 };

export class Backoff {
  private attempt = 0;
  private readonly policy: BackoffPolicy;
  private readonly random: () => number;

  constructor(policy: BackoffPolicy, random: () => number = Math.random) {
    this.policy = policy;
    this.random = random;
  }

  /** The wait before the next try; each call doubles the ceiling, up to the cap. */
  next(): number {
    const ceiling = Math.min(this.policy.capMs, this.policy.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(ceiling / 2 + (ceiling / 2) * this.random());
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** A wait that `signal` cuts short. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
