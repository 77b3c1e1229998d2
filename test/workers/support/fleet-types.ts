// The fleet's shapes (fleet.ts): its options, the figures it answers, and the
// runners, swaps and events it plans; a seeded generator and small helpers.
import type { EphemeralRunner } from "../../standins/kube/control.ts";
import type { Stack } from "./stack.ts";

/** The second watched namespace: twins of a name live across the two. */
export const OTHER_NS = "other-runners";
/** With clockHazards: the sweep before which the clock steps back (forward two sweeps later). */
export const CLOCK_STEP_SWEEP = 2;
/** With repointCluster: the sweep before which the agent's cluster name points at another cluster. */
export const REPOINT_SWEEP = 4;
/** The fleet's REAPER_FAILED_SECONDS (with `slots`). */
export const FAILED_SECONDS = 120;

export interface FleetOptions {
  seed: number;
  lifecycles: number;
  duplicateRate: number;
  dropRate: number;
  /** Sweeps during which the stand-ins inject faults (5xx, 429, slow answers). */
  faultSweeps: number;
  graceSeconds: number;
  boundSeconds: number;
  githubBudget: number;
  /** Sweeps over which deliveries are spread. */
  deliverySweeps: number;
  maxSweeps: number;
  /** REAPER_RECHECK_SECONDS: small, so that lost completions are found within the soak's simulated hour or so. */
  recheckSeconds?: number;
  /** Agent mode: an in-cluster agent whose view lags (stalled watches, relists, short outages); see fleet-agent.ts. */
  agent?: boolean;
  /**
   * Slots that do nothing (issue 24): Failed runners (REAPER_FAILED_SECONDS) and deletions ARC's finalizer holds
   * (REAPER_FINISH_STUCK): the stand-in holds the deletion of every hung runner (its job runs) and of every held one
   * (GitHub's REST answer says in_progress until a later sweep, then completed) until the reaper patches it.
   */
  slots?: boolean;
  /**
   * Issue 46: the wall clock steps back two days at sweep CLOCK_STEP_SWEEP (the sweep clock's stamps land in the
   * future) and forward an hour two sweeps later, and the alarm's pass fails three runs in between (a full volume).
   */
  clockHazards?: boolean;
  /** Agent mode: before sweep REPOINT_SWEEP the cluster's name is pointed at another cluster (a new identity in the agent's hello). */
  repointCluster?: boolean;
  /** With `slots`: hold the deletion of every n-th hung runner (default 1: all); each costs a GitHub read every REAPER_STUCK_SECONDS. */
  heldHungEvery?: number;
}

export interface FleetFigures {
  seed: number;
  lifecycles: number;
  runners: number;
  events: number;
  deliveries: number;
  duplicates: number;
  drops: number;
  redelivered: number;
  faultsInjected: number;
  sweeps: number;
  alarms: number;
  /** New runners that took a name whose facts were still open. */
  nameReuses: number;
  /** Jobs whose completion was never delivered nor listed (beyond the look-back). */
  lostCompletions: number;
  accessFaults: number;
  /** List answers a broken proxy changed: Tables with a row cut short or numbers as text; pages cut with more said to come. */
  malformedTables: number;
  shortPages: number;
  /** Steps of the wall clock (both ways) and alarm runs that failed (clockHazards). */
  clockSteps: number;
  alarmFailures: number;
  /** Sweeps the ledger skipped (its sweep clock's stamp unmoved): a stamp in the future must never stop them. */
  sweepsSkipped: number;
  /** DELETEs an Access page answered 200 (nothing deleted): must not count as reaped. */
  accessAnsweredDeletes: number;
  /** 403 secondary rate limits GitHub answered. */
  secondaryLimits: number;
  deletions: number;
  wrongfulDeletions: number;
  deletedTwice: number;
  /** Runners closed as gone while the object that took their job was still in the cluster. */
  goneWhileInCluster: number;
  /** Requests with an installation token while GitHub had asked to wait. */
  githubCallsDuringBackOff: number;
  /** Requests that reached another host with a credential (after a redirect). */
  credentialsToOtherHosts: number;
  leftBehind: number;
  mostGithubCallsInOneSweep: number;
  githubBudget: number;
  sweepsToConverge: number;
  /** Runners closed as gone while the object that took their job had really left (the positive side of goneWhileInCluster). */
  goneRightly: number;
  /** Names busy in one watched namespace with an idle twin of the same name in the other (planned; twin-lost included). */
  twins: number;
  /** What happened to them: busy twins deleted, idle twins never deleted. */
  twinsReaped: number;
  idleTwinsKept: number;
  /** Busy runners no webhook told of (planned); those the ledger was seen to hold as unseen rows whose object then left, never deleted; and of those, the rows that ended. */
  unseenVanishPlanned: number;
  unseenVanished: number;
  unseenVanishedEnded: number;
  /** Busy runners seen before their in_progress webhook arrived (planned), and those seen as unseen rows that then became a tracked row of their run; GitHub calls about them (must be 0). */
  unseenExplainedPlanned: number;
  unseenExplained: number;
  githubCallsForExplained: number;
  /** The most alarm runs in any simulated minute (each alarm run until nothing is due at its time). */
  mostAlarmRunsInAMinute: number;
  /** Agent mode: steps whose watch stalled, relists, and outages of the agent's link. */
  agentStalls: number;
  agentRelists: number;
  agentOutages: number;
  /** Reads by name the ledger asked the agent for (a view older than a runner's facts). */
  agentReads: number;
  /** Agent mode: times the cluster's name was pointed at another cluster (repointCluster). */
  clusterRepoints: number;
  /** Changes of a cluster's identity the ledger counted (arc_reaper_cluster_identity_changes_total). */
  identityChanges: number;
  /** Issue 24 (slots): Failed runners planned, deleted, deleted before their failure time + REAPER_FAILED_SECONDS, deleted twice. */
  failedRunners: number;
  failedDeleted: number;
  failedDeletedEarly: number;
  failedDeletedTwice: number;
  /** Deletions of runners busy on a job that runs (status.workflowRunId set, never deletable). */
  busyDeleted: number;
  /** Held deletions planned (held kind), finished by the reaper's patch, and hung runners held while their job runs. */
  heldDeletions: number;
  heldFinished: number;
  heldWhileRunning: number;
  /** Finalizer patches (200) answered while GitHub said the job runs (must be 0), and every finalizer patch. */
  finalizersRemovedWhileRunning: number;
  patches: number;
  /** Job patches the listener lost (the object never carries its run), wrote late, and twins told apart only by runner id. */
  jobPatchesLost: number;
  jobPatchesLate: number;
  twinsByIdOnly: number;
}

export type Kind =
  | "done"
  | "running"
  | "hung"
  | "idle"
  | "unknown-done"
  | "unknown-running"
  | "rerun"
  | "lost"
  | "twin"
  | "twin-idle"
  | "unseen-vanish"
  | "unseen-explained"
  | "failed"
  | "failed-busy"
  | "held"
  | PatchKind
  | ReuseKind;
/** The listener's job fields (workflowRunId, jobRepositoryName) lost or written late: only the runner id names the job's runner. */
export type PatchKind = "patch-lost" | "patch-lost-running" | "patch-late" | "twin-lost";
export type ReuseKind = "reuse-idle" | "reuse-same-run" | "reuse-other-run";

/** One EphemeralRunner object (names can come back: objects are told apart by uid). */
export interface Runner {
  name: string;
  kind: Kind;
  /** Simulated time from which deleting it is right (ms); undefined: never. */
  deletableFrom?: number;
  object: EphemeralRunner;
  uid?: string;
  /** It left the cluster (replaced by a new object of its name). */
  removed?: boolean;
  /** Held kind: the sweep from which GitHub's REST answer says its job completed (before it: in_progress). */
  completesAtSweep?: number;
}

/** At sweep k, the object `old` vanishes and `fresh` takes its name, before that sweep's alarms. */
export interface Swap {
  k: number;
  old: Runner;
  fresh: Runner;
  /** What GitHub learns and delivers at that moment (delivering with `deliver`). */
  afterwards: (deliver: Deliver) => Promise<void>;
}

export interface Event {
  event: "workflow_job" | "workflow_run";
  guid: string;
  payload: Record<string, unknown>;
  at: number; // GitHub's time of the event (ms)
}

type Deliver = (e: Event) => Promise<void>;

/** What planning a fleet draws on: its options, its stack, its seeded generator and simulated time. */
export interface FleetContext {
  o: FleetOptions;
  s: Stack;
  random: () => number;
  pick: <T>(xs: readonly T[]) => T;
  /** Simulated time of the first sweep (ms). */
  S: number;
  grace: number;
  bound: number;
  /** The first sweep without faults: the unseen teeth appear then (fleet-plan.ts). */
  calm: number;
}

/** A small seeded generator (mulberry32): the same seed, the same run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const iso = (ms: number) => new Date(ms).toISOString();
