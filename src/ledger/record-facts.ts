// Recording what GitHub said, idempotently: a job fact touches its own row, a
// run completion adds one run row and touches the open rows of its jobs. A fact
// already known writes nothing, so duplicates and any order give one state.
import type { Fact, JobNames, RunCompleted } from "../model/facts.ts";
import { dueAtOf, type NextLook } from "../model/next-look.ts";
import type { TrackedRunner } from "../model/runner.ts";
import { mergeJobFact, mergeRunCompletion } from "../model/merge-fact.ts";
import type { RunnerRecord } from "../model/runner.ts";
import type { RunnersTable } from "./runners-table.ts";
import type { Sql, SqlRow } from "./sql.ts";

interface RunRow extends SqlRow {
  repo: string;
  run_id: number;
  run_attempt: number;
  updated_at: string;
  conclusion: string;
  source: string;
  names: string | null;
}

export interface Recorded {
  /** Rows whose facts changed (new, or a completion learned). */
  changed: RunnerRecord[];
}

/** The next look and reason the facts alone give a row: decided by the reaper (src/reaper/schedule-facts.ts, its time nextLook's), passed in. */
export type ScheduleFacts = (record: TrackedRunner) => { next: NextLook; reason: string };

/** `now` dates the story; `factAt` (the ledger's clock) marks when the row last learned something. */
export function recordFacts(sql: Sql, runners: RunnersTable, facts: readonly Fact[], now: number, schedule: ScheduleFacts, factAt: number): Recorded {
  const changed: RunnerRecord[] = [];
  const nowIso = new Date(now).toISOString();
  const save = (before: RunnerRecord | undefined, after: RunnerRecord) => {
    if (after === before) return;
    // Until the alarm or a sweep judges it with the cluster's view, the facts' own words stand as its reason.
    const planned = schedule(after);
    const record: RunnerRecord = { ...after, dueAt: dueAtOf(planned.next), reason: after.verdictKey ? after.reason : planned.reason, factAt };
    delete record.heldFor;
    runners.put(record);
    changed.push(record);
  };
  for (const fact of facts) {
    if (fact.type === "job-started" || fact.type === "job-completed") {
      const existing = runners.get(fact.runner, fact.jobId);
      // The run is the one the row already names: one job's facts never move it to another run.
      const job = existing ?? fact;
      save(existing, mergeJobFact(existing, fact, coveringRun(sql, job.repo, job.runId, job.runAttempt), nowIso));
    } else if (fact.type === "run-completed") {
      const inserted = sql.run(
        "INSERT INTO runs (repo, run_id, run_attempt, updated_at, conclusion, source, names) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        fact.repo,
        fact.runId,
        fact.runAttempt,
        fact.updatedAt,
        fact.conclusion,
        fact.source,
        fact.names ? JSON.stringify(fact.names) : null,
      );
      if (inserted === 0) continue; // known already: its jobs were covered when it first came
      for (const record of runners.openOfRun(fact.repo, fact.runId)) save(record, mergeRunCompletion(record, fact, nowIso));
    }
  }
  return { changed };
}

/** The lowest completed attempt at or after the job's own (attempt 0 means unknown: no run covers it). */
function coveringRun(sql: Sql, repo: string, runId: number, attempt: number): RunCompleted | undefined {
  if (attempt < 1) return undefined;
  const row = sql.first<RunRow>(
    "SELECT * FROM runs WHERE repo = ? AND run_id = ? AND run_attempt >= ? ORDER BY run_attempt, updated_at LIMIT 1",
    repo,
    runId,
    attempt,
  );
  if (!row) return undefined;
  const run: RunCompleted = {
    type: "run-completed",
    repo: row.repo,
    runId: row.run_id,
    runAttempt: row.run_attempt,
    updatedAt: row.updated_at,
    conclusion: row.conclusion,
    source: row.source,
  };
  if (row.names !== null) run.names = JSON.parse(row.names) as JobNames;
  return run;
}
