// The runners table: reads and writes of RunnerRecords. Open rows are read by
// state and due time (an index); closed rows only by the admin listing and the
// pruning, so a sweep's cost follows the live runners, never the history.
import type { DeletionCode } from "../model/deletion-codes.ts";
import type { JobNames } from "../model/facts.ts";
import type { DeleteCause, HeldFor, VerdictKind } from "../model/verdict.ts";
import { dueAtOf, type NextLook } from "../model/next-look.ts";
import { OPEN_STATES, type RunnerRecord, type RunnerState, type StoryEntry } from "../model/runner.ts";
import type { Sql, SqlValue } from "./sql.ts";

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/**
 * What every read of rows selects, by position (recordOf): every column a judgement or a write needs
 * first, then the story and the names (shown, never judged on), which the sweep's read leaves out.
 */
const JUDGED = [
  "id",
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
  "held_for",
  "cluster",
  "fact_at",
  "prune_at",
  "failures",
  "runner_id",
  "check_code",
] as const;
const SHOWN = ["story", "workflow_name", "job_name", "head_branch", "run_url"] as const;

const SELECT_WHOLE = `SELECT ${[...JUDGED, ...SHOWN].join(", ")} FROM runners`;
const SELECT_JUDGED = `SELECT ${JUDGED.join(", ")} FROM runners`;

/**
 * A row read as an array (Sql.rows), straight into its record (one object, the same shape for every
 * row). Read without its story and names (`whole` false), it says so: storyUnread.
 */
function recordOf(a: SqlStorageValue[], whole: boolean): RunnerRecord {
  const state = a[16] as RunnerState;
  const runAttempt = a[5] as number;
  const decidedAt = a[21] as number | null;
  const reason = a[18] as string;
  const record: RunnerRecord = {
    id: a[0] as number,
    runner: a[1] as string,
    repo: a[3] as string,
    runId: a[4] as number,
    runAttempt,
    jobId: a[2] as number,
    startedAt: opt(a[7] as string | null),
    installationId: opt(a[6] as number | null),
    uid: opt(a[13] as string | null),
    namespace: opt(a[14] as string | null),
    checkedAt: opt(a[15] as number | null),
    state,
    verdict: opt(a[17] as VerdictKind | null),
    reason,
    verdictKey: opt(a[19] as string | null),
    cause: opt(a[20] as DeleteCause | null),
    decidedAt: opt(decidedAt),
    dueAt: a[22] as number | null,
    story: whole ? (JSON.parse(a[JUDGED.length] as string) as StoryEntry[]) : [],
  };
  if (a[23] !== null) record.heldFor = a[23] as HeldFor;
  if (a[26] !== null) record.pruneAt = a[26] as number;
  if ((a[27] as number) > 0) record.failures = a[27] as number;
  if (a[24] !== null) record.cluster = a[24] as string;
  if (a[25] !== null) record.factAt = a[25] as number;
  if (a[28] !== null) record.runnerId = a[28] as number;
  if (a[29] !== null) record.checkCode = a[29] as DeletionCode;
  if (whole) {
    const names = namesOf(a);
    if (names) record.names = names;
  } else record.storyUnread = true;
  if (a[8] !== null) record.jobCompleted = { at: a[8] as string, conclusion: (a[9] as string | null) ?? "completed" };
  if (a[10] !== null) {
    record.runCompleted = { at: a[10] as string, conclusion: (a[11] as string | null) ?? "completed", attempt: (a[12] as number | null) ?? runAttempt };
  }
  if (state === "reaped" || state === "gone") record.closed = { outcome: state, at: new Date(decidedAt ?? 0).toISOString(), reason };
  return record;
}

/** The names in the four columns from `at` (workflow, job, branch, run URL). */
function namesOf(a: SqlStorageValue[], at = JUDGED.length + 1): JobNames | undefined {
  const names: JobNames = {};
  if (a[at] !== null) names.workflow = a[at] as string;
  if (a[at + 1] !== null) names.job = a[at + 1] as string;
  if (a[at + 2] !== null) names.branch = a[at + 2] as string;
  if (a[at + 3] !== null) names.runUrl = a[at + 3] as string;
  return Object.keys(names).length > 0 ? names : undefined;
}

/** What a write sets, in values()' order: every column a read selects but the id. */
const COLUMNS = [...JUDGED.slice(1), ...SHOWN];

/** The records of one SELECT over the runners (`where` and its bindings), whole. */
function read(sql: Sql, where: string, ...bindings: SqlValue[]): RunnerRecord[] {
  return sql.rows(`${SELECT_WHOLE} ${where}`, ...bindings).map((a) => recordOf(a, true));
}

// Names and the runner id are only ever learned, never unlearned: a verdict written over a row keeps what a webhook added meanwhile.
const NAME_COLUMNS: readonly string[] = ["workflow_name", "job_name", "head_branch", "run_url", "runner_id"];

/** A record as a write binds it, column for column in COLUMNS. */
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
    r.heldFor ?? null,
    r.cluster ?? null,
    r.factAt ?? null,
    r.pruneAt ?? null,
    r.failures ?? 0,
    r.runnerId ?? null,
    r.checkCode ?? null,
    JSON.stringify(r.story),
    r.names?.workflow ?? null,
    r.names?.job ?? null,
    r.names?.branch ?? null,
    r.names?.runUrl ?? null,
  ];
}

// What webhooks change: a verdict applies only to the facts it was made on.
const FACT_COLUMNS = ["state", "started_at", "job_completed_at", "job_conclusion", "run_completed_at", "run_conclusion", "run_completed_attempt"] as const;

const WHOLE_BATCH = 100;

/** A record read without its story must never be written: its empty story would replace the row's. */
function unreadGuard(r: RunnerRecord): void {
  if (r.storyUnread) throw new Error(`runner ${r.runner} (job ${r.jobId}) was read without its story: it is written only once read whole (RunnersTable.whole)`);
}

const OPEN = `state IN ('${OPEN_STATES.join("','")}')`;

// The write statements, built once: a first sweep writes every open row (50,000 in the bench).
const KEY = ["runner", "job_id"];
const SET_BY_WRITE = COLUMNS.filter((c) => !KEY.includes(c));
const PUT = `INSERT INTO runners (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")}) ON CONFLICT (runner, job_id) DO UPDATE SET ${SET_BY_WRITE.map((c) => `${c} = excluded.${c}`).join(", ")}`;
const UPDATE_IF_OPEN = `UPDATE runners SET ${SET_BY_WRITE.map((c) => (NAME_COLUMNS.includes(c) ? `${c} = COALESCE(?, ${c})` : `${c} = ?`)).join(", ")} WHERE id = ? AND ${OPEN}`;
const UPDATE_IF_OPEN_AND_FACTS_SAME = `${UPDATE_IF_OPEN} AND ${FACT_COLUMNS.map((c) => `${c} IS ?`).join(" AND ")}`;
/** Where each fact column sits in values(). */
const FACT_AT = FACT_COLUMNS.map((c) => COLUMNS.indexOf(c));

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
    unreadGuard(record);
    this.sql.run(PUT, ...values(record));
  }

  /**
   * Writes `next` over the row only if it is still open and holds the facts
   * `judged` had (one conditional UPDATE, no read); with `closing`, only if it
   * is still open. Answers whether the row was written.
   */
  update(next: RunnerRecord, judged: RunnerRecord, opts: { closing: boolean }): boolean {
    unreadGuard(next);
    unreadGuard(judged);
    const nextValues = values(next).slice(2);
    if (opts.closing) return this.sql.run(UPDATE_IF_OPEN, ...nextValues, judged.id ?? -1) > 0;
    const j = values(judged);
    return this.sql.run(UPDATE_IF_OPEN_AND_FACTS_SAME, ...nextValues, judged.id ?? -1, ...FACT_AT.map((i) => j[i]!)) > 0;
  }

  /** Every open runner (running or finished). */
  open(): RunnerRecord[] {
    return read(this.sql, `WHERE ${OPEN}`);
  }

  /**
   * Every open runner as a judgement needs it: without its story and names (storyUnread), which are
   * most of a row's bytes and its one JSON parse, and which only a write of the row needs (whole).
   */
  openToJudge(): RunnerRecord[] {
    return this.sql.rows(`${SELECT_JUDGED} WHERE ${OPEN}`).map((a) => recordOf(a, false));
  }

  /**
   * Records read for judging, made whole: each as it was read, with the story and names its row holds
   * now (one statement for all); undefined where the row is gone. Whole records come back as they are.
   */
  whole(records: readonly RunnerRecord[]): (RunnerRecord | undefined)[] {
    const ids = records.flatMap((r) => (r.storyUnread && r.id !== undefined ? [r.id] : []));
    const shown = new Map<number, SqlStorageValue[]>();
    // 100 ids a statement: a Durable Object's SQL binds at most 100 values (and json_each counted 3 rows read per row).
    for (let i = 0; i < ids.length; i += WHOLE_BATCH) {
      const batch = ids.slice(i, i + WHOLE_BATCH);
      const rows = this.sql.rows(`SELECT id, ${SHOWN.join(", ")} FROM runners WHERE id IN (${batch.map(() => "?").join(", ")})`, ...batch);
      for (const a of rows) shown.set(a[0] as number, a);
    }
    return records.map((r) => {
      if (!r.storyUnread) return r;
      const a = r.id === undefined ? undefined : shown.get(r.id);
      if (!a) return undefined;
      const { storyUnread: _, ...judged } = r;
      const record: RunnerRecord = { ...judged, story: JSON.parse(a[1] as string) as StoryEntry[] };
      const names = namesOf(a, 2);
      if (names) record.names = names;
      return record;
    });
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
