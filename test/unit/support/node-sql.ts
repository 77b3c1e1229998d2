// The Durable Object's SqlStorage, as much of it as the ledger's Sql uses, over
// Node's own SQLite (node:sqlite): ledger code that only needs SQL runs in the
// unit project (and under Stryker), not only in workerd.
import { DatabaseSync } from "node:sqlite";
import { Sql } from "../../../src/ledger/sql.ts";

type Value = string | number | null;

export function nodeSql(): { sql: Sql; db: DatabaseSync } {
  const db = new DatabaseSync(":memory:");
  const storage = {
    exec(query: string, ...bindings: Value[]) {
      const statement = db.prepare(query);
      const before = Number((db.prepare("SELECT total_changes() AS n").get() as { n: number }).n);
      const rows = statement.all(...bindings) as Record<string, Value>[];
      const written = Number((db.prepare("SELECT total_changes() AS n").get() as { n: number }).n) - before;
      return {
        rowsRead: rows.length,
        rowsWritten: written,
        columnNames: statement.columns().map((c) => c.name),
        toArray: () => rows,
        raw: () => rows.map((r) => Object.values(r)),
        [Symbol.iterator]: () => rows[Symbol.iterator](),
      };
    },
  };
  return { sql: new Sql(storage as unknown as SqlStorage), db };
}
