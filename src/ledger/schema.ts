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

// The same, per cluster (migration 5): one agent, one view, per cluster.
const CLUSTER_RUNNER_COLUMNS = `
  cluster TEXT NOT NULL,${AGENT_RUNNER_COLUMNS.replace("PRIMARY KEY (namespace, name)", "PRIMARY KEY (cluster, namespace, name)")}`;
const RUNNER_FIELDS = "namespace, name, uid, creation_timestamp, deletion_timestamp, workflow_run_id, job_repository_name";

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
    // One reconcile: what holds a row's decision (paused, agent, cap, budget), so
    // that resume and the agent's return find their rows by it, not by reason
    // text; the cluster of the object seen doing the job; and when the row last
    // learned a fact (the ledger's clock), so that a view older than that is
    // never taken as the runner's absence.
    `ALTER TABLE runners ADD COLUMN held_for TEXT`,
    `ALTER TABLE runners ADD COLUMN cluster TEXT`,
    `ALTER TABLE runners ADD COLUMN fact_at INTEGER`,
    `CREATE INDEX runners_held ON runners (held_for) WHERE held_for IS NOT NULL`,
    `ALTER TABLE unseen ADD COLUMN held_for TEXT`,
    `ALTER TABLE unseen ADD COLUMN cluster TEXT`,
    `CREATE INDEX unseen_by_due ON unseen (due_at)`,
    // Agent mode: objects the watch saw leave, so their absence is known though the view's snapshot is older.
    `CREATE TABLE agent_removed (namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL, removed_at INTEGER NOT NULL, PRIMARY KEY (namespace, name, uid)) WITHOUT ROWID`,
  ],
  [
    // Deletions we made, watched until their object goes: ARC's finalizer may hold one
    // while GitHub says its job runs; still there REAPER_STUCK_SECONDS later, it is stuck.
    `CREATE TABLE deletions (
      row_id INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      cluster TEXT NOT NULL,
      namespace TEXT NOT NULL,
      uid TEXT NOT NULL,
      repo TEXT NOT NULL,
      job_id INTEGER NOT NULL,
      installation_id INTEGER,
      deleted_at INTEGER NOT NULL,
      due_at INTEGER NOT NULL,
      stuck_at INTEGER,
      reason TEXT NOT NULL
    )`,
    `CREATE INDEX deletions_by_due ON deletions (due_at)`,
  ],
  [
    // What people call a runner's job (author-written, bounded at intake): shown, never judged on.
    `ALTER TABLE runners ADD COLUMN workflow_name TEXT`,
    `ALTER TABLE runners ADD COLUMN job_name TEXT`,
    `ALTER TABLE runners ADD COLUMN head_branch TEXT`,
    `ALTER TABLE runners ADD COLUMN run_url TEXT`,
    // A run's names (JSON), for its jobs heard of after it completed: any order of deliveries gives the same names.
    `ALTER TABLE runs ADD COLUMN names TEXT`,
    // The admin page's day at a glance: runners closed or kept per hour, and how
    // long after the grace each reaped one went, as counts per delay bucket
    // (src/ledger/hourly-rollup.ts). A page view reads at most 24 hours of it,
    // never the runners' history.
    `CREATE TABLE hourly_outcomes (
      hour INTEGER NOT NULL,
      outcome TEXT NOT NULL,
      bucket INTEGER NOT NULL,
      why TEXT NOT NULL,
      n INTEGER NOT NULL,
      PRIMARY KEY (hour, outcome, bucket, why)
    ) WITHOUT ROWID`,
    // The admin listing filtered by state or repository, newest first, without reading that state's or repository's whole history.
    `CREATE INDEX runners_by_state_id ON runners (state, id)`,
    `CREATE INDEX runners_by_repo_id ON runners (repo, id)`,
  ],
  [
    // Many clusters: an agent per cluster, each with its own view, snapshot in
    // progress and removals. What a single agent sent so far is the cluster
    // "default"'s (the name an agent without AGENT_CLUSTER has).
    `CREATE TABLE agent_view_by_cluster (${CLUSTER_RUNNER_COLUMNS}) WITHOUT ROWID`,
    `INSERT INTO agent_view_by_cluster (cluster, ${RUNNER_FIELDS}) SELECT 'default', ${RUNNER_FIELDS} FROM agent_view`,
    `DROP TABLE agent_view`,
    `ALTER TABLE agent_view_by_cluster RENAME TO agent_view`,
    // A snapshot in progress is never worth keeping across a deploy: the agent sends a whole one on reconnect.
    `DROP TABLE agent_snapshot`,
    `CREATE TABLE agent_snapshot (${CLUSTER_RUNNER_COLUMNS}) WITHOUT ROWID`,
    `CREATE TABLE agent_removed_by_cluster (cluster TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL, removed_at INTEGER NOT NULL, PRIMARY KEY (cluster, namespace, name, uid)) WITHOUT ROWID`,
    `INSERT INTO agent_removed_by_cluster SELECT 'default', namespace, name, uid, removed_at FROM agent_removed`,
    `DROP TABLE agent_removed`,
    `ALTER TABLE agent_removed_by_cluster RENAME TO agent_removed`,
    // Hands off per cluster: the agent's return releases its own cluster's held rows (and those of no known cluster).
    `CREATE INDEX runners_held_by_cluster ON runners (held_for, cluster) WHERE held_for IS NOT NULL`,
  ],
  [
    // The GUIDs of signed deliveries the ledger received, kept REAPER_HISTORY_DAYS: a GUID seen
    // again is a replay (nothing written), and redelivery asks only for GUIDs never received.
    `CREATE TABLE IF NOT EXISTS deliveries_received (guid TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS deliveries_received_by_at ON deliveries_received (at)`,
  ],
  [
    // One owner of the next look: a closed row's prune time has a column of its own
    // (due_at is only ever an open row's next look), and a row's failed asks in a row are counted,
    // so that reconcile backs each off (1 minute doubling to 1 hour) and the budget serves it last.
    `ALTER TABLE runners ADD COLUMN prune_at INTEGER`,
    `UPDATE runners SET prune_at = due_at, due_at = NULL WHERE state IN ('reaped', 'gone')`,
    `UPDATE runners SET due_at = NULL WHERE state = 'stuck'`,
    `CREATE INDEX runners_by_prune ON runners (prune_at) WHERE prune_at IS NOT NULL`,
    `ALTER TABLE runners ADD COLUMN failures INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE unseen ADD COLUMN failures INTEGER NOT NULL DEFAULT 0`,
  ],
  [
    // Migration 10. How whole each agent namespace is: absence
    // dates from its own time (whole_at, the ledger's clock), and one it cannot read holds its runners.
    `CREATE TABLE IF NOT EXISTS agent_namespaces (cluster TEXT NOT NULL, namespace TEXT NOT NULL, whole_at INTEGER, unreadable TEXT, PRIMARY KEY (cluster, namespace)) WITHOUT ROWID`,
    // agent_removed is pruned as it goes, oldest first.
    `CREATE INDEX IF NOT EXISTS agent_removed_by_time ON agent_removed (cluster, removed_at)`,
  ],
  [
    // Migration 11: runners ARC marked
    // Failed, one row per object (cluster, namespace, name, uid), while they hold a slot and
    // REAPER_HISTORY_DAYS after they left (state reaped or gone); and a held deletion finished.
    `CREATE TABLE IF NOT EXISTS failed_runners (
      id INTEGER PRIMARY KEY,
      cluster TEXT NOT NULL,
      namespace TEXT NOT NULL,
      name TEXT NOT NULL,
      uid TEXT NOT NULL,
      scale_set TEXT,
      arc_reason TEXT,
      arc_message TEXT,
      failed_at INTEGER NOT NULL,
      first_seen INTEGER NOT NULL,
      created_at INTEGER,
      run_id INTEGER,
      state TEXT NOT NULL,
      reason TEXT NOT NULL DEFAULT '',
      deleted_at INTEGER,
      closed_at INTEGER,
      story TEXT NOT NULL DEFAULT '[]',
      UNIQUE (cluster, namespace, name, uid)
    )`,
    `CREATE INDEX IF NOT EXISTS failed_runners_by_state ON failed_runners (state, id)`,
    `CREATE INDEX IF NOT EXISTS failed_runners_by_name ON failed_runners (name)`,
    // A stuck deletion whose finish (REAPER_FINISH_STUCK) the API server refused (403: the Role overlay is not applied), and why.
    `CREATE TABLE IF NOT EXISTS finish_refusals (row_id INTEGER PRIMARY KEY, why TEXT NOT NULL)`,
    // Agent mode: what the agent says of a Failed runner (JSON of AgentArcFields), in the view and a snapshot in progress.
    `ALTER TABLE agent_view ADD COLUMN arc TEXT`,
    `ALTER TABLE agent_snapshot ADD COLUMN arc TEXT`,
  ],
  [
    // Identity by runner id: the registration GitHub says took the job (workflow_job.runner_id), and the one
    // ARC's controller wrote on each object (status.runnerId) in the agent's view and a snapshot in progress.
    // Rows from before have none: today's rules (name, run, uid) judge them, as they judge any row without one.
    `ALTER TABLE runners ADD COLUMN runner_id INTEGER`,
    `ALTER TABLE agent_view ADD COLUMN runner_id INTEGER`,
    `ALTER TABLE agent_snapshot ADD COLUMN runner_id INTEGER`,
  ],
  [
    // Failed runners we deleted, by when: the sweep counts a scale set's recent deletions from these
    // alone, never from the whole Failed history.
    `CREATE INDEX IF NOT EXISTS failed_runners_by_deleted ON failed_runners (deleted_at) WHERE deleted_at IS NOT NULL`,
    // A Failed runner's DELETE that failed backs off per row (1 minute doubling to 1 hour), as a failed ask
    // does: its failures in a row and when the next DELETE may go, while it is open.
    `CREATE TABLE IF NOT EXISTS failed_delete_backoff (row_id INTEGER PRIMARY KEY, failures INTEGER NOT NULL, retry_at INTEGER NOT NULL)`,
  ],
  [
    // An unseen row's last decision, as a runner row keeps it (verdict_key: its kind and code), so that a new
    // decision is told from the same one again without reading its reason's words. Rows from before have
    // none: their next verdict takes its key as the same decision (src/reaper/transition.ts).
    `ALTER TABLE unseen ADD COLUMN verdict_key TEXT`,
  ],
  [
    // Migration 15. The code of the check of our deletion (DELETION_CODES: Stuck, Went, ...) that last
    // restated a closed row, which the admin JSON shows as the row's code: its verdict_key keeps the
    // verdict that condemned it. Rows from before have none (a stuck one's code reads null).
    `ALTER TABLE runners ADD COLUMN check_code TEXT`,
  ],
  [
    // Migration 16. Conditional requests to GitHub (src/ledger/validators-table.ts): per repeated GET, the validators of
    // its last 200 (an ETag with the hash of the token that earned it, a Last-Modified) and a summary of what the
    // decision read. Bounded in rows (by id, oldest written first) and age (stored_at). Nothing before it is touched.
    `CREATE TABLE IF NOT EXISTS github_validators (
      id INTEGER PRIMARY KEY,
      request TEXT NOT NULL UNIQUE,
      token TEXT NOT NULL,
      etag TEXT,
      last_modified TEXT,
      summary TEXT NOT NULL,
      stored_at INTEGER NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS github_validators_by_age ON github_validators (stored_at)`,
  ],
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the ledger to `upTo` (this code's version unless a restore asks for an older backup's, src/ledger/restore-backup.ts). */
export function migrate(sql: Sql, upTo: number = SCHEMA_VERSION): void {
  sql.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const version = Number(sql.first<{ version: number }>("SELECT version FROM schema_version")?.version ?? 0);
  if (version > SCHEMA_VERSION) {
    throw new Error(
      `arc-reaper ledger: the stored schema is version ${version}, newer than this code's ${SCHEMA_VERSION}: roll forward, migrations never go back`,
    );
  }
  for (let v = version; v < upTo; v++) {
    for (const statement of MIGRATIONS[v]!) sql.run(statement);
    sql.run("DELETE FROM schema_version");
    sql.run("INSERT INTO schema_version (version) VALUES (?)", v + 1);
  }
}
