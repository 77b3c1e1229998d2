// A runner as the cluster shows it, and as the ledger keeps it: what the facts
// say of its job (TrackedRunner), and the row around it (RunnerRecord) with its
// bounded story (withStory).
import type { DeletionCode } from "./deletion-codes.ts";
import type { JobNames } from "./facts.ts";
import type { FailedCode } from "./failed-codes.ts";
import type { DeleteCause, HeldFor, VerdictCode, VerdictKind } from "./verdict.ts";

/** What the judge needs of one EphemeralRunner. Identity: (cluster, namespace, name, uid). */
export interface ClusterRunner {
  /** The cluster it lives in (KUBE_CLUSTER_NAME, or the agent's AGENT_CLUSTER); "default" when unnamed. */
  cluster?: string;
  namespace: string;
  name: string;
  uid: string;
  /**
   * `status.runnerId`: the registration ARC's controller made for it (from the JIT config, before any job),
   * the number GitHub's `workflow_job.runner_id` names. Absent until the controller wrote it.
   */
  runnerId?: number;
  deletionTimestamp?: string;
  workflowRunId?: number;
  jobRepositoryName?: string;
  createdAt?: string;
  /** `status.phase`; only "Failed" is acted on (arc-failure.ts): identity never depends on it (ARC 0.15's listener writes "Running"). */
  phase?: string;
  /** ARC's `status.reason` and `status.message` (raw: cleaned where shown), and the latest of `status.failures` times. */
  arcReason?: string;
  arcMessage?: string;
  failedAt?: string;
  /** ARC's `actions.github.com/scale-set-name` label. */
  scaleSet?: string;
  /** `metadata.finalizers`: what a finish (REAPER_FINISH_STUCK) tests and removes. */
  finalizers?: string[];
  // --- runners that never work (src/reaper/idle-runners.ts): shown, never judged on ---
  /** The runner version, from the runner container's image tag or a `runner-version` label (src/cluster/runner-version.ts). */
  runnerVersion?: string;
  // --- end of runners that never work ---
}

/** Everything the facts say about one runner's job. */
export interface TrackedRunner {
  runner: string;
  repo: string;
  runId: number;
  runAttempt: number;
  jobId: number;
  /** GitHub's `workflow_job.runner_id`: the registration that took the job (absent: GitHub did not say). */
  runnerId?: number;
  startedAt?: string;
  installationId?: number;
  jobCompleted?: { at: string; conclusion: string };
  /** The completion of the job's run attempt, or of a later attempt (which implies this one ended). */
  runCompleted?: { at: string; conclusion: string; attempt: number };
  closed?: { outcome: "reaped" | "gone" | "stuck"; at: string; reason: string };
  /** The uid of the object seen busy on the job's run: only that object may be deleted for this job. */
  uid?: string;
  /** Where that object lives. */
  namespace?: string;
  cluster?: string;
  /** When GitHub's REST API was last asked about this job (ms). */
  checkedAt?: number;
  /** When the ledger last learned a fact about this job (ms, the ledger's clock). */
  factAt?: number;
}

/**
 * failed: ARC marked it Failed (its pod could not be made) and it holds a slot of its scale set (src/model/failed.ts).
 * stuck: we deleted it and ARC still holds it (a finalizer) REAPER_STUCK_SECONDS later: shown, counted, never deleted again.
 */
export const RUNNER_STATES = ["running", "finished", "failed", "stuck", "reaped", "gone"] as const;
export type RunnerState = (typeof RUNNER_STATES)[number];
export const OPEN_STATES: readonly RunnerState[] = ["running", "finished"];
/** Whether a row in this state is still open (one of OPEN_STATES): judged, never pruned. */
export const isOpen = (state: RunnerState): boolean => state === "running" || state === "finished";

/** Where a story entry came from: a delivery GUID, "rest", "cluster", "alarm", "sweep", "admin". */
export interface StoryEntry {
  at: string;
  what: string;
  source: string;
  /** A decision's entry: its code (a verdict's, a deletion check's, a Failed runner's); none for a fact, or an entry stored before codes. */
  code?: VerdictCode | DeletionCode | FailedCode;
}

export interface RunnerRecord extends TrackedRunner {
  id?: number;
  state: RunnerState;
  verdict?: VerdictKind;
  reason: string;
  /** Its decision's key (verdictKey in src/model/verdict.ts): a change of it is worth a story entry and a log line. */
  verdictKey?: string;
  cause?: DeleteCause;
  /** A closed row a check of our deletion restated (stuck, or reaped after it was): that check's code. */
  checkCode?: DeletionCode;
  decidedAt?: number;
  /** Open: when reconcile next looks at it (ms); null: the sweep's minute. Closed: null. */
  dueAt: number | null;
  /** Closed: when it is pruned (ms); a stuck row never is. */
  pruneAt?: number;
  /** Failed asks in a row (reconcile's back-off); 0 or absent: none. */
  failures?: number;
  /** What holds its decision back, if anything. */
  heldFor?: HeldFor;
  story: StoryEntry[];
  /** The workflow, job and branch names and the run's page: shown, never judged on. */
  names?: JobNames;
  /**
   * Read for judging only (the sweep's read of every open row): its story and names were left unread
   * (`story` is empty here), and the ledger reads them before it writes the row.
   */
  storyUnread?: true;
}

/** At most this many story entries are kept per runner (the oldest go first). */
const MAX_STORY = 40;

export function withStory(record: RunnerRecord, entry: StoryEntry): RunnerRecord {
  return { ...record, story: [...record.story, entry].slice(-MAX_STORY) };
}

/** A busy runner no webhook told us about, by name and uid. */
export interface UnseenRunner {
  name: string;
  uid: string;
  cluster?: string;
  namespace: string;
  runId: number;
  repo: string | null;
  firstSeen: number;
  dueAt: number | null;
  /** Failed asks in a row (reconcile's back-off); 0 or absent: none. */
  failures?: number;
  heldFor?: HeldFor;
  /** Its last verdict's reason; null: never judged yet (first seen this look). */
  reason: string | null;
  /** Its last verdict's key (src/model/verdict.ts); absent: never judged, or judged before unseen rows kept one. */
  verdictKey?: string;
}

/** A deletion we made, watched until its object goes: stuck when it is still there REAPER_STUCK_SECONDS later. */
export interface DeletionWatch {
  /** The runner row it closed. */
  rowId: number;
  name: string;
  cluster: string;
  namespace: string;
  uid: string;
  repo: string;
  /** 0: job unknown (learned from its completed run): GitHub is asked about the run instead. */
  jobId: number;
  /** The row's run (read from the runner row, not stored with the watch). */
  runId?: number;
  installationId?: number;
  deletedAt: number;
  dueAt: number;
  /** When it was found stuck (ms), if it was. */
  stuckAt?: number;
  /** Why it was deleted: the row's reason again once the deletion went. */
  reason: string;
  /** A finish (REAPER_FINISH_STUCK) the API server refused (403: the Role overlay is not applied), and why. */
  finishRefused?: string;
}
