// The ledger's schema moves only forward: migrate() brings an older ledger up
// to the code's version, leaves a current one alone, and refuses one newer than
// the code (a rollback past a schema change), touching nothing.
import { describe, expect, it } from "vitest";
import { migrate, SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { nodeSql } from "../support/node-sql.ts";

const version = (db: ReturnType<typeof nodeSql>["db"]) =>
  (db.prepare("SELECT version FROM schema_version").all() as { version: number }[]).map((r) => r.version);
const tables = (db: ReturnType<typeof nodeSql>["db"]) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);

describe("migrate", () => {
  it("brings an empty ledger to the code's version, and a current one is left alone", () => {
    const { sql, db } = nodeSql();
    migrate(sql);
    expect(version(db)).toEqual([SCHEMA_VERSION]);
    expect(tables(db)).toEqual(expect.arrayContaining(["runners", "memory", "counters"]));
    const written = sql.cost.rowsWritten;
    migrate(sql);
    expect(version(db)).toEqual([SCHEMA_VERSION]);
    expect(sql.cost.rowsWritten).toBe(written);
  });

  it("refuses a ledger whose schema is newer than the code's, naming both versions, and changes nothing", () => {
    const { sql, db } = nodeSql();
    db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
    db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(SCHEMA_VERSION + 1);
    expect(() => migrate(sql)).toThrow(`the stored schema is version ${SCHEMA_VERSION + 1}, newer than this code's ${SCHEMA_VERSION}: roll forward`);
    expect(version(db)).toEqual([SCHEMA_VERSION + 1]);
    expect(tables(db)).toEqual(["schema_version"]);
  });
});
