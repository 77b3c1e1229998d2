// Busy runners no webhook told us about, by name and uid: when they were first
// seen busy, and when they are next due to be asked about (the end of the wait
// for a webhook, then a back-off when GitHub could not place them).
import type { UnseenRunner } from "../model/runner.ts";
import type { HeldFor } from "../model/verdict.ts";
import { dueAtOf, type NextLook } from "../model/next-look.ts";
import type { Sql, SqlRow } from "./sql.ts";

export type { UnseenRunner };

interface Row extends SqlRow {
  name: string;
  uid: string;
  namespace: string;
  run_id: number;
  repo: string | null;
  first_seen: number;
  due_at: number | null;
  /** Never judged: null (stored as '', the column's default and what rows from before hold). */
  reason: string | null;
  held_for: string | null;
  cluster: string | null;
  failures: number;
  verdict_key: string | null;
}

const toUnseen = (r: Row): UnseenRunner => ({
  ...(r.cluster !== null ? { cluster: r.cluster } : {}),
  ...(r.held_for !== null ? { heldFor: r.held_for as HeldFor } : {}),
  name: r.name,
  uid: r.uid,
  namespace: r.namespace,
  runId: r.run_id,
  repo: r.repo,
  firstSeen: r.first_seen,
  dueAt: r.due_at,
  reason: r.reason,
  ...(r.failures > 0 ? { failures: r.failures } : {}),
  ...(r.verdict_key !== null ? { verdictKey: r.verdict_key } : {}),
});

/** Row's columns in order: a sweep reads every unseen row (Sql.rows, then one object literal each). */
const SELECT =
  "SELECT name, uid, namespace, run_id, repo, first_seen, due_at, NULLIF(reason, '') AS reason, held_for, cluster, failures, verdict_key FROM unseen";
const unseenRow = (a: SqlStorageValue[]): Row => ({
  name: a[0] as string,
  uid: a[1] as string,
  namespace: a[2] as string,
  run_id: a[3] as number,
  repo: a[4] as string | null,
  first_seen: a[5] as number,
  due_at: a[6] as number | null,
  reason: a[7] as string | null,
  held_for: a[8] as string | null,
  cluster: a[9] as string | null,
  failures: a[10] as number,
  verdict_key: a[11] as string | null,
});

export class UnseenTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  all(): UnseenRunner[] {
    return this.sql.rows(SELECT).map((a) => toUnseen(unseenRow(a)));
  }

  due(now: number, limit: number): UnseenRunner[] {
    return this.sql.rows(`${SELECT} WHERE due_at <= ? ORDER BY due_at LIMIT ?`, now, limit).map((a) => toUnseen(unseenRow(a)));
  }

  put(u: UnseenRunner): void {
    this.sql.run(
      `INSERT INTO unseen (name, uid, namespace, run_id, repo, first_seen, due_at, reason, held_for, cluster, failures, verdict_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (name, uid) DO UPDATE SET namespace = excluded.namespace, run_id = excluded.run_id, repo = excluded.repo,
       due_at = excluded.due_at, reason = excluded.reason, held_for = excluded.held_for, cluster = excluded.cluster, failures = excluded.failures,
       verdict_key = excluded.verdict_key`,
      u.name,
      u.uid,
      u.namespace,
      u.runId,
      u.repo,
      u.firstSeen,
      u.dueAt,
      u.reason ?? "",
      u.heldFor ?? null,
      u.cluster ?? null,
      u.failures ?? 0,
      u.verdictKey ?? null,
    );
  }

  remove(name: string, uid: string): void {
    this.sql.run("DELETE FROM unseen WHERE name = ? AND uid = ?", name, uid);
  }

  /** A fact named this runner: whatever was remembered of it unseen is over. */
  removeName(name: string): void {
    this.sql.run("DELETE FROM unseen WHERE name = ?", name);
  }

  /** Lifts a hold: the rows it held (in `cluster` only, and where no cluster is known, when given) get the look `next` (one UPDATE). */
  release(hold: HeldFor, next: NextLook, cluster?: string): number {
    const held = cluster === undefined ? "held_for = ?" : "held_for = ? AND (cluster = ? OR cluster IS NULL)";
    const args = cluster === undefined ? [hold] : [hold, cluster];
    const n = Number(this.sql.first<{ n: number }>(`SELECT COUNT(*) AS n FROM unseen WHERE ${held}`, ...args)?.n ?? 0);
    if (n > 0) this.sql.run(`UPDATE unseen SET due_at = ?, held_for = NULL WHERE ${held}`, dueAtOf(next), ...args);
    return n;
  }

  nextDue(): number | null {
    return this.sql.first<{ due: number | null }>("SELECT MIN(due_at) AS due FROM unseen")?.due ?? null;
  }
}
