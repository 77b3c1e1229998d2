import type { GithubCalls } from "./hourly-limit.ts";
import type { Stuck } from "./trace.ts";

/** What one reaper model did with the day. */
export interface ReaperOutcome {
  name: string;
  calls: GithubCalls;
  /** One per stuck runner: from its job's completed_at on GitHub to the delete; null when never deleted. */
  delays: { job: number; stuck: Exclude<Stuck, null>; delayMs: number | null }[];
  /** Deleted while GitHub still showed the job running (and not past the bound): must stay 0. */
  wrongDeletions: number;
  /** Busy runners a poll did not get to because the hour's GitHub requests were spent. */
  skippedChecks?: number;
  /** Runners the alarm judged (arc-reaper only). */
  alarmFirings?: number;
  /** Rechecks of a run (arc-reaper only): each one GitHub read answering for every open job of the run. */
  rechecks?: number;
  /** Rechecks the repository's in-progress runs answered (arc-reaper only): no read of their own. */
  listedRechecks?: number;
  /** Rechecks of a run listed in progress answered by one page of its attempt's jobs (arc-reaper only). */
  listedReads?: number;
  /** Completions no delivery brought that a read of the run found (arc-reaper only), and how many at the first read after they happened. */
  lostCompletions?: { found: number; atFirstRecheck: number };
}
