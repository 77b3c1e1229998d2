// Rechecks answered per repository (the long-jobs day): when a job
// of a repository is due for a recheck, one listing of the repository's runs
// in progress (100 a page) answers, for the whole pass, every tracked job whose
// run (this attempt) it shows: still running, kept, its next recheck moved
// (run-listing.ts decides). A fleet of long builds then costs about one
// listing per repository and recheck interval instead of a read per run.
// The price: a job that completed inside a run still in progress, its
// completion lost, is found when the run ends (its completion, or the first
// recheck after it, which no longer finds the run listed) instead of at the
// job's next recheck; past the bound the job itself is read.
import type { Github } from "../github/github-client.ts";
import type { Policy } from "../model/policy.ts";
import type { RunnerRecord } from "../model/runner.ts";
import type { GithubWord } from "../model/verdict.ts";
import { listedWord, rowsStillRunning, type RunningRuns } from "./run-listing.ts";

/** GitHub answers at most 1,000 runs for a search filtered by status: 10 pages of 100. */
const MAX_PAGES = 10;

interface RunningListing {
  repo: string;
  running: Map<number, number>;
  /** Why the listing stopped before its last page (the budget, a rate limit, an error). */
  error?: unknown;
}

export interface RunningRunsOfPass {
  /** The listing's word on a job due for a recheck; undefined: read the job on its own. */
  word(record: RunnerRecord, installationId: number): Promise<GithubWord | undefined>;
  /** After the pass's results are stored: the other open rows of listed runs count as rechecked now. */
  apply(
    ledger: { openOfRun?(repo: string, runId: number): RunnerRecord[]; rechecked?(rows: readonly RunnerRecord[], now: number): void },
    asked: ReadonlySet<number>,
    now: number,
  ): Promise<void>;
}

/** `leaveDue`: the policy by which rows already due for a recheck are left due by `apply` (rowsStillRunning). */
export function runningRunsOfPass(github: Github, leaveDue?: Policy): RunningRunsOfPass {
  const listings = new Map<string, Promise<RunningListing>>();
  const listing = (repo: string, installationId: number): Promise<RunningListing> => {
    const known = listings.get(repo);
    if (known) return known;
    const l = listRunning(github, repo, installationId);
    listings.set(repo, l);
    return l;
  };
  return {
    async word(record, installationId) {
      const l = await listing(record.repo, installationId);
      const word = listedWord(record, l.running);
      if (word) return word;
      // A listing that stopped early says nothing of the runs it did not reach: its error is the
      // recheck's (the budget or a rate limit holds it; any other fails it like a failed read), and a
      // token refused for the listing is not asked for again by a job read in the same pass.
      if (l.error !== undefined) throw l.error;
      return undefined;
    },
    async apply(ledger, asked, now) {
      if (!ledger.openOfRun || !ledger.rechecked) return;
      for (const pending of listings.values()) {
        const l = await pending;
        for (const runId of l.running.keys()) {
          const rows = rowsStillRunning(ledger.openOfRun(l.repo, runId), l.running as RunningRuns, asked, leaveDue && { policy: leaveDue, now });
          if (rows.length > 0) ledger.rechecked(rows, now);
        }
      }
    },
  };
}

/** Every page up to GitHub's cap; a page that could not be read ends it, keeping what came before. */
async function listRunning(github: Github, repo: string, installationId: number): Promise<RunningListing> {
  const listing: RunningListing = { repo, running: new Map() };
  try {
    for (let page = 1; page <= MAX_PAGES; page++) {
      const { runs, last } = await github.inProgressRunsPage(repo, installationId, page);
      // Listed with status=in_progress, yet read as GitHub wrote it: only an in-progress run counts.
      for (const r of runs) if (r.status === "in_progress") listing.running.set(r.id, r.runAttempt);
      if (last) break;
    }
  } catch (e) {
    listing.error = e;
  }
  return listing;
}
