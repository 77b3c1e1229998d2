// Deletions we made, watched until their object goes (see schema migration 5).
import type { DeletionWatch } from "../model/runner.ts";
import type { Sql, SqlRow } from "./sql.ts";

interface Row extends SqlRow {
  row_id: number;
  name: string;
  cluster: string;
  namespace: string;
  uid: string;
  repo: string;
  job_id: number;
  installation_id: number | null;
  deleted_at: number;
  due_at: number;
  stuck_at: number | null;
  reason: string;
  finish_refused: string | null;
  run_id: number | null;
}

const toWatch = (r: Row): DeletionWatch => ({
  rowId: r.row_id,
  name: r.name,
  cluster: r.cluster,
  namespace: r.namespace,
  uid: r.uid,
  repo: r.repo,
  jobId: r.job_id,
  deletedAt: r.deleted_at,
  dueAt: r.due_at,
  reason: r.reason,
  ...(r.installation_id !== null ? { installationId: r.installation_id } : {}),
  ...(r.run_id !== null && r.run_id !== undefined ? { runId: Number(r.run_id) } : {}),
  ...(r.stuck_at !== null ? { stuckAt: r.stuck_at } : {}),
  ...(typeof r.finish_refused === "string" ? { finishRefused: r.finish_refused } : {}),
});

// The refusal beside the watch, and the run of its runner row (a job-0 row is asked about its run).
const WITH_REFUSAL = "d.*, f.why AS finish_refused, r.run_id AS run_id";
const JOINED = "deletions d LEFT JOIN finish_refusals f ON f.row_id = d.row_id LEFT JOIN runners r ON r.id = d.row_id";

export class DeletionsTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  put(w: DeletionWatch): void {
    this.sql.run(
      `INSERT OR REPLACE INTO deletions (row_id, name, cluster, namespace, uid, repo, job_id, installation_id, deleted_at, due_at, stuck_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      w.rowId,
      w.name,
      w.cluster,
      w.namespace,
      w.uid,
      w.repo,
      w.jobId,
      w.installationId ?? null,
      w.deletedAt,
      w.dueAt,
      w.stuckAt ?? null,
      w.reason,
    );
    // A finish refused (REAPER_FINISH_STUCK) is kept beside the row, in a table of its own.
    if (w.finishRefused) this.sql.run("INSERT OR REPLACE INTO finish_refusals (row_id, why) VALUES (?, ?)", w.rowId, w.finishRefused);
  }

  /** Every deletion still watched: those of the last REAPER_STUCK_SECONDS, and the stuck ones. */
  all(): DeletionWatch[] {
    return this.sql.all<Row>(`SELECT ${WITH_REFUSAL} FROM ${JOINED}`).map(toWatch);
  }

  due(now: number, limit: number): DeletionWatch[] {
    return this.sql.all<Row>(`SELECT ${WITH_REFUSAL} FROM ${JOINED} WHERE d.due_at <= ? ORDER BY d.due_at LIMIT ?`, now, limit).map(toWatch);
  }

  remove(rowId: number): void {
    this.sql.run("DELETE FROM deletions WHERE row_id = ?", rowId);
    this.sql.run("DELETE FROM finish_refusals WHERE row_id = ?", rowId);
  }

  nextDue(): number | null {
    return this.sql.first<{ due: number | null }>("SELECT MIN(due_at) AS due FROM deletions")?.due ?? null;
  }
}
