// What the judge answers for one runner, and what reconcile adds to it: what
// holds a decision back.

export type VerdictKind = "delete" | "keep" | "wait" | "gone";

export type DeleteCause = "job-completed" | "run-completed" | "over-bound";

export interface Verdict {
  verdict: VerdictKind;
  reason: string;
  /** When a wait or a keep within the bound turns into a decision (ms since the epoch). */
  dueAt?: number;
  /** The judge needs GitHub's word on this runner before it can decide. */
  askGithub?: boolean;
  /** The ask is a periodic re-read of a running job (row 10), not a bound check. */
  recheck?: boolean;
  /** The verdict is a keep because something could not be read. */
  error?: boolean;
  /** For a delete: which evidence condemned the runner (for metrics). */
  cause?: DeleteCause;
}

/**
 * What GitHub's REST API said about the runner's job, when it was asked: the job itself; or that its
 * run (this attempt) is among the repository's in-progress runs (src/reaper/run-listing.ts), which
 * answers a recheck "still running" and never condemns; or an error.
 */
export type GithubWord =
  | { kind: "job"; status: string; conclusion: string | null; completedAt: string | null }
  | { kind: "run-running"; runId: number; runAttempt: number }
  | { kind: "error"; why: string };

/**
 * What keeps a decision from being carried out, stored with the row so that the
 * thing that lifts it (resume, the agent's return, a freed window) finds it:
 * paused (POST /admin/pause), agent (its view cannot be used), cap (the
 * deletions of the last 60 s), budget (GitHub calls of the last 60 s, or a back-off).
 */
const HOLDS = ["paused", "agent", "cap", "budget"] as const;
export type HeldFor = (typeof HOLDS)[number];

/** The verdict and reason with their ages taken out: it changes only when the decision does. */
export function verdictKey(verdict: Pick<Verdict, "verdict" | "reason">): string {
  return `${verdict.verdict}: ${verdict.reason.replace(/\b\d+s\b/g, "Ns")}`;
}
