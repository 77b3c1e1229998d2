// Runners ARC marked Failed (schema migration "failed_runners"): open while they
// hold a slot (state failed), closed (reaped, gone) and pruned REAPER_HISTORY_DAYS later.
import type { FailedRunner, FailedStoryEntry } from "../model/failed.ts";
import { scaleSetKey } from "../model/failed.ts";
import type { Sql, SqlRow } from "./sql.ts";

interface Row extends SqlRow {
  id: number;
  cluster: string;
  namespace: string;
  name: string;
  uid: string;
  scale_set: string | null;
  arc_reason: string | null;
  arc_message: string | null;
  failed_at: number;
  first_seen: number;
  created_at: number | null;
  run_id: number | null;
  state: string;
  reason: string;
  deleted_at: number | null;
  closed_at: number | null;
  story: string;
  /** From failed_delete_backoff, where the query joins it (open rows); absent elsewhere. */
  delete_failures: number | null;
  retry_at: number | null;
}

const toFailed = (r: Row): FailedRunner => ({
  id: r.id,
  cluster: r.cluster,
  namespace: r.namespace,
  name: r.name,
  uid: r.uid,
  failedAt: r.failed_at,
  firstSeen: r.first_seen,
  state: r.state as FailedRunner["state"],
  reason: r.reason,
  story: JSON.parse(r.story) as FailedStoryEntry[],
  ...(r.scale_set !== null ? { scaleSet: r.scale_set } : {}),
  ...(r.arc_reason !== null ? { arcReason: r.arc_reason } : {}),
  ...(r.arc_message !== null ? { arcMessage: r.arc_message } : {}),
  ...(r.created_at !== null ? { createdAt: r.created_at } : {}),
  ...(r.run_id !== null ? { runId: r.run_id } : {}),
  ...(r.deleted_at !== null ? { deletedAt: r.deleted_at } : {}),
  ...(r.closed_at !== null ? { closedAt: r.closed_at } : {}),
  ...(typeof r.delete_failures === "number" && typeof r.retry_at === "number" ? { deleteFailures: r.delete_failures, retryAt: r.retry_at } : {}),
});

/** A story keeps its last entries only: a runner failing for days must not grow its row without end. */
const MAX_STORY = 20;

export class FailedTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Every runner that holds a slot now (state failed). */
  open(): FailedRunner[] {
    return this.sql
      .all<Row>(
        `SELECT f.*, b.failures AS delete_failures, b.retry_at FROM failed_runners f LEFT JOIN failed_delete_backoff b ON b.row_id = f.id
         WHERE f.state = 'failed' ORDER BY f.id`,
      )
      .map(toFailed);
  }

  put(f: FailedRunner): void {
    const story = JSON.stringify(f.story.slice(-MAX_STORY));
    const stored = this.sql.first<{ id: number }>(
      `INSERT INTO failed_runners (cluster, namespace, name, uid, scale_set, arc_reason, arc_message, failed_at, first_seen, created_at, run_id, state, reason, deleted_at, closed_at, story)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (cluster, namespace, name, uid) DO UPDATE SET scale_set = excluded.scale_set, arc_reason = excluded.arc_reason, arc_message = excluded.arc_message,
         failed_at = excluded.failed_at, created_at = excluded.created_at, run_id = excluded.run_id, state = excluded.state, reason = excluded.reason,
         deleted_at = excluded.deleted_at, closed_at = excluded.closed_at, story = excluded.story
       RETURNING id`,
      f.cluster,
      f.namespace,
      f.name,
      f.uid,
      f.scaleSet ?? null,
      f.arcReason ?? null,
      f.arcMessage ?? null,
      f.failedAt,
      f.firstSeen,
      f.createdAt ?? null,
      f.runId ?? null,
      f.state,
      f.reason,
      f.deletedAt ?? null,
      f.closedAt ?? null,
      story,
    );
    const id = stored?.id ?? f.id;
    if (id === undefined) return;
    // A back-off lives while the row is open and its last DELETE failed; one that ended (0) or a close drops it.
    if (f.state === "failed" && f.deleteFailures && f.retryAt !== undefined)
      this.sql.run("INSERT OR REPLACE INTO failed_delete_backoff (row_id, failures, retry_at) VALUES (?, ?, ?)", id, f.deleteFailures, f.retryAt);
    else if (f.deleteFailures !== undefined || f.state !== "failed") this.sql.run("DELETE FROM failed_delete_backoff WHERE row_id = ?", id);
  }

  /** A page of one state, newest first (id below `before`), for the admin listing. */
  page(state: FailedRunner["state"] | undefined, cluster: string | undefined, before: number | undefined, limit: number): FailedRunner[] {
    return this.sql
      .all<Row>(
        `SELECT * FROM failed_runners WHERE (? IS NULL OR state = ?) AND (? IS NULL OR cluster = ?) AND (? IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
        state ?? null,
        state ?? null,
        cluster ?? null,
        cluster ?? null,
        before ?? null,
        before ?? null,
        limit,
      )
      .map(toFailed);
  }

  byName(name: string): FailedRunner[] {
    return this.sql.all<Row>("SELECT * FROM failed_runners WHERE name = ? ORDER BY id", name).map(toFailed);
  }

  count(state: FailedRunner["state"]): number {
    return Number(this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM failed_runners WHERE state = ?", state)?.n ?? 0);
  }

  /** Runners holding slots now, per (cluster, namespace, scale set): arc_reaper_failed_runners. */
  perScaleSet(): { cluster: string; namespace: string; scaleSet: string; n: number }[] {
    return this.sql
      .all<{ cluster: string; namespace: string; scale_set: string | null; n: number }>(
        "SELECT cluster, namespace, scale_set, COUNT(*) AS n FROM failed_runners WHERE state = 'failed' GROUP BY cluster, namespace, scale_set ORDER BY cluster, namespace, scale_set",
      )
      .map((r) => ({ cluster: r.cluster, namespace: r.namespace, scaleSet: r.scale_set ?? "", n: Number(r.n) }));
  }

  /**
   * Failed runners we deleted since `since` (ms), counted per (cluster, namespace, scale set) in one
   * statement: replacements that keep failing. The partial index on deleted_at reads only those deletions,
   * never the rest of the history.
   */
  deletedSince(since: number): Map<string, number> {
    const rows = this.sql.all<{ cluster: string; namespace: string; scale_set: string | null; n: number }>(
      "SELECT cluster, namespace, scale_set, COUNT(*) AS n FROM failed_runners WHERE deleted_at >= ? GROUP BY cluster, namespace, scale_set",
      since,
    );
    return new Map(rows.map((r) => [scaleSetKey(r.cluster, r.namespace, r.scale_set ?? undefined), Number(r.n)]));
  }

  /** Closed rows older than the history: removed. */
  prune(before: number): number {
    return this.sql.run("DELETE FROM failed_runners WHERE state != 'failed' AND closed_at < ?", before);
  }
}
