// What GitHub told us, as facts: a job started on a runner, a job completed, a
// run attempt completed. Each comes from a webhook delivery or a REST read
// (source "rest"); the ledger folds them idempotently, in any order.

/** What people call a job: author-written strings, bounded and cleaned at intake (src/github/job-names.ts). */
export interface JobNames {
  workflow?: string;
  job?: string;
  branch?: string;
  /** The run's page on GitHub (https only). */
  runUrl?: string;
}

export interface JobStarted {
  type: "job-started";
  runner: string;
  repo: string; // owner/repo
  runId: number;
  runAttempt: number; // 0 when GitHub did not say: then no run completion covers the job
  jobId: number;
  /** `workflow_job.runner_id`, the runner's registration; absent when GitHub sent null or 0. */
  runnerId?: number;
  startedAt: string; // GitHub's time, ISO 8601
  installationId?: number;
  source: string; // delivery id, or "rest" when learned from the REST API
  names?: JobNames;
}

export interface JobCompleted extends Omit<JobStarted, "type" | "startedAt"> {
  type: "job-completed";
  startedAt?: string;
  completedAt: string;
  conclusion: string;
}

export interface RunCompleted {
  type: "run-completed";
  repo: string;
  runId: number;
  runAttempt: number;
  updatedAt: string; // a completed run's updated_at is when it completed
  conclusion: string;
  installationId?: number;
  source: string;
  names?: JobNames;
}

export type Fact = JobStarted | JobCompleted | RunCompleted;
