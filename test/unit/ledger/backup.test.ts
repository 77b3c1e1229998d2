// A ledger backup and its restore on Node's SQLite: every table is backed up or left out on
// purpose, nothing secret leaves, a round trip gives the same rows, an older backup is migrated
// after it is written, and each refusal names what is wrong and writes nothing.
import { describe, expect, it } from "vitest";
import { decodeBackup, encodeBackup, type BackupContent } from "../../../src/ledger/backup-format.ts";
import { BACKED_UP, LEFT_OUT } from "../../../src/ledger/backup-tables.ts";
import { readBackup } from "../../../src/ledger/read-backup.ts";
import { restoreBackup } from "../../../src/ledger/restore-backup.ts";
import { migrate, SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { nodeSql } from "../support/node-sql.ts";

type Db = ReturnType<typeof nodeSql>["db"];

function ledger(upTo = SCHEMA_VERSION) {
  const made = nodeSql();
  migrate(made.sql, upTo);
  const transaction = <T>(run: () => T): T => {
    made.db.exec("BEGIN");
    try {
      const result = run();
      made.db.exec("COMMIT");
      return result;
    } catch (e) {
      made.db.exec("ROLLBACK");
      throw e;
    }
  };
  return { ...made, transaction };
}

const tables = (db: Db) => (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
const dump = (db: Db, table: string) =>
  db
    .prepare(`SELECT * FROM ${table}`)
    .all()
    .map((r) => JSON.stringify(r))
    .sort();

const SECRET_HASH = "5e0f1ad2b6c84c2e9d7a11b3f1a4c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a39";

function seed(db: Db): void {
  db.exec(`INSERT INTO runners (runner, job_id, repo, run_id, run_attempt, installation_id, started_at, uid, namespace, state, reason, due_at, story)
    VALUES ('arc-a', 11, 'o/r', 5, 1, 42, '2026-12-07T10:00:00Z', 'uid-a', 'arc-runners', 'running', 'job still running', 1765100000000, '[{"at":1,"what":"started"}]'),
           ('arc-b', 12, 'o/r', 5, 1, 42, '2026-12-07T10:00:00Z', 'uid-b', 'arc-runners', 'reaped', 'run completed', NULL, '[]')`);
  db.exec(`INSERT INTO runs (repo, run_id, run_attempt, updated_at, conclusion, source) VALUES ('o/r', 5, 1, '2026-12-07T10:05:00Z', 'success', 'webhook')`);
  db.exec(`INSERT INTO deliveries_received (guid, at) VALUES ('72d3162e-cc78-11e3-81ab-000000000001', 1765100000000)`);
  db.exec(`INSERT INTO hourly_outcomes (hour, outcome, bucket, why, n) VALUES (490305, 'reaped', 120, '', 3)`);
  db.exec(`INSERT INTO counters (name, labels, value) VALUES ('arc_reaper_deletions_total', '{"result":"deleted"}', 7)`);
  db.exec(`INSERT INTO memory (key, value) VALUES ('installation/o/r', '42'), ('agent-conn:default', '"conn-1"'), ('paused', '{"since":"x","by":"bearer"}')`);
  db.exec(`INSERT INTO sessions (id_hash, token_hash, created_at, expires_at) VALUES ('${SECRET_HASH}', '${SECRET_HASH}', 1, 2)`);
  db.exec(`INSERT INTO login_failures (client, at) VALUES ('203.0.113.9', 1)`);
}

async function backupText(content: BackupContent): Promise<string> {
  const chunks = await encodeBackup(content, new Date("2026-12-07T12:00:00Z"), LEFT_OUT);
  return new TextDecoder().decode(Buffer.concat(chunks));
}

async function decoded(text: string) {
  const d = await decodeBackup(text);
  if (!d.ok) throw new Error(`${d.reason}: ${d.message}`);
  return d;
}

/** A text whose body was changed and whose first line was made to match again (its size and SHA-256). */
async function resealed(text: string, change: (body: string, header: Record<string, unknown>) => string): Promise<string> {
  const newline = text.indexOf("\n");
  const header = JSON.parse(text.slice(0, newline)) as Record<string, unknown>;
  const body = change(text.slice(newline + 1), header);
  const bytes = new TextEncoder().encode(body);
  const digest = Buffer.from(await crypto.subtle.digest("SHA-256", bytes)).toString("hex");
  return `${JSON.stringify({ ...header, bytes: bytes.byteLength, sha256: digest })}\n${body}`;
}

describe("a ledger backup", () => {
  it("backs up or leaves out, with a reason, every table a ledger has", () => {
    const { db } = ledger();
    const decided = new Set<string>([...BACKED_UP, ...Object.keys(LEFT_OUT)]);
    expect(tables(db).filter((t) => !decided.has(t))).toEqual([]);
    expect(BACKED_UP.filter((t) => Object.keys(LEFT_OUT).includes(t))).toEqual([]);
  });

  it("holds no session, token hash, client address or live agent connection", async () => {
    const { sql, db } = ledger();
    seed(db);
    const text = await backupText(readBackup(sql));
    expect(text).not.toContain(SECRET_HASH);
    expect(text).not.toContain("203.0.113.9");
    expect(text).not.toContain("agent-conn:");
    expect(text).toContain("installation/o/r");
    const header = JSON.parse(text.slice(0, text.indexOf("\n")));
    expect(header).toMatchObject({ format: "arc-reaper-ledger-backup/1", schemaVersion: SCHEMA_VERSION, takenAt: "2026-12-07T12:00:00.000Z" });
    expect(header.tables.runners.rows).toBe(2);
    expect(header.tables.memory.rows).toBe(2);
    expect(Object.keys(header.leftOut)).toContain("sessions");
  });

  it("restores into an empty ledger the same rows of every backed-up table, keeping that ledger's own test settings", async () => {
    const from = ledger();
    seed(from.db);
    const text = await backupText(readBackup(from.sql));
    const to = ledger();
    to.db.exec(`INSERT INTO memory (key, value) VALUES ('test-settings', '{"A":"1"}'), ('sweep-ran-at', '5')`);
    to.db.exec(`INSERT INTO unseen (name, uid, namespace, run_id, first_seen) VALUES ('arc-x', 'u', 'ns', 1, 1)`); // a first sweep's: replaced
    const outcome = restoreBackup(to.sql, to.transaction, await decoded(text));
    expect(outcome).toEqual({
      ok: true,
      schemaVersion: SCHEMA_VERSION,
      migratedTo: SCHEMA_VERSION,
      rows: expect.objectContaining({ runners: 2, runs: 1, memory: 2 }),
    });
    for (const table of BACKED_UP.filter((t) => t !== "memory")) expect(dump(to.db, table), table).toEqual(dump(from.db, table));
    expect(dump(to.db, "memory")).toEqual(
      [...dump(from.db, "memory").filter((r) => !r.includes("agent-conn")), JSON.stringify({ key: "test-settings", value: '{"A":"1"}' })].sort(),
    );
    expect(dump(to.db, "sessions")).toEqual([]);
    // The restored ledger backs up to the same rows again.
    const again = await backupText(readBackup(to.sql));
    expect(again.slice(again.indexOf("\n"))).toBe(text.slice(text.indexOf("\n")));
  });

  it("writes an older release's backup at its version, then migrates it", async () => {
    // Version 14: before migration 15 gave runners check_code (and 16 added github_validators).
    const old = ledger(14);
    old.db.exec(`INSERT INTO runners (runner, job_id, repo, run_id, run_attempt, state, reason) VALUES ('arc-old', 1, 'o/r', 2, 1, 'running', '')`);
    const content = readBackup(old.sql);
    expect(content.tables.find((t) => t.name === "runners")!.columns).not.toContain("check_code");
    const to = ledger();
    const outcome = restoreBackup(to.sql, to.transaction, await decoded(await backupText(content)));
    expect(outcome).toMatchObject({ ok: true, schemaVersion: 14, migratedTo: SCHEMA_VERSION });
    expect(to.db.prepare("SELECT runner, check_code FROM runners").all()).toEqual([{ runner: "arc-old", check_code: null }]);
    expect(to.db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: SCHEMA_VERSION }]);
  });
});

describe("a restore refuses, writing nothing", () => {
  async function seededText(): Promise<string> {
    const from = ledger();
    seed(from.db);
    return backupText(readBackup(from.sql));
  }

  it("into a ledger that holds facts, naming the tables", async () => {
    const to = ledger();
    to.db.exec(`INSERT INTO runs (repo, run_id, run_attempt, updated_at, conclusion, source) VALUES ('o/x', 9, 1, 't', 'success', 'webhook')`);
    const before = dump(to.db, "runs");
    const outcome = restoreBackup(to.sql, to.transaction, await decoded(await seededText()));
    expect(outcome).toEqual({ ok: false, reason: "NotEmpty", message: expect.stringContaining("the ledger is not empty (runs: 1 rows)") });
    expect(dump(to.db, "runs")).toEqual(before);
    expect(dump(to.db, "runners")).toEqual([]);
  });

  it("a backup of a newer schema", async () => {
    const text = await resealed(await seededText(), (body, header) => {
      header.schemaVersion = SCHEMA_VERSION + 1;
      return body;
    });
    const to = ledger();
    expect(restoreBackup(to.sql, to.transaction, await decoded(text))).toEqual({
      ok: false,
      reason: "NewerSchema",
      message: expect.stringContaining(`the backup's schema is version ${SCHEMA_VERSION + 1}, newer than this code's ${SCHEMA_VERSION}`),
    });
    expect(dump(to.db, "memory")).toEqual([]);
  });

  it("a column the schema does not have at the backup's version, rolling back what it wrote", async () => {
    const text = await resealed(await seededText(), (body, header) => {
      const tables = header.tables as Record<string, { columns: string[] }>;
      tables.runs!.columns = [...tables.runs!.columns.slice(0, -1), "not_a_column"];
      return body;
    });
    const to = ledger();
    to.db.exec(`INSERT INTO memory (key, value) VALUES ('sweep-ran-at', '5')`);
    expect(restoreBackup(to.sql, to.transaction, await decoded(text))).toEqual({
      ok: false,
      reason: "UnknownColumn",
      message: `table runs has no column not_a_column at schema version ${SCHEMA_VERSION}`,
    });
    expect(dump(to.db, "runners")).toEqual([]); // written before runs, rolled back
    expect(dump(to.db, "memory")).toEqual([JSON.stringify({ key: "sweep-ran-at", value: "5" })]);
  });

  it("a backup altered or cut short, or not a backup at all", async () => {
    const text = await seededText();
    expect(await decodeBackup(text.replace("arc-a", "arc-z"))).toMatchObject({
      ok: false,
      reason: "BadChecksum",
      message: expect.stringMatching(/has SHA-256 [0-9a-f]{64}, its first line says/),
    });
    expect(await decodeBackup(text.slice(0, -10))).toMatchObject({
      ok: false,
      reason: "BadChecksum",
      message: expect.stringContaining("cut short or altered"),
    });
    expect(await decodeBackup("{}\n")).toMatchObject({ ok: false, reason: "BadFormat", message: expect.stringContaining("format") });
    expect(await decodeBackup("no newline")).toMatchObject({ ok: false, reason: "BadFormat" });
    const dropped = await resealed(text, (body) => body.split("\n").slice(1).join("\n"));
    expect(await decodeBackup(dropped)).toMatchObject({
      ok: false,
      reason: "RowCountMismatch",
      message: expect.stringMatching(/^table runners has 1 rows in the backup, its first line says 2$/),
    });
    const stray = await resealed(text, (body) => `["sessions",[]]\n${body}`);
    expect(await decodeBackup(stray)).toMatchObject({
      ok: false,
      reason: "BadFormat",
      message: expect.stringContaining("table sessions, which its first line does not name"),
    });
  });
});
