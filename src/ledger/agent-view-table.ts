// One cluster's agent view, as the ledger keeps it (agent mode): one row per
// EphemeralRunner that cluster's agent sees. A snapshot's parts gather in
// agent_snapshot and replace the view only when the last part is in, so a
// partial view never reads as runners gone; upserts and removes keep it current.
// Every statement names the cluster: one agent never touches another's view.
import type { AgentArcFields, AgentRunner } from "../cluster/agent-protocol.ts";
import { fromAgentArcFields } from "../cluster/arc-failure.ts";
import type { ClusterRunner } from "../model/runner.ts";
import type { Sql, SqlValue } from "./sql.ts";

interface ViewRow {
  [column: string]: SqlStorageValue;
  namespace: string;
  name: string;
  uid: string;
  creation_timestamp: string;
  deletion_timestamp: string | null;
  workflow_run_id: number | null;
  job_repository_name: string | null;
  arc: string | null;
}

const COLUMNS = "namespace, name, uid, creation_timestamp, deletion_timestamp, workflow_run_id, job_repository_name, arc";
const INSERT_COLUMNS = `cluster, ${COLUMNS}`;

const values = (cluster: string, r: AgentRunner): SqlValue[] => [
  cluster,
  r.namespace,
  r.name,
  r.uid,
  r.creationTimestamp,
  r.deletionTimestamp ?? null,
  r.workflowRunId ?? null,
  r.jobRepositoryName ?? null,
  r.arc ? JSON.stringify(r.arc) : null,
];

/** A row as the judge sees a runner. */
function clusterRunner(row: ViewRow): ClusterRunner {
  const runner: ClusterRunner = { namespace: row.namespace, name: row.name, uid: row.uid, createdAt: row.creation_timestamp };
  if (row.deletion_timestamp !== null) runner.deletionTimestamp = row.deletion_timestamp;
  if (row.workflow_run_id !== null) runner.workflowRunId = Number(row.workflow_run_id);
  if (row.job_repository_name !== null) runner.jobRepositoryName = row.job_repository_name;
  // A Failed runner (issue 24): what the agent said of it, as the direct parser reads it.
  if (row.arc !== null) Object.assign(runner, fromAgentArcFields(JSON.parse(row.arc) as AgentArcFields));
  return runner;
}

export class AgentViewTable {
  private readonly sql: Sql;
  private readonly cluster: string;
  constructor(sql: Sql, cluster: string) {
    this.sql = sql;
    this.cluster = cluster;
  }

  /** The clusters that have a view (kept while their agent is away). */
  static clusters(sql: Sql): string[] {
    return sql.all<{ cluster: string }>("SELECT DISTINCT cluster FROM agent_view").map((r) => r.cluster);
  }

  /** Part 1 of a snapshot: whatever an earlier, unfinished snapshot left is dropped. */
  startSnapshot(): void {
    this.sql.run("DELETE FROM agent_snapshot WHERE cluster = ?", this.cluster);
  }

  /** One part's runners, gathered until the last part. */
  addToSnapshot(runners: readonly AgentRunner[]): void {
    for (const r of runners) {
      this.sql.run(`INSERT OR REPLACE INTO agent_snapshot (${INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, ...values(this.cluster, r));
    }
  }

  /** The last part is in: the gathered snapshot becomes the cluster's whole view. */
  finishSnapshot(): number {
    this.sql.run("DELETE FROM agent_view WHERE cluster = ?", this.cluster);
    this.pruneRemoved(Date.now() - 86_400_000);
    const n = this.sql.run(`INSERT INTO agent_view (${INSERT_COLUMNS}) SELECT ${INSERT_COLUMNS} FROM agent_snapshot WHERE cluster = ?`, this.cluster);
    this.sql.run("DELETE FROM agent_snapshot WHERE cluster = ?", this.cluster);
    return n;
  }

  upsert(r: AgentRunner): void {
    this.sql.run(`INSERT OR REPLACE INTO agent_view (${INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, ...values(this.cluster, r));
  }

  /**
   * Removes the runner only if it is still the object of that uid (a name can come back),
   * and remembers that the watch saw it leave: positive evidence of its absence.
   */
  remove(namespace: string, name: string, uid: string, at: number): void {
    this.sql.run("DELETE FROM agent_view WHERE cluster = ? AND namespace = ? AND name = ? AND uid = ?", this.cluster, namespace, name, uid);
    this.sql.run("INSERT OR REPLACE INTO agent_removed (cluster, namespace, name, uid, removed_at) VALUES (?, ?, ?, ?, ?)", this.cluster, namespace, name, uid, at);
  }

  /**
   * A read by name (the agent's GET) found no object: whatever the view held of the name goes,
   * and the absence is fresh evidence as of `at`, like a remove event's.
   */
  absentByRead(namespace: string, name: string, at: number): void {
    this.sql.run("DELETE FROM agent_view WHERE cluster = ? AND namespace = ? AND name = ?", this.cluster, namespace, name);
    this.sql.run("INSERT OR REPLACE INTO agent_removed (cluster, namespace, name, uid, removed_at) VALUES (?, ?, ?, '', ?)", this.cluster, namespace, name, at);
  }

  /** When the watch last saw an object of this name leave, or a read found none (ms), or 0. */
  removedAt(namespace: string, name: string): number {
    return Number(
      this.sql.first<{ at: number | null }>("SELECT MAX(removed_at) AS at FROM agent_removed WHERE cluster = ? AND namespace = ? AND name = ?", this.cluster, namespace, name)?.at ?? 0,
    );
  }

  /** Removals older than `before` are forgotten (a complete snapshot since then says as much). */
  pruneRemoved(before: number): void {
    this.sql.run("DELETE FROM agent_removed WHERE cluster = ? AND removed_at < ?", this.cluster, before);
  }

  list(namespace: string): ClusterRunner[] {
    return this.sql.all<ViewRow>(`SELECT ${COLUMNS} FROM agent_view WHERE cluster = ? AND namespace = ? ORDER BY name`, this.cluster, namespace).map(clusterRunner);
  }

  get(namespace: string, name: string): ClusterRunner | undefined {
    const row = this.sql.first<ViewRow>(`SELECT ${COLUMNS} FROM agent_view WHERE cluster = ? AND namespace = ? AND name = ?`, this.cluster, namespace, name);
    return row ? clusterRunner(row) : undefined;
  }

  count(): number {
    return Number(this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM agent_view WHERE cluster = ?", this.cluster)?.n ?? 0);
  }
}
