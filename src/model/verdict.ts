// What the judge answers for one runner, and what reconcile adds to it: what
// holds a decision back.

export type VerdictKind = "delete" | "keep" | "wait" | "gone";

export type DeleteCause = "job-completed" | "run-completed" | "over-bound";

/**
 * Why, as a code that code reads (a Kubernetes Status `reason` beside its `message`): every decision about
 * a verdict reads this, never the words of `reason`, which are for people and may change.
 */
export const VERDICT_CODES = [
  // The judge (src/reaper/judge.ts), by the decision table's rows.
  "Gone", // 1: no object is the facts' runner, on fresh evidence
  "Unwatched", // its cluster is no longer watched and nothing was heard of it within the history: closed unjudged, nothing deleted
  "CannotJudge", // 2: a place could not be read, several candidates, a stale view
  "Replaced", // 3, 4: the object of the name is not the one that took the job
  "Idle", // 5
  "BeingDeleted", // 6
  "MovedOn", // 7
  "UnknownBusy", // 8: busy, no facts: ask GitHub
  "InGrace", // 9: completed, within the grace
  "JobCompleted", // 9, 14: delete, the job is over
  "RunCompleted", // 9: delete, its run is over
  "Recheck", // 10: ask GitHub again
  "Running", // 10, 11: within the bound
  "OverBoundAsk", // 12
  "NoStartTime", // the facts lack the job's start
  "GithubError", // 13
  "OverBound", // 14: delete, past the bound
  // Reconcile and the asks (src/reaper/reconcile.ts, ask-github.ts).
  "AwaitingWebhook", // a busy runner nobody told us about, within the wait for its webhook
  "BackingOff", // a failed ask or DELETE, not tried again before its back-off ends
  "NotPlaced", // GitHub could not place a busy runner on a job
  "NotRecorded", // what GitHub said could not be recorded
  "JobNamesAnotherRunner", // GitHub's job names another runner (id, else name) than the row's: kept, a GitHub error
  "Budget", // GitHub's budget or rate limit: asked at a later pass
  "DryRun",
  "Paused",
  "Cap", // the deletion cap of the last 60 s
  "DeleteFailed",
] as const;
export type VerdictCode = (typeof VERDICT_CODES)[number];

export interface Verdict {
  verdict: VerdictKind;
  code: VerdictCode;
  /** For people: what is known and what is done, in words. */
  reason: string;
  /** A verdict that asks GitHub: its reason without the ask, for the words of what came of it. */
  subject?: string;
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
  /** What of its subject makes this a decision of its own among its code's (the run a moved-on runner works on): part of its key. */
  about?: string;
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

/**
 * What decision a verdict is, as a key stored with the row: it changes only when the decision does (a new
 * story entry and decision line), never with the words or the ages of its reason. Its kind and code, and
 * `about` where two verdicts of one code are two decisions (the run a moved-on runner works on).
 */
export function verdictKey(verdict: Pick<Verdict, "verdict" | "code" | "about">): string {
  return verdict.about === undefined ? `${verdict.verdict}/${verdict.code}` : `${verdict.verdict}/${verdict.code}/${verdict.about}`;
}

/**
 * The code a stored key names (verdictKey's second part); undefined for a key stored before keys were
 * codes ("keep: <the reason without its ages>"), which names none. Reads the key, never the reason.
 */
export function codeOfKey(key: string | undefined): VerdictCode | undefined {
  const code = key === undefined ? undefined : /^(?:delete|keep|wait|gone)\/([A-Za-z]+)(?:\/|$)/.exec(key)?.[1];
  return (VERDICT_CODES as readonly string[]).includes(code ?? "") ? (code as VerdictCode) : undefined;
}

/**
 * Whether a verdict is a new decision for a row that stored `stored` (undefined: never judged). Keys stored
 * before keys were codes ("keep: <the reason without its ages>") cannot name the code they were: such a
 * row's first verdict after the upgrade is a new decision only if its kind changed.
 */
export function isNewDecision(stored: string | undefined, verdict: Pick<Verdict, "verdict" | "code" | "about">): boolean {
  if (stored === undefined) return true;
  const legacy = /^(delete|keep|wait|gone): /.exec(stored);
  return legacy ? legacy[1] !== verdict.verdict : stored !== verdictKey(verdict);
}
