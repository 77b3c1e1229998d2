// Runners that never work: online and without a job far longer than a job waits
// for a runner (REAPER_IDLE_ALERT_SECONDS), or of a scale set ARC parked because
// its runners exit 7 (phase Outdated: their version is outside GitHub's window).
// Counted per scale set and runner version each sweep; shown, alerted, never deleted
// (deleting one respawns the same version; ARC parks an Outdated set on purpose).

/** idle: no job REAPER_IDLE_ALERT_SECONDS after it was created. outdated: ARC marked it Outdated (exit 7). */
export type IdleWhy = "idle" | "outdated";

/** One scale set's runners that never work, of one runner version, for one reason. */
export interface IdleGroup {
  cluster: string;
  namespace: string;
  /** ARC's scale-set-name label; "" when the object has none. */
  scaleSet: string;
  /** From the image tag or a label (src/cluster/runner-version.ts); "" when the object does not tell. */
  runnerVersion: string;
  why: IdleWhy;
  n: number;
  /** The oldest of them was created then (ms). */
  oldestCreatedAt: number;
}

/** What the last sweep counted; `at`: the sweep that first counted it so (stored only on a change). */
export interface IdleCount {
  at: number;
  idleAlertSeconds: number;
  groups: IdleGroup[];
}
