// Busy runners no webhook told us about, by name and uid: when they were first
// seen busy, and when they are next due to be asked about (the end of the wait
// for a webhook, then a back-off when GitHub could not place them).
import type { Sql, SqlRow } from "./sql.ts";

export interface UnseenRunner {
  name: string;
  uid: string;
  namespace: string;
  runId: number;
  repo: string | null;
  firstSeen: number;
  dueAt: number | null;
  reason: string;
}

interface Row extends SqlRow {
  name: string;
  uid: string;
  namespace: string;
  run_id: number;
  repo: string | null;
  first_seen: number;
  due_at: number | null;
  reason: string;
}

const toUnseen = (r: Row): UnseenRunner => ({
  name: r.name,
  uid: r.uid,
  namespace: r.namespace,
  runId: r.run_id,
  repo: r.repo,
  firstSeen: r.first_seen,
  dueAt: r.due_at,
  reason: r.reason,
});

export class UnseenTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  all(): UnseenRunner[] {
    return this.sql.all<Row>("SELECT * FROM unseen").map(toUnseen);
  }

  due(now: number, limit: number): UnseenRunner[] {
    return this.sql.all<Row>("SELECT * FROM unseen WHERE due_at <= ? ORDER BY due_at LIMIT ?", now, limit).map(toUnseen);
  }

  put(u: UnseenRunner): void {
    this.sql.run(
      `INSERT INTO unseen (name, uid, namespace, run_id, repo, first_seen, due_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (name, uid) DO UPDATE SET namespace = excluded.namespace, run_id = excluded.run_id, repo = excluded.repo,
       due_at = excluded.due_at, reason = excluded.reason`,
      u.name, u.uid, u.namespace, u.runId, u.repo, u.firstSeen, u.dueAt, u.reason,
    );
  }

  remove(name: string, uid: string): void {
    this.sql.run("DELETE FROM unseen WHERE name = ? AND uid = ?", name, uid);
  }

  nextDue(): number | null {
    return this.sql.first<{ due: number | null }>("SELECT MIN(due_at) AS due FROM unseen")?.due ?? null;
  }
}
