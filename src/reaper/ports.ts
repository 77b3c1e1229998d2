// What the alarm and the sweep need of the ledger: a small interface, so the
// reaper knows nothing of SQL or Durable Objects.
import type { Fact } from "../model/facts.ts";
import type { FailedRunner } from "../model/failed.ts";
import type { IdleCount } from "../model/idle.ts";
import type { ClusterRunner, DeletionWatch, RunnerRecord, UnseenRunner } from "../model/runner.ts";
import type { DeletionCheck } from "./check-deletion.ts";
import type { SlidingWindow } from "../model/window.ts";
import type { Caller, Result } from "./reconcile.ts";
import type { DeliveriesMark, RedeliveryStore } from "./redeliver-failed.ts";

export interface Stored {
  /** Decision lines logged (a verdict that changed, a delete, an error). */
  logged: number;
}

export interface LedgerPort {
  openRunners(): RunnerRecord[];
  /**
   * Every open row as the sweep judges it: its story and names may be left unread (RunnerRecord.storyUnread),
   * and store() reads them for the rows it writes. Absent: openRunners (a ledger stand-in).
   */
  openToJudge?(): RunnerRecord[];
  dueRunners(now: number, limit: number): RunnerRecord[];
  unseen(): UnseenRunner[];
  dueUnseen(now: number, limit: number): UnseenRunner[];
  /** Records facts learned from GitHub (and the object they are about); answers that runner's record. */
  learn(facts: Fact[], runner?: ClusterRunner): RunnerRecord | undefined;
  /** The open rows of one run (a run's jobs read from GitHub answers for each: src/reaper/recheck-runs.ts). */
  openOfRun?(repo: string, runId: number): RunnerRecord[];
  /** Running jobs a read of their run's jobs found still running: re-read now, their next recheck moves. */
  rechecked?(records: readonly RunnerRecord[], now: number): void;
  /** ARC's runner ids were seen to match GitHub's in these clusters (a job's runner found by its id); remembered from then on. */
  runnerIdsMatched?(clusters: Iterable<string>, now: number): void;
  /** Stores what reconcile answered: verdicts, due times, holds, closes, unseen rows; logs what changed. */
  store(results: readonly Result[], by: Caller, now: number): Stored;
  /** The deletions of the last 60 s, and (after acting) the window to keep. */
  deletions(now: number): SlidingWindow;
  saveDeletions(window: SlidingWindow): void;
  /** Our deletions still watched (their object has not been seen to go), and those due for a look. */
  deletionWatches(): DeletionWatch[];
  dueDeletions(now: number, limit: number): DeletionWatch[];
  storeDeletionCheck(w: DeletionWatch, check: DeletionCheck, now: number, by: Caller): void;
  paused(): boolean;
  deliveriesMark(): DeliveriesMark;
  setDeliveriesMark(mark: DeliveriesMark): void;
  redeliveries: RedeliveryStore;
  /** Counts a finish of a held deletion (REAPER_FINISH_STUCK) by outcome: arc_reaper_finishes_total. */
  countFinish?(outcome: "finished" | "refused" | "conflict" | "failed"): void;
  /** Runners ARC marked Failed; absent: not tracked (a ledger stand-in). */
  failed?: FailedPort;
  /** Runners that never work, as the last sweep counted them (src/reaper/idle-runners.ts); absent: not kept. */
  idle?: { store(count: IdleCount): void };
}

/** What the sweep's look at Failed runners needs of the ledger (failed-runners.ts). */
export interface FailedPort {
  open(): FailedRunner[];
  /** Stores the row; logs a decision line when its reason (without ages) changed, and counts a delete or a close. */
  store(row: FailedRunner, change: { deleted?: boolean; closed?: boolean; logged?: boolean }): void;
  /** Failed runners deleted since `since` (ms), per scale set (model/failed.ts scaleSetKey): asked once a sweep. */
  deletedSince(since: number): ReadonlyMap<string, number>;
}
