// A backup written into an empty ledger, all or nothing: the emptiness check, the tables rebuilt
// at the backup's schema version, its rows, then the migrations since, in one transaction. A
// refusal names what is wrong with a reason code and writes nothing.
import { BACKED_UP, FACT_TABLES, leftOutMemoryKey } from "./backup-tables.ts";
import type { BackupHeader, BackupTable } from "./backup-format.ts";
import { migrate, SCHEMA_VERSION } from "./schema.ts";
import type { Sql } from "./sql.ts";

type RestoreRefusalReason = "NewerSchema" | "UnknownTable" | "UnknownColumn" | "NotEmpty";

export type RestoreOutcome =
  | { ok: true; schemaVersion: number; migratedTo: number; rows: Record<string, number> }
  | { ok: false; reason: RestoreRefusalReason; message: string };

class Refused extends Error {
  readonly reason: RestoreRefusalReason;
  constructor(reason: RestoreRefusalReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** `transaction`: the Durable Object's transactionSync (a thrown error rolls every write back). */
export function restoreBackup(sql: Sql, transaction: <T>(run: () => T) => T, backup: { header: BackupHeader; tables: BackupTable[] }): RestoreOutcome {
  const version = backup.header.schemaVersion;
  if (version > SCHEMA_VERSION) {
    return {
      ok: false,
      reason: "NewerSchema",
      message: `the backup's schema is version ${version}, newer than this code's ${SCHEMA_VERSION}: restore it with its release or a newer one`,
    };
  }
  const known = new Set<string>(BACKED_UP);
  const unknown = backup.tables.find((t) => !known.has(t.name));
  if (unknown) return { ok: false, reason: "UnknownTable", message: `the backup holds table ${unknown.name}, which a backup never holds` };
  try {
    return transaction(() => {
      const held = FACT_TABLES.map((t) => ({ t, n: Number(sql.first<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t}`)?.n ?? 0) })).filter((c) => c.n > 0);
      if (held.length > 0) {
        throw new Refused(
          "NotEmpty",
          `the ledger is not empty (${held.map((c) => `${c.t}: ${c.n} rows`).join(", ")}): restore into a ledger of a new LEDGER_NAME`,
        );
      }
      const kept = sql.all<{ key: string; value: string }>("SELECT key, value FROM memory").filter((r) => leftOutMemoryKey(r.key));
      const tables = sql.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'");
      for (const { name } of tables) sql.run(`DROP TABLE "${name}"`);
      migrate(sql, version);
      const rows: Record<string, number> = {};
      for (const name of BACKED_UP) {
        const table = backup.tables.find((t) => t.name === name);
        if (!table) continue;
        const columns = new Set(sql.table(`SELECT * FROM ${name} LIMIT 0`).columns);
        const missing = table.columns.find((c) => !columns.has(c));
        if (missing !== undefined) throw new Refused("UnknownColumn", `table ${name} has no column ${missing} at schema version ${version}`);
        const insert = `INSERT INTO ${name} (${table.columns.join(", ")}) VALUES (${table.columns.map(() => "?").join(", ")})`;
        const keyAt = table.columns.indexOf("key");
        let n = 0;
        for (const row of table.rows) {
          if (name === "memory" && leftOutMemoryKey(String(row[keyAt]))) continue;
          sql.run(insert, ...row);
          n++;
        }
        rows[name] = n;
      }
      for (const r of kept) sql.run("INSERT INTO memory (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", r.key, r.value);
      migrate(sql);
      return { ok: true as const, schemaVersion: version, migratedTo: SCHEMA_VERSION, rows };
    });
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.reason, message: e.message };
    throw e;
  }
}
