// The runners table: reads and writes of RunnerRecords. Open rows are read by
// state and due time (an index); closed rows only by the admin listing and the
// pruning, so a sweep's cost follows the live runners, never the history.
import type { DeletionCode } from "../model/deletion-codes.ts";
import type { JobNames } from "../model/facts.ts";
import type { DeleteCause, HeldFor, VerdictKind } from "../model/verdict.ts";
import { dueAtOf, type NextLook } from "../model/next-look.ts";
import { OPEN_STATES, type RunnerRecord, type RunnerState, type StoryEntry } from "../model/runner.ts";
import type { Sql, SqlRow, SqlValue } from "./sql.ts";

interface Row extends SqlRow {
  id: number;
  runner: string;
  job_id: number;
  repo: string;
  run_id: number;
  run_attempt: number;
  installation_id: number | null;
  started_at: string | null;
  job_completed_at: string | null;
  job_conclusion: string | null;
  run_completed_at: string | null;
  run_conclusion: string | null;
  run_completed_attempt: number | null;
  uid: string | null;
  namespace: string | null;
  checked_at: number | null;
  state: string;
  verdict: string | null;
  reason: string;
  verdict_key: string | null;
  cause: string | null;
  decided_at: number | null;
  due_at: number | null;
  story: string;
  held_for: string | null;
  cluster: string | null;
  fact_at: number | null;
  workflow_name: string | null;
  job_name: string | null;
  head_branch: string | null;
  run_url: string | null;
  prune_at: number | null;
  failures: number;
  runner_id: number | null;
  check_code: string | null;
}

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

function toRecord(row: Row): RunnerRecord {
  const state = row.state as RunnerState;
  const record: RunnerRecord = {
    id: row.id,
    runner: row.runner,
    repo: row.repo,
    runId: row.run_id,
    runAttempt: row.run_attempt,
    jobId: row.job_id,
    startedAt: opt(row.started_at),
    installationId: opt(row.installation_id),
    uid: opt(row.uid),
    namespace: opt(row.namespace),
    checkedAt: opt(row.checked_at),
    state,
    verdict: opt(row.verdict) as VerdictKind | undefined,
    reason: row.reason,
    verdictKey: opt(row.verdict_key),
    cause: opt(row.cause) as DeleteCause | undefined,
    decidedAt: opt(row.decided_at),
    dueAt: row.due_at,
    story: JSON.parse(row.story) as StoryEntry[],
  };
  if (row.held_for !== null) record.heldFor = row.held_for as HeldFor;
  if (row.prune_at !== null) record.pruneAt = row.prune_at;
  if (row.failures > 0) record.failures = row.failures;
  if (row.cluster !== null) record.cluster = row.cluster;
  if (row.fact_at !== null) record.factAt = row.fact_at;
  if (row.runner_id !== null) record.runnerId = row.runner_id;
  if (row.check_code !== null) record.checkCode = row.check_code as DeletionCode;
  const names = namesOf(row);
  if (names) record.names = names;
  if (row.job_completed_at !== null) record.jobCompleted = { at: row.job_completed_at, conclusion: row.job_conclusion ?? "completed" };
  if (row.run_completed_at !== null) {
    record.runCompleted = { at: row.run_completed_at, conclusion: row.run_conclusion ?? "completed", attempt: row.run_completed_attempt ?? row.run_attempt };
  }
  if (state === "reaped" || state === "gone") record.closed = { outcome: state, at: new Date(row.decided_at ?? 0).toISOString(), reason: row.reason };
  return record;
}

function namesOf(row: Row): JobNames | undefined {
  const names: JobNames = {};
  if (row.workflow_name !== null) names.workflow = row.workflow_name;
  if (row.job_name !== null) names.job = row.job_name;
  if (row.head_branch !== null) names.branch = row.head_branch;
  if (row.run_url !== null) names.runUrl = row.run_url;
  return Object.keys(names).length > 0 ? names : undefined;
}

const COLUMNS = [
  "runner",
  "job_id",
  "repo",
  "run_id",
  "run_attempt",
  "installation_id",
  "started_at",
  "job_completed_at",
  "job_conclusion",
  "run_completed_at",
  "run_conclusion",
  "run_completed_attempt",
  "uid",
  "namespace",
  "checked_at",
  "state",
  "verdict",
  "reason",
  "verdict_key",
  "cause",
  "decided_at",
  "due_at",
  "story",
  "held_for",
  "cluster",
  "fact_at",
  "workflow_name",
  "job_name",
  "head_branch",
  "run_url",
  "prune_at",
  "failures",
  "runner_id",
  "check_code",
] as const;

/** The columns every read of rows selects, in Row's order (rowOf reads them by position). */
const SELECT = `SELECT id, ${COLUMNS.join(", ")} FROM runners`;

/** A row read as an array (Sql.rows): one object literal, so every row has the same shape. */
function rowOf(a: SqlStorageValue[]): Row {
  return {
    id: a[0] as number,
    runner: a[1] as Row["runner"],
    job_id: a[2] as Row["job_id"],
    repo: a[3] as Row["repo"],
    run_id: a[4] as Row["run_id"],
    run_attempt: a[5] as Row["run_attempt"],
    installation_id: a[6] as Row["installation_id"],
    started_at: a[7] as Row["started_at"],
    job_completed_at: a[8] as Row["job_completed_at"],
    job_conclusion: a[9] as Row["job_conclusion"],
    run_completed_at: a[10] as Row["run_completed_at"],
    run_conclusion: a[11] as Row["run_conclusion"],
    run_completed_attempt: a[12] as Row["run_completed_attempt"],
    uid: a[13] as Row["uid"],
    namespace: a[14] as Row["namespace"],
    checked_at: a[15] as Row["checked_at"],
    state: a[16] as Row["state"],
    verdict: a[17] as Row["verdict"],
    reason: a[18] as Row["reason"],
    verdict_key: a[19] as Row["verdict_key"],
    cause: a[20] as Row["cause"],
    decided_at: a[21] as Row["decided_at"],
    due_at: a[22] as Row["due_at"],
    story: a[23] as Row["story"],
    held_for: a[24] as Row["held_for"],
    cluster: a[25] as Row["cluster"],
    fact_at: a[26] as Row["fact_at"],
    workflow_name: a[27] as Row["workflow_name"],
    job_name: a[28] as Row["job_name"],
    head_branch: a[29] as Row["head_branch"],
    run_url: a[30] as Row["run_url"],
    prune_at: a[31] as Row["prune_at"],
    failures: a[32] as Row["failures"],
    runner_id: a[33] as Row["runner_id"],
    check_code: a[34] as Row["check_code"],
  };
}

/** The records of one SELECT over the runners (`where` and its bindings). */
function read(sql: Sql, where: string, ...bindings: SqlValue[]): RunnerRecord[] {
  return sql.rows(`${SELECT} ${where}`, ...bindings).map((a) => toRecord(rowOf(a)));
}

// Names and the runner id are only ever learned, never unlearned: a verdict written over a row keeps what a webhook added meanwhile.
const NAME_COLUMNS: readonly string[] = ["workflow_name", "job_name", "head_branch", "run_url", "runner_id"];

function values(r: RunnerRecord): (string | number | null)[] {
  return [
    r.runner,
    r.jobId,
    r.repo,
    r.runId,
    r.runAttempt,
    r.installationId ?? null,
    r.startedAt ?? null,
    r.jobCompleted?.at ?? null,
    r.jobCompleted?.conclusion ?? null,
    r.runCompleted?.at ?? null,
    r.runCompleted?.conclusion ?? null,
    r.runCompleted?.attempt ?? null,
    r.uid ?? null,
    r.namespace ?? null,
    r.checkedAt ?? null,
    r.state,
    r.verdict ?? null,
    r.reason,
    r.verdictKey ?? null,
    r.cause ?? null,
    r.decidedAt ?? null,
    r.dueAt,
    JSON.stringify(r.story),
    r.heldFor ?? null,
    r.cluster ?? null,
    r.factAt ?? null,
    r.names?.workflow ?? null,
    r.names?.job ?? null,
    r.names?.branch ?? null,
    r.names?.runUrl ?? null,
    r.pruneAt ?? null,
    r.failures ?? 0,
    r.runnerId ?? null,
    r.checkCode ?? null,
  ];
}

// What webhooks change: a verdict applies only to the facts it was made on.
const FACT_COLUMNS = ["state", "started_at", "job_completed_at", "job_conclusion", "run_completed_at", "run_conclusion", "run_completed_attempt"] as const;

const OPEN = `state IN ('${OPEN_STATES.join("','")}')`;

export class RunnersTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  byId(id: number): RunnerRecord | undefined {
    return read(this.sql, "WHERE id = ?", id)[0];
  }

  get(runner: string, jobId: number): RunnerRecord | undefined {
    return read(this.sql, "WHERE runner = ? AND job_id = ?", runner, jobId)[0];
  }

  /** Inserts or replaces the row of (runner, job): one row written. */
  put(record: RunnerRecord): void {
    const placeholders = COLUMNS.map(() => "?").join(", ");
    const updates = COLUMNS.filter((c) => c !== "runner" && c !== "job_id")
      .map((c) => `${c} = excluded.${c}`)
      .join(", ");
    this.sql.run(
      `INSERT INTO runners (${COLUMNS.join(", ")}) VALUES (${placeholders}) ON CONFLICT (runner, job_id) DO UPDATE SET ${updates}`,
      ...values(record),
    );
  }

  /**
   * Writes `next` over the row only if it is still open and holds the facts
   * `judged` had (one conditional UPDATE, no read); with `closing`, only if it
   * is still open. Answers whether the row was written.
   */
  update(next: RunnerRecord, judged: RunnerRecord, opts: { closing: boolean }): boolean {
    const sets = COLUMNS.filter((c) => c !== "runner" && c !== "job_id")
      .map((c) => (NAME_COLUMNS.includes(c) ? `${c} = COALESCE(?, ${c})` : `${c} = ?`))
      .join(", ");
    const nextValues = values(next).slice(2);
    const open = `id = ? AND ${OPEN}`;
    if (opts.closing) return this.sql.run(`UPDATE runners SET ${sets} WHERE ${open}`, ...nextValues, judged.id ?? -1) > 0;
    const j = values(judged);
    const factsSame = FACT_COLUMNS.map((c) => `${c} IS ?`).join(" AND ");
    return (
      this.sql.run(
        `UPDATE runners SET ${sets} WHERE ${open} AND ${factsSame}`,
        ...nextValues,
        judged.id ?? -1,
        ...FACT_COLUMNS.map((c) => j[COLUMNS.indexOf(c)]!),
      ) > 0
    );
  }

  /** Every open runner (running or finished). */
  open(): RunnerRecord[] {
    return read(this.sql, `WHERE ${OPEN}`);
  }

  /** Open runners due at or before `now`, earliest first. */
  due(now: number, limit: number): RunnerRecord[] {
    return read(this.sql, `WHERE ${OPEN} AND due_at <= ? ORDER BY due_at LIMIT ?`, now, limit);
  }

  /** Open runners of one run, for a run completion. */
  openOfRun(repo: string, runId: number): RunnerRecord[] {
    return read(this.sql, `WHERE repo = ? AND run_id = ? AND ${OPEN}`, repo, runId);
  }

  /** The earliest due time of any open runner. */
  nextDue(): number | null {
    // One indexed MIN per open state: two index seeks, however large the table.
    const dues = (["running", "finished"] as const)
      .map(
        (state) => this.sql.first<{ due: number | null }>("SELECT MIN(due_at) AS due FROM runners WHERE state = ? AND due_at IS NOT NULL", state)?.due ?? null,
      )
      .filter((d): d is number => d !== null);
    return dues.length > 0 ? Math.min(...dues) : null;
  }

  /** Lifts a hold: the open rows it held (in `cluster` only, and where no cluster is known, when given) get the look `next` (one UPDATE); answers how many. */
  release(hold: HeldFor, next: NextLook, cluster?: string): number {
    const where = cluster === undefined ? "" : " AND (cluster = ? OR cluster IS NULL)";
    const held = `held_for = ? AND ${OPEN}${where}`;
    const args = cluster === undefined ? [hold] : [hold, cluster];
    const n = Number(this.sql.first<{ n: number }>(`SELECT COUNT(*) AS n FROM runners WHERE ${held}`, ...args)?.n ?? 0);
    if (n > 0) this.sql.run(`UPDATE runners SET due_at = ?, held_for = NULL WHERE ${held}`, dueAtOf(next), ...args);
    return n;
  }

  /** Closed rows whose history time ran out are deleted. */
  prune(now: number): number {
    return this.sql.run(`DELETE FROM runners WHERE state IN ('reaped', 'gone') AND prune_at <= ?`, now);
  }

  countsByState(): Record<RunnerState, number> {
    const counts: Record<RunnerState, number> = { running: 0, finished: 0, failed: 0, stuck: 0, reaped: 0, gone: 0 };
    for (const row of this.sql.all<{ state: string; n: number }>("SELECT state, COUNT(*) AS n FROM runners GROUP BY state")) {
      counts[row.state as RunnerState] = row.n;
    }
    return counts;
  }

  /** A page of rows, newest first, filtered by state, repository and cluster in the store. */
  page(q: { state?: RunnerState; repo?: string; cluster?: string; before?: number; limit: number }): RunnerRecord[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (q.state) {
      where.push("state = ?");
      args.push(q.state);
    }
    if (q.repo) {
      where.push("repo = ?");
      args.push(q.repo);
    }
    // Rows from before clusters were recorded are the one cluster there was: "default".
    if (q.cluster) {
      where.push(q.cluster === "default" ? "(cluster = ? OR cluster IS NULL)" : "cluster = ?");
      args.push(q.cluster);
    }
    if (q.before !== undefined) {
      where.push("id < ?");
      args.push(q.before);
    }
    const clause = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    return read(this.sql, `${clause} ORDER BY id DESC LIMIT ?`, ...args, q.limit);
  }

  /** Every row of one runner name, newest first: its story across jobs. */
  byName(runner: string): RunnerRecord[] {
    return read(this.sql, "WHERE runner = ? ORDER BY id DESC", runner);
  }
}
