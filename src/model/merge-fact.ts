// Folding one fact into a runner's record. Pure and commutative: any order of
// the same facts gives the same fields, and a fact already folded in changes
// nothing, so a duplicated or reordered delivery writes no row.
import type { JobCompleted, JobNames, JobStarted, RunCompleted } from "./facts.ts";
import { isOpen, withStory, type RunnerRecord } from "./runner.ts";

const SAME_FIELDS = ["startedAt", "runnerId", "installationId", "jobCompleted", "runCompleted", "state"] as const;

function sameFacts(a: RunnerRecord, b: RunnerRecord): boolean {
  return SAME_FIELDS.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/**
 * Names are shown, never judged on, and a change of them tells no story. The
 * job's completion has the last word; anything else only fills in what is
 * missing, so the same deliveries in any order leave the same names.
 */
function mergeNames(current: JobNames | undefined, incoming: JobNames | undefined, override: boolean): JobNames | undefined {
  if (!incoming) return current;
  const [first, last] = override ? [current, incoming] : [incoming, current];
  const pick = (k: keyof JobNames) => last?.[k] ?? first?.[k];
  // In one key order, so that equal names compare equal.
  const names: JobNames = {};
  for (const k of ["workflow", "job", "branch", "runUrl"] as const) if (pick(k) !== undefined) names[k] = pick(k);
  return Object.keys(names).length > 0 ? names : undefined;
}

const sameNames = (a: RunnerRecord, b: RunnerRecord): boolean => JSON.stringify(a.names ?? {}) === JSON.stringify(b.names ?? {});

function describeJobFact(fact: JobStarted | JobCompleted): string {
  const where = `job ${fact.jobId} of run ${fact.runId} (attempt ${fact.runAttempt}) in ${fact.repo}`;
  const on = fact.runnerId !== undefined ? `${fact.runner} (runner id ${fact.runnerId})` : fact.runner;
  return fact.type === "job-started" ? `${where} started on ${on} at ${fact.startedAt}` : `${where} is ${fact.conclusion}, completed at ${fact.completedAt}`;
}

/** A job fact into the record of (runner, job); `coveringRun` is the run completion that already covers it, if any. */
export function mergeJobFact(
  existing: RunnerRecord | undefined,
  fact: JobStarted | JobCompleted,
  coveringRun: RunCompleted | undefined,
  nowIso: string,
): RunnerRecord {
  const base: RunnerRecord = existing ?? {
    runner: fact.runner,
    repo: fact.repo,
    runId: fact.runId,
    runAttempt: fact.runAttempt,
    jobId: fact.jobId,
    state: "running",
    reason: "",
    dueAt: null,
    story: [],
  };
  if (!isOpen(base.state)) return base; // a closed runner's story is over
  const merged: RunnerRecord = { ...base };
  merged.startedAt ??= fact.startedAt;
  // A job has one registration: the first id heard stands (a later fact naming another changes nothing).
  if (fact.runnerId !== undefined) merged.runnerId ??= fact.runnerId;
  merged.installationId ??= fact.installationId;
  if (fact.type === "job-completed") merged.jobCompleted ??= { at: fact.completedAt, conclusion: fact.conclusion };
  if (coveringRun) merged.runCompleted = earlierAttempt(merged.runCompleted, coveringRun);
  merged.state = merged.jobCompleted || merged.runCompleted ? "finished" : "running";
  merged.names = mergeNames(mergeNames(merged.names, fact.names, fact.type === "job-completed"), coveringRun?.names, false);
  if (existing && sameFacts(existing, merged)) return sameNames(existing, merged) ? existing : merged;
  return withStory(merged, { at: nowIso, what: describeJobFact(fact), source: fact.source });
}

/** A run completion into a record of one of its jobs; the record itself when it changes nothing. */
export function mergeRunCompletion(existing: RunnerRecord, run: RunCompleted, nowIso: string): RunnerRecord {
  if (!isOpen(existing.state) || existing.runAttempt < 1 || run.runAttempt < existing.runAttempt) return existing;
  const runCompleted = earlierAttempt(existing.runCompleted, run);
  const names = mergeNames(existing.names, run.names, false);
  if (JSON.stringify(runCompleted) === JSON.stringify(existing.runCompleted))
    return sameNames(existing, { ...existing, names }) ? existing : { ...existing, names };
  const attempt = run.runAttempt > existing.runAttempt ? ` (a later attempt, ${run.runAttempt})` : "";
  return withStory(
    { ...existing, runCompleted, state: "finished", names },
    { at: nowIso, what: `run ${run.runId}${attempt} in ${run.repo} is ${run.conclusion}, completed at ${run.updatedAt}`, source: run.source },
  );
}

// A re-run (attempt N+1) starts only after attempt N completed, so the lowest
// completed attempt at or after the job's own proves the job is over.
function earlierAttempt(current: RunnerRecord["runCompleted"], run: RunCompleted): NonNullable<RunnerRecord["runCompleted"]> {
  const candidate = { at: run.updatedAt, conclusion: run.conclusion, attempt: run.runAttempt };
  if (!current) return candidate;
  if (candidate.attempt < current.attempt) return candidate;
  if (candidate.attempt === current.attempt && candidate.at < current.at) return candidate;
  return current;
}
