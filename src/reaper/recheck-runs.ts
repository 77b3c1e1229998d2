// Rechecks grouped per run: a matrix of 10 jobs past the recheck
// costs one read of the run's jobs (filter=latest, 100 a page), not 10 job
// reads. For one pass, the GitHub client is wrapped so that a job read of a run
// with several tracked jobs (or unseen busy runners) is answered from that one
// listing, and a run read is made once per run. Afterwards, the open rows of a
// listed run that the pass did not ask about (not due yet, or beyond the
// alarm's batch) learn what the listing said of them: a completion as a fact,
// a running job as a recheck done now, so the whole run's next recheck moves
// together. A job the listing does not show (a re-run's older attempt) is read
// on its own; a listing cut by the budget answers what it read, and the rest
// is held for the budget like any ask and resumes at the next pass.
// A run the repository's listing shows in progress (running-runs.ts) is read
// too when one of its tracked jobs is due (the setting's "read", the default):
// one page of the attempt its jobs belong to, once per run and pass, so a job
// that completed inside a run that goes on, its completion lost, is found at
// its first recheck after, not when the whole run ends.
import type { Github, GithubJob, GithubRun } from "../github/github-client.ts";
import type { Fact } from "../model/facts.ts";
import type { Policy } from "../model/policy.ts";
import type { RunnerRecord } from "../model/runner.ts";
import type { LedgerPort } from "./ports.ts";
import type { AskDeps } from "./ask-github.ts";
import type { ReconcileInput, Result } from "./reconcile.ts";
import { JobNamesAnotherRunner, jobNamingRunner } from "./job-names-runner.ts";
import { runningRunsOfPass } from "./running-runs.ts";

interface Listing {
  repo: string;
  runId: number;
  installationId: number;
  jobs: GithubJob[];
  /** Why the listing stopped before its last page (the budget, a rate limit, an error). */
  error?: unknown;
}

export interface RunReads {
  /** The client the pass uses: job and run reads shared per run. */
  github: Github | Error;
  /** A recheck's answer from the repository's runs in progress, listed once per repository and pass (running-runs.ts). */
  listed?: AskDeps["listed"];
  /** A listed run's tracked job as the first page of its attempt's jobs shows it (read once per run, attempt and pass). */
  attemptJob?: AskDeps["attemptJob"];
  /** After the pass's results are stored: what the listings said of the runs' other open rows. */
  apply(results: readonly Result[], now: number): Promise<void>;
}

type RunRows = Pick<LedgerPort, "learn"> & Partial<Pick<LedgerPort, "openOfRun" | "rechecked">>;

const key = (repo: string, runId: number) => `${repo}#${runId}`;

export interface ShareOptions {
  /** REAPER_RECHECK_LISTED_RUNS=read: a due recheck of a run listed in progress reads its attempt's first page of jobs. */
  readListed?: boolean;
  /** With readListed: the policy that says which rows are due for a recheck (the listing leaves those due). */
  policy?: Policy;
}

export function shareRunReads(items: readonly ReconcileInput[], github: Github | Error, ledger: RunRows, options: ShareOptions = {}): RunReads {
  if (github instanceof Error) return { github, apply: async () => {} };
  // Indexed at the pass's first GitHub read: a steady sweep over 50,000 runners reads nothing.
  let index: PassIndex | undefined;
  const indexed = (): PassIndex => (index ??= indexPass(items));
  const listings = new Map<string, Promise<Listing>>();
  const pages = new Map<string, Promise<Listing>>();
  const running = runningRunsOfPass(github, options.readListed ? options.policy : undefined);
  const runs = new Map<string, Promise<GithubRun>>();
  const grouped = new Map<string, boolean>();

  /** A run worth one listing: more than one runner of it is open (in the ledger, or in this pass). */
  const isGroup = (repo: string, runId: number): boolean => {
    const k = key(repo, runId);
    const known = grouped.get(k);
    if (known !== undefined) return known;
    const g = listings.has(k) || Math.max(indexed().inPass.get(k) ?? 0, ledger.openOfRun?.(repo, runId).length ?? 0) > 1;
    grouped.set(k, g);
    return g;
  };

  const list = (repo: string, runId: number, installationId: number): Promise<Listing> => {
    const k = key(repo, runId);
    const known = listings.get(k);
    if (known) return known;
    const l = readAll(github, repo, runId, installationId);
    listings.set(k, l);
    return l;
  };

  const shared: Github = {
    ...github,
    async job(repo, jobId, installationId) {
      const runId = indexed().runOfJob.get(`${repo}#${jobId}`);
      if (runId === undefined || !isGroup(repo, runId)) return github.job(repo, jobId, installationId);
      const listing = await list(repo, runId, installationId);
      const found = listing.jobs.find((j) => j.id === jobId);
      if (found) return found;
      if (listing.error !== undefined) throw listing.error;
      // Not in the latest attempt: a re-run's older attempt, read on its own.
      return github.job(repo, jobId, installationId);
    },
    run(repo, runId, installationId) {
      const k = key(repo, runId);
      const known = runs.get(k);
      if (known) return known;
      const r = github.run(repo, runId, installationId);
      runs.set(k, r);
      return r;
    },
    async runnerJob(repo, runId, runner, installationId, startedNotBefore) {
      const listing = await list(repo, runId, installationId);
      const found = listing.jobs.find(
        (j) => j.runnerName === runner && (startedNotBefore === undefined || !j.startedAt || Date.parse(j.startedAt) >= startedNotBefore),
      );
      if (found) return found;
      if (listing.error !== undefined) throw listing.error;
      return undefined;
    },
  };

  const attemptJob: AskDeps["attemptJob"] = async (record, installationId) => {
    const k = `${key(record.repo, record.runId)}@${record.runAttempt}`;
    // Listed at this attempt, the run's latest: a read of its latest jobs in this pass answers as well.
    let page = listings.get(key(record.repo, record.runId)) ?? pages.get(k);
    if (!page) {
      page = readAttemptPage(github, record, installationId);
      pages.set(k, page);
    }
    const { jobs, error } = await page;
    // The budget or a rate limit holds the recheck (resumed at the next pass); any other error fails it like a failed read.
    if (error !== undefined) throw error;
    return jobs.find((j) => j.id === record.jobId);
  };

  return {
    github: shared,
    listed: running.word,
    ...(options.readListed ? { attemptJob } : {}),
    async apply(results, now) {
      const asked = new Set(results.filter((r) => r.asked && r.record?.id !== undefined).map((r) => r.record!.id!));
      await applyRunListings([...listings.values(), ...pages.values()], ledger, asked, now);
      await running.apply(ledger, asked, now);
    },
  };
}

interface PassIndex {
  /** The run of each tracked job in the pass. */
  runOfJob: Map<string, number>;
  /** How many runners of each run the pass holds. */
  inPass: Map<string, number>;
}

function indexPass(items: readonly ReconcileInput[]): PassIndex {
  const runOfJob = new Map<string, number>();
  const inPass = new Map<string, number>();
  for (const i of items) {
    const repo = i.record?.repo ?? i.unseen?.repo;
    const runId = i.record?.runId ?? i.unseen?.runId;
    if (!repo || runId === undefined) continue;
    if (i.record) runOfJob.set(`${repo}#${i.record.jobId}`, runId);
    inPass.set(key(repo, runId), (inPass.get(key(repo, runId)) ?? 0) + 1);
  }
  return { runOfJob, inPass };
}

/** What the pass's listings of runs' jobs said of those runs' other open rows: completions learned, running jobs rechecked. */
async function applyRunListings(listings: readonly Promise<Listing>[], ledger: RunRows, asked: ReadonlySet<number>, now: number): Promise<void> {
  if (listings.length === 0 || !ledger.openOfRun) return;
  for (const pending of listings) {
    const listing = await pending;
    const byId = new Map(listing.jobs.map((j) => [j.id, j]));
    const running: RunnerRecord[] = [];
    for (const row of ledger.openOfRun(listing.repo, listing.runId)) {
      const job = byId.get(row.jobId);
      if (!job || (row.id !== undefined && asked.has(row.id)) || row.runCompleted || row.jobCompleted) continue;
      // A job that names another runner says nothing of this row: left to its own ask, which keeps it and counts the error.
      if (!namesRow(job, row)) continue;
      if (job.status === "completed" && job.completedAt) ledger.learn([completion(row, job, listing.installationId)]);
      else running.push(row);
    }
    if (running.length > 0) ledger.rechecked?.(running, now);
  }
}

/** Every page of the run's latest attempt; a page that could not be read ends it, keeping what came before. */
async function readAll(github: Github, repo: string, runId: number, installationId: number): Promise<Listing> {
  const listing: Listing = { repo, runId, installationId, jobs: [] };
  try {
    for (let page = 1; ; page++) {
      const { jobs, last } = await github.runJobsPage(repo, runId, installationId, page);
      listing.jobs.push(...jobs);
      if (last) return listing;
    }
  } catch (e) {
    listing.error = e;
    return listing;
  }
}

/** The first page (100 jobs) of the attempt a tracked job belongs to; an error is kept for the rechecks that share it. */
async function readAttemptPage(github: Github, record: RunnerRecord, installationId: number): Promise<Listing> {
  const listing: Listing = { repo: record.repo, runId: record.runId, installationId, jobs: [] };
  try {
    listing.jobs = (await github.attemptJobsPage(record.repo, record.runId, record.runAttempt, installationId)).jobs;
  } catch (e) {
    listing.error = e;
  }
  return listing;
}

function namesRow(job: GithubJob, row: RunnerRecord): boolean {
  try {
    jobNamingRunner(job, { name: row.runner, runnerId: row.runnerId });
    return true;
  } catch (e) {
    if (e instanceof JobNamesAnotherRunner) return false;
    throw e;
  }
}

/** A completion the run's listing reports counts like the webhook's would (as askAboutJob records it). */
function completion(row: RunnerRecord, job: GithubJob, installationId: number): Fact {
  return {
    type: "job-completed",
    runner: row.runner,
    repo: row.repo,
    runId: row.runId,
    runAttempt: row.runAttempt,
    jobId: row.jobId,
    startedAt: row.startedAt,
    completedAt: job.completedAt!,
    conclusion: job.conclusion ?? "completed",
    installationId,
    source: "rest",
    ...(job.names ? { names: job.names } : {}),
  };
}
