// Monotonic counters for /metrics, counted in the ledger so that every isolate
// adds to the same number. Labels are a sorted JSON object.
import type { Sql } from "./sql.ts";

export interface CounterSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export class CountersTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  add(name: string, labels: Record<string, string> = {}, by = 1): void {
    if (by === 0) return;
    const key = JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))));
    this.sql.run(
      "INSERT INTO counters (name, labels, value) VALUES (?, ?, ?) ON CONFLICT (name, labels) DO UPDATE SET value = value + excluded.value",
      name,
      key,
      by,
    );
  }

  all(): CounterSample[] {
    return this.sql
      .all<{ name: string; labels: string; value: number }>("SELECT name, labels, value FROM counters ORDER BY name, labels")
      .map((r) => ({ name: r.name, labels: JSON.parse(r.labels) as Record<string, string>, value: r.value }));
  }
}
