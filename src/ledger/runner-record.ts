// One row of the ledger's runners table, as the reaper sees it: what the facts
// say about one runner's job (a TrackedRunner), the state it is in, the verdict
// it last got and when it is next due, and its story.
import type { DeleteCause, VerdictKind } from "../reaper/judge.ts";
import type { TrackedRunner } from "../reaper/tracked-runners.ts";
import type { JobNames } from "../store/facts.ts";

export const RUNNER_STATES = ["running", "finished", "reaped", "gone"] as const;
export type RunnerState = (typeof RUNNER_STATES)[number];
export const OPEN_STATES: readonly RunnerState[] = ["running", "finished"];

/** Where a story entry came from: a delivery GUID, "rest", "cluster", "alarm", "sweep", "admin". */
export interface StoryEntry {
  at: string;
  what: string;
  source: string;
}

export interface RunnerRecord extends TrackedRunner {
  id?: number;
  state: RunnerState;
  verdict?: VerdictKind;
  reason: string;
  /** The verdict and reason without their ages: a change of it is worth a log line. */
  verdictKey?: string;
  cause?: DeleteCause;
  decidedAt?: number;
  /** Open: when the alarm should next judge it (ms). Closed: when it is pruned. */
  dueAt: number | null;
  story: StoryEntry[];
  /** The workflow, job and branch names and the run's page: shown, never judged on. */
  names?: JobNames;
}

/** At most this many story entries are kept per runner (the oldest go first). */
export const MAX_STORY = 40;

export function withStory(record: RunnerRecord, entry: StoryEntry): RunnerRecord {
  return { ...record, story: [...record.story, entry].slice(-MAX_STORY) };
}

export const isOpen = (state: RunnerState): boolean => state === "running" || state === "finished";
