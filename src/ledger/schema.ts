// The ledger's schema lives in code. Each migration runs once, in order, under
// blockConcurrencyWhile in the constructor; the one row of schema_version says
// how far a ledger got (Durable Objects refuse PRAGMA user_version). Migrations only move forward,
// and migrate() refuses a schema newer than the code's: a rollback past a schema change cannot work
// (docs/deploy.md, "Upgrade and roll back"); roll forward with a fix instead.
import type { Sql } from "./sql.ts";

// The columns of an EphemeralRunner as the agent reports it, in both agent tables.
const AGENT_RUNNER_COLUMNS = `
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  uid TEXT NOT NULL,
  creation_timestamp TEXT NOT NULL,
  deletion_timestamp TEXT,
  workflow_run_id INTEGER,
  job_repository_name TEXT,
  PRIMARY KEY (namespace, name)`;

const MIGRATIONS: readonly (readonly string[])[] = [
  [
    // One row per (runner, job): what GitHub said about the job, the object seen
    // doing it, the current verdict and when it is next due. Open rows are
    // `running` or `finished`; closed rows (`reaped`, `gone`) reuse due_at as the
    // time they are pruned, so one index serves the alarm, the sweep and pruning.
    `CREATE TABLE runners (
      id INTEGER PRIMARY KEY,
      runner TEXT NOT NULL,
      job_id INTEGER NOT NULL,
      repo TEXT NOT NULL,
      run_id INTEGER NOT NULL,
      run_attempt INTEGER NOT NULL,
      installation_id INTEGER,
      started_at TEXT,
      job_completed_at TEXT,
      job_conclusion TEXT,
      run_completed_at TEXT,
      run_conclusion TEXT,
      run_completed_attempt INTEGER,
      uid TEXT,
      namespace TEXT,
      checked_at INTEGER,
      state TEXT NOT NULL,
      verdict TEXT,
      reason TEXT NOT NULL DEFAULT '',
      verdict_key TEXT,
      cause TEXT,
      decided_at INTEGER,
      due_at INTEGER,
      story TEXT NOT NULL DEFAULT '[]',
      UNIQUE (runner, job_id)
    )`,
    `CREATE INDEX runners_by_state_due ON runners (state, due_at)`,
    `CREATE INDEX runners_by_run ON runners (repo, run_id)`,
    // Run completions, so a job heard of after its run completed is covered at once.
    `CREATE TABLE runs (
      repo TEXT NOT NULL,
      run_id INTEGER NOT NULL,
      run_attempt INTEGER NOT NULL,
      updated_at TEXT NOT NULL,
      conclusion TEXT NOT NULL,
      source TEXT NOT NULL,
      PRIMARY KEY (repo, run_id, run_attempt)
    ) WITHOUT ROWID`,
    // Busy runners nobody told us about, by name and uid: when first seen, and
    // when they are due to be asked about.
    `CREATE TABLE unseen (
      name TEXT NOT NULL,
      uid TEXT NOT NULL,
      namespace TEXT NOT NULL,
      run_id INTEGER NOT NULL,
      repo TEXT,
      first_seen INTEGER NOT NULL,
      due_at INTEGER,
      reason TEXT NOT NULL DEFAULT '',
      PRIMARY KEY (name, uid)
    ) WITHOUT ROWID`,
    // Failed deliveries asked to be redelivered, by GUID.
    `CREATE TABLE redeliveries (
      guid TEXT PRIMARY KEY,
      event TEXT NOT NULL,
      delivery_id TEXT NOT NULL,
      ask_failed INTEGER NOT NULL DEFAULT 0,
      attempts INTEGER NOT NULL,
      last_listing INTEGER NOT NULL,
      first_failed_at INTEGER NOT NULL,
      succeeded INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID`,
    // Small named values: the deliveries mark, back-offs, installations, pause.
    `CREATE TABLE memory (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
    // Monotonic counters for /metrics.
    `CREATE TABLE counters (name TEXT NOT NULL, labels TEXT NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (name, labels)) WITHOUT ROWID`,
  ],
  [
    // Admin sessions: the SHA-256 of the cookie's random id (the id itself is
    // never stored), the hash of the ADMIN_TOKEN it was made with (rotating the
    // token ends it) and its expiry. Logout deletes the row.
    `CREATE TABLE sessions (id_hash TEXT PRIMARY KEY, token_hash TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID`,
    // Failed logins per client address, one row each, kept a minute: the login throttle.
    `CREATE TABLE login_failures (client TEXT NOT NULL, at INTEGER NOT NULL)`,
    `CREATE INDEX login_failures_by_client ON login_failures (client, at)`,
  ],
  [
    // Agent mode: the in-cluster agent's view of its namespaces (what the judge
    // needs of each EphemeralRunner), replaced by each complete snapshot and
    // kept current by its upserts and removes. agent_snapshot holds the parts of
    // a snapshot still arriving: a partial view never replaces the whole.
    `CREATE TABLE agent_view (${AGENT_RUNNER_COLUMNS}) WITHOUT ROWID`,
    `CREATE TABLE agent_snapshot (${AGENT_RUNNER_COLUMNS}) WITHOUT ROWID`,
  ],
  [
    // The GUIDs of signed deliveries the ledger received, kept REAPER_HISTORY_DAYS: a GUID seen
    // again is a replay (nothing written), and redelivery asks only for GUIDs never received.
    `CREATE TABLE IF NOT EXISTS deliveries_received (guid TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS deliveries_received_by_at ON deliveries_received (at)`,
  ],
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function migrate(sql: Sql): void {
  sql.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const version = Number(sql.first<{ version: number }>("SELECT version FROM schema_version")?.version ?? 0);
  if (version > SCHEMA_VERSION) {
    throw new Error(`arc-reaper ledger: the stored schema is version ${version}, newer than this code's ${SCHEMA_VERSION}: roll forward, migrations never go back`);
  }
  for (let v = version; v < SCHEMA_VERSION; v++) {
    for (const statement of MIGRATIONS[v]!) sql.run(statement);
    sql.run("DELETE FROM schema_version");
    sql.run("INSERT INTO schema_version (version) VALUES (?)", v + 1);
  }
}
