// A fact is one thing GitHub (or a sweep) told us, written once under its own
// KV key. Everything a sweep needs lives in the key's metadata, so one list
// pass reads them all without a get per key.

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

/** Written by a sweep when a runner's story ends, so later sweeps skip it. */
export interface RunnerClosed {
  type: "runner-closed";
  runner: string;
  jobId: number;
  outcome: "reaped" | "gone";
  at: string;
  reason: string;
  /** For a reaped runner: which evidence condemned it. */
  cause?: "job-completed" | "run-completed" | "over-bound";
  namespace?: string;
}

/** Written when arc-reaper asked GitHub to redeliver a failed delivery: once per GUID. */
export interface RedeliveryRequested {
  type: "redelivery-requested";
  guid: string;
  deliveryId: string;
  event: string;
  at: string;
}

export type Fact = JobStarted | JobCompleted | RunCompleted | RunnerClosed | RedeliveryRequested;

export function factKey(fact: Fact): string {
  switch (fact.type) {
    case "job-started":
      return `job/${fact.runner}/${fact.jobId}/started`;
    case "job-completed":
      return `job/${fact.runner}/${fact.jobId}/completed`;
    case "runner-closed":
      return `job/${fact.runner}/${fact.jobId}/closed`;
    case "run-completed":
      return `run/${fact.repo}/${fact.runId}/${fact.runAttempt}`;
    case "redelivery-requested":
      return `redelivery/${fact.guid}`;
  }
}

const FACT_TYPES = new Set<Fact["type"]>(["job-started", "job-completed", "run-completed", "runner-closed", "redelivery-requested"]);

export function isFact(value: unknown): value is Fact {
  return (
    typeof value === "object" &&
    value !== null &&
    FACT_TYPES.has((value as { type?: unknown }).type as Fact["type"])
  );
}
