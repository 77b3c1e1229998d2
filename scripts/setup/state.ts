// Setup's progress, in <state dir>/state.json: only what is not secret (the
// Worker's URL, the App's id and slug, which secrets setup stored, what it did in
// each cluster). Keys and tokens live in this process's memory alone; a resumed
// setup that needs one it no longer holds makes a new one (see resume.ts).
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface ClusterState {
  /** The overlay written to <state dir>/agent-<cluster>/ (or direct/). */
  overlay: string;
  /** The agent's token Secret: made by setup, an existing one kept, or the command printed for the user. */
  secret?: "created" | "kept" | "printed";
  applied?: boolean;
}

export interface SetupState {
  version: 1;
  /** `digest`: of the config deployed, so that a changed answer deploys again. */
  worker?: { name: string; url: string; createdBySetup: boolean; config: string; digest: string };
  /** Set before `wrangler deploy` runs: a run stopped mid-deploy then knows the Worker it finds is its own. */
  deploying?: { name: string; createdBySetup: boolean };
  app?: { id: number; slug: string | null; madeBySetup: boolean };
  /** Secret names setup stored on the Worker (it may replace these, never others). */
  secretsBySetup: string[];
  /** Secret names that were there before setup and were kept. */
  secretsKept: string[];
  clusters: Record<string, ClusterState>;
  /** When /healthz/deep passed. */
  checkedAt?: string;
}

export function emptyState(): SetupState {
  return { version: 1, secretsBySetup: [], secretsKept: [], clusters: {} };
}

export function statePath(dir: string): string {
  return join(dir, "state.json");
}

export function loadState(dir: string): SetupState {
  const path = statePath(dir);
  if (!existsSync(path)) return emptyState();
  const parsed = JSON.parse(readFileSync(path, "utf8")) as SetupState;
  if (parsed.version !== 1) throw new Error(`${path} is of a version this setup does not know (${String(parsed.version)})`);
  return { ...emptyState(), ...parsed };
}

/** Written whole and renamed into place, so a stop mid-write leaves the previous state. */
export function saveState(dir: string, state: SetupState): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = statePath(dir);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}
