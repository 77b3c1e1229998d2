// A runner ARC marked Failed: its pod could not be made, and ARC counts it
// towards its scale set's replicas (scaleTotal), so it holds a slot until it is
// deleted. One per object (cluster, namespace, name, uid).
import type { FailedCode } from "./failed-codes.ts";
import type { StoryEntry } from "./runner.ts";

export interface FailedRunner {
  id?: number;
  cluster: string;
  namespace: string;
  name: string;
  uid: string;
  scaleSet?: string;
  /** ARC's status.reason and status.message, cleaned and bounded (arc-failure.ts). */
  arcReason?: string;
  arcMessage?: string;
  /** When it failed (ms): the latest of status.failures, else when arc-reaper first saw it Failed. */
  failedAt: number;
  firstSeen: number;
  /** Its creationTimestamp (ms): a replacement is never deleted sooner than REAPER_FAILED_SECONDS after it was made. */
  createdAt?: number;
  /** The run it carries, if any: then it is left to that job's rules. */
  runId?: number;
  /** failed: holds a slot; reaped: we deleted it and it went; gone: it left without us. */
  state: "failed" | "reaped" | "gone";
  reason: string;
  /** Its decision's code as of this look (not a column: its story's entries keep it). */
  code?: FailedCode;
  /** When we sent its DELETE (ms): never sent twice. */
  deletedAt?: number;
  /** DELETEs that failed in a row, and when the next may be sent (1 minute doubling to 1 hour): no cap slot before. 0: its back-off just ended. */
  deleteFailures?: number;
  retryAt?: number;
  closedAt?: number;
  story: FailedStoryEntry[];
}

/** A Failed row's story entry names its decision's code (entries stored before codes have none). */
export interface FailedStoryEntry extends StoryEntry {
  code?: FailedCode;
}

/** One scale set's key among Failed runners' counts (cluster, namespace, scale set; unlabelled is ""). */
export const scaleSetKey = (cluster: string, namespace: string, scaleSet: string | undefined): string => `${cluster}\u0000${namespace}\u0000${scaleSet ?? ""}`;
