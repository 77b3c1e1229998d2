// Storage helpers around the ledger's runner rows; the types live in src/model/runner.ts.
import type { RunnerRecord, RunnerState, StoryEntry } from "../model/runner.ts";

/** At most this many story entries are kept per runner (the oldest go first). */
const MAX_STORY = 40;

export function withStory(record: RunnerRecord, entry: StoryEntry): RunnerRecord {
  return { ...record, story: [...record.story, entry].slice(-MAX_STORY) };
}

export const isOpen = (state: RunnerState): boolean => state === "running" || state === "finished";
