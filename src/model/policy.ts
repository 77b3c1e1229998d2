// The policy the judge and reconcile apply, and the fixed times they use.

export interface Policy {
  graceSeconds: number;
  maxJobSeconds: number;
  /** Re-read a running job from GitHub this often; no rechecks when absent. */
  recheckSeconds?: number;
}

/** Clock skew allowed between GitHub's times and the API server's creationTimestamp. */
export const CLOCK_SKEW_MS = 60_000;

// A runner's in_progress webhook arrives seconds after ARC marks it busy: give it
// this long before spending GitHub calls on a runner no webhook told us about.
export const SETTLE_MS = 3 * 60_000;

/** A busy runner GitHub could not place is asked about again after this long. */
export const UNSEEN_RETRY_MS = 10 * 60_000;

/** The deletion cap and the GitHub budget count what happened in the last this-many ms. */
export const WINDOW_MS = 60_000;

/** A runner absent from a view not newer than its facts is looked at again this soon (the alarm then asks the agent to read it). */
export const STALE_RECHECK_MS = 30_000;
