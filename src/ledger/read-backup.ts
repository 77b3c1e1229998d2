// The ledger read whole for a backup, in one synchronous call: a Durable Object runs one event's
// JavaScript at a time and its SQL API is synchronous, so no delivery, alarm or sweep writes
// between the first table read and the last; the copy is of one state (docs/design.md, "Backup").
import { BACKED_UP, leftOutMemoryKey } from "./backup-tables.ts";
import type { BackupContent, BackupValue } from "./backup-format.ts";
import type { Sql } from "./sql.ts";

export function readBackup(sql: Sql): BackupContent {
  const schemaVersion = Number(sql.first<{ version: number }>("SELECT version FROM schema_version")?.version ?? 0);
  const tables = BACKED_UP.map((name) => {
    const { columns, rows } = sql.table(`SELECT * FROM ${name}`);
    for (const row of rows) {
      for (const value of row) {
        if (value instanceof ArrayBuffer) throw new Error(`arc-reaper ledger backup: table ${name} holds a blob, which no column of the schema stores`);
      }
    }
    const kept = name === "memory" ? rows.filter((row) => !leftOutMemoryKey(String(row[columns.indexOf("key")]))) : rows;
    return { name, columns, rows: kept as BackupValue[][] };
  });
  return { schemaVersion, tables };
}
