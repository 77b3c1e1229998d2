// The shapes of the JSON lines the reaper logs, for operators' queries and the
// local stack that reads them.
import type { DeletionCode } from "../model/deletion-codes.ts";
import type { FailedCode } from "../model/failed-codes.ts";
import type { VerdictCode, VerdictKind } from "../model/verdict.ts";
import type { HeldFor } from "../model/verdict.ts";
import type { Caller, ErrorKind } from "./reconcile.ts";
import type { PassSummary } from "./run-pass.ts";

/** One line when a runner's verdict or reason changes, and for every delete and every error. */
export interface DecisionLine {
  msg: "decision";
  by: Caller;
  runner: string;
  namespace: string | null;
  repository: string | null;
  run: number | null;
  job: number | null;
  verdict: VerdictKind | "deleted";
  /** A runner's verdict: its code (src/model/verdict.ts; a Failed runner's, failed-codes.ts; a deletion check's, deletion-codes.ts), what a log query filters on; the reason is for people. */
  code?: VerdictCode | FailedCode | DeletionCode;
  reason: string;
  error?: ErrorKind;
  cluster?: string;
  heldFor?: HeldFor;
}

/** One line per sweep: what it found and did, and what it cost. */
export type SweepLine = { msg: "sweep" } & Omit<PassSummary, "kind"> & {
    clusterCalls: number;
    rowsRead: number;
    rowsWritten: number;
    durationMs: number;
    /** Bytes of the pass's own lines (within the log budget of one invocation, src/log.ts). */
    logBytes: number;
    /** Lines past that budget, not written, by msg (e.g. { decision: 9500 }); absent when none. */
    logSummarized?: Record<string, number>;
  };
