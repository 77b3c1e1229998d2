// What the sweep and the alarm need of the ledger: a small interface, so the
// reaper knows nothing of SQL or Durable Objects.
import type { RunnerRecord } from "../ledger/runner-record.ts";
import type { UnseenRunner } from "../ledger/unseen-table.ts";
import type { Fact } from "../store/facts.ts";
import type { Case } from "./judge-and-act.ts";
import type { ClusterRunner } from "./judge.ts";
import type { DeliveriesMark, RedeliveryStore } from "./redeliver-failed.ts";

export type Caller = "alarm" | "sweep";

export interface Applied {
  /** Decision lines logged (a verdict that changed, a delete, an error). */
  logged: number;
}

export interface LedgerPort {
  openRunners(): RunnerRecord[];
  dueRunners(now: number, limit: number): RunnerRecord[];
  unseen(): UnseenRunner[];
  dueUnseen(now: number, limit: number): UnseenRunner[];
  /** Records facts learned from GitHub (and the object they are about); answers that runner's record. */
  learn(facts: Fact[], now: number, runner?: ClusterRunner): RunnerRecord | undefined;
  /** Persists every case's outcome: verdicts, closes, unseen runners; logs what changed. */
  apply(cases: Case[], by: Caller, now: number): Applied;
  /** Unseen runners no longer busy in the cluster are forgotten (only after a complete listing). */
  forgetUnseen(keep: (u: UnseenRunner) => boolean): void;
  deletionsLeft(now: number): number;
  spendDeletions(now: number, n: number): void;
  paused(): boolean;
  deliveriesMark(): DeliveriesMark;
  setDeliveriesMark(mark: DeliveriesMark): void;
  redeliveries: RedeliveryStore;
}
