// One cluster's agent view, as the ledger keeps it (agent mode): one row per
// EphemeralRunner that cluster's agent sees. A snapshot's parts gather in
// agent_snapshot and replace the view only when the last part is in, so a
// partial view never reads as runners gone; upserts and removes keep it current.
// Every statement names the cluster: one agent never touches another's view.
// Beside it: how whole each namespace is (agent_namespaces), and the removals
// the watch or a read reported (agent_removed), pruned as they go.
import type { AgentArcFields, AgentRunner, NamespaceFreshness } from "../cluster/agent-protocol.ts";
import { fromAgentArcFields } from "../cluster/arc-failure.ts";
import type { ClusterRunner } from "../model/runner.ts";
import type { Sql, SqlValue } from "../ledger/sql.ts";

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
  runner_id: number | null;
}

const COLUMNS = "namespace, name, uid, creation_timestamp, deletion_timestamp, workflow_run_id, job_repository_name, arc, runner_id";
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
  r.runnerId ?? null,
];

/** A row read as an array (Sql.rows, in COLUMNS' order): a sweep reads the whole view. */
const viewRow = (a: SqlStorageValue[]): ViewRow => ({
  namespace: a[0] as string,
  name: a[1] as string,
  uid: a[2] as string,
  creation_timestamp: a[3] as string,
  deletion_timestamp: a[4] as string | null,
  workflow_run_id: a[5] as number | null,
  job_repository_name: a[6] as string | null,
  arc: a[7] as string | null,
  runner_id: a[8] as number | null,
});

/** A row as the judge sees a runner. */
function clusterRunner(row: ViewRow): ClusterRunner {
  const runner: ClusterRunner = { namespace: row.namespace, name: row.name, uid: row.uid, createdAt: row.creation_timestamp };
  if (row.deletion_timestamp !== null) runner.deletionTimestamp = row.deletion_timestamp;
  if (row.runner_id !== null) runner.runnerId = Number(row.runner_id);
  if (row.workflow_run_id !== null) runner.workflowRunId = Number(row.workflow_run_id);
  if (row.job_repository_name !== null) runner.jobRepositoryName = row.job_repository_name;
  // A Failed runner: what the agent said of it, as the direct parser reads it.
  if (row.arc !== null) Object.assign(runner, fromAgentArcFields(JSON.parse(row.arc) as AgentArcFields));
  return runner;
}

/**
 * Removals are kept this long, then pruned as new ones come: an older one adds little, and
 * without it absence waits for the namespace's freshness or a read (never a wrong answer).
 */
export const REMOVED_KEPT_MS = 15 * 60_000;

/** One namespace of an agent: when its cache was last whole (ms, the ledger's clock; 0: never), and why it cannot be read. */
export interface NamespaceState {
  namespace: string;
  wholeAt: number;
  unreadable: string | null;
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
      this.sql.run(`INSERT OR REPLACE INTO agent_snapshot (${INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, ...values(this.cluster, r));
    }
  }

  /** The last part is in: the gathered snapshot becomes the cluster's whole view. */
  finishSnapshot(): number {
    this.sql.run("DELETE FROM agent_view WHERE cluster = ?", this.cluster);
    this.pruneRemoved(Date.now() - REMOVED_KEPT_MS);
    const n = this.sql.run(`INSERT INTO agent_view (${INSERT_COLUMNS}) SELECT ${INSERT_COLUMNS} FROM agent_snapshot WHERE cluster = ?`, this.cluster);
    this.sql.run("DELETE FROM agent_snapshot WHERE cluster = ?", this.cluster);
    return n;
  }

  upsert(r: AgentRunner): void {
    this.sql.run(`INSERT OR REPLACE INTO agent_view (${INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, ...values(this.cluster, r));
  }

  /**
   * A read's answer (the object as the API server had it when asked at `askedAt`): it lands unless
   * the watch has since said that object left, or a later read found none of the name, so a late
   * answer never brings a removed runner back. One too old to tell (removals are kept
   * REMOVED_KEPT_MS) is dropped. Returns whether it landed.
   */
  upsertRead(r: AgentRunner, askedAt: number, now: number): boolean {
    if (askedAt < now - REMOVED_KEPT_MS) return false;
    const left = this.sql.first<{ n: number }>(
      "SELECT COUNT(*) AS n FROM agent_removed WHERE cluster = ? AND namespace = ? AND name = ? AND (uid = ? OR (uid = '' AND removed_at > ?))",
      this.cluster,
      r.namespace,
      r.name,
      r.uid,
      askedAt,
    );
    if (Number(left?.n ?? 0) > 0) return false;
    this.upsert(r);
    return true;
  }

  /**
   * Removes the runner only if it is still the object of that uid (a name can come back),
   * and remembers that the watch saw it leave: positive evidence of its absence.
   */
  remove(namespace: string, name: string, uid: string, at: number): void {
    this.sql.run("DELETE FROM agent_view WHERE cluster = ? AND namespace = ? AND name = ? AND uid = ?", this.cluster, namespace, name, uid);
    this.sql.run(
      "INSERT OR REPLACE INTO agent_removed (cluster, namespace, name, uid, removed_at) VALUES (?, ?, ?, ?, ?)",
      this.cluster,
      namespace,
      name,
      uid,
      at,
    );
    this.pruneRemoved(at - REMOVED_KEPT_MS);
  }

  /**
   * A read by name (the agent's GET) found no object: whatever the view held of the name goes,
   * and the absence is fresh evidence as of `at`, like a remove event's.
   */
  absentByRead(namespace: string, name: string, at: number): void {
    this.sql.run("DELETE FROM agent_view WHERE cluster = ? AND namespace = ? AND name = ?", this.cluster, namespace, name);
    this.sql.run("INSERT OR REPLACE INTO agent_removed (cluster, namespace, name, uid, removed_at) VALUES (?, ?, ?, '', ?)", this.cluster, namespace, name, at);
    this.pruneRemoved(at - REMOVED_KEPT_MS);
  }

  /** When the watch last saw an object of this name leave, or a read found none (ms), or 0. */
  removedAt(namespace: string, name: string): number {
    return Number(
      this.sql.first<{ at: number | null }>(
        "SELECT MAX(removed_at) AS at FROM agent_removed WHERE cluster = ? AND namespace = ? AND name = ?",
        this.cluster,
        namespace,
        name,
      )?.at ?? 0,
    );
  }

  /** Removals older than `before` are forgotten (oldest first, by the index on removal time). */
  pruneRemoved(before: number): void {
    this.sql.run("DELETE FROM agent_removed WHERE cluster = ? AND removed_at < ?", this.cluster, before);
  }

  removedCount(): number {
    return Number(this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM agent_removed WHERE cluster = ?", this.cluster)?.n ?? 0);
  }

  /**
   * What the agent says of its namespaces, as of `arrivedAt` (its ages turned into the ledger's times).
   * `replace`: a snapshot's word on all of them (the rest are forgotten). Returns the namespaces
   * that were unreadable and are readable now (their held runners can be judged again).
   */
  setNamespaces(states: readonly NamespaceFreshness[], arrivedAt: number, replace: boolean): string[] {
    const before = new Map(this.namespaces().map((s) => [s.namespace, s]));
    if (replace) this.sql.run("DELETE FROM agent_namespaces WHERE cluster = ?", this.cluster);
    const readable: string[] = [];
    for (const s of states) {
      const old = before.get(s.namespace);
      const wholeAt = s.wholeMsAgo === undefined ? null : arrivedAt - s.wholeMsAgo;
      this.sql.run(
        "INSERT OR REPLACE INTO agent_namespaces (cluster, namespace, whole_at, unreadable) VALUES (?, ?, ?, ?)",
        this.cluster,
        s.namespace,
        // Never backwards on the same word: a late message must not make a namespace look older or newer than it was.
        wholeAt === null ? (replace ? null : old?.wholeAt || null) : Math.max(wholeAt, replace ? 0 : (old?.wholeAt ?? 0)),
        s.unreadable ?? null,
      );
      if (old?.unreadable && s.unreadable === undefined) readable.push(s.namespace);
    }
    return readable;
  }

  /** Forgets what the agent said of its namespaces (a snapshot that says nothing of them: an older agent). */
  clearNamespaces(): void {
    this.sql.run("DELETE FROM agent_namespaces WHERE cluster = ?", this.cluster);
  }

  namespaces(): NamespaceState[] {
    return this.sql
      .all<{ namespace: string; whole_at: number | null; unreadable: string | null }>(
        "SELECT namespace, whole_at, unreadable FROM agent_namespaces WHERE cluster = ? ORDER BY namespace",
        this.cluster,
      )
      .map((r) => ({ namespace: r.namespace, wholeAt: Number(r.whole_at ?? 0), unreadable: r.unreadable }));
  }

  /** The agent's word on one namespace, if it gave one. */
  namespace(namespace: string): NamespaceState | undefined {
    const r = this.sql.first<{ whole_at: number | null; unreadable: string | null }>(
      "SELECT whole_at, unreadable FROM agent_namespaces WHERE cluster = ? AND namespace = ?",
      this.cluster,
      namespace,
    );
    return r ? { namespace, wholeAt: Number(r.whole_at ?? 0), unreadable: r.unreadable } : undefined;
  }

  list(namespace: string): ClusterRunner[] {
    return this.sql
      .rows(`SELECT ${COLUMNS} FROM agent_view WHERE cluster = ? AND namespace = ? ORDER BY name`, this.cluster, namespace)
      .map((a) => clusterRunner(viewRow(a)));
  }

  get(namespace: string, name: string): ClusterRunner | undefined {
    const row = this.sql.first<ViewRow>(`SELECT ${COLUMNS} FROM agent_view WHERE cluster = ? AND namespace = ? AND name = ?`, this.cluster, namespace, name);
    return row ? clusterRunner(row) : undefined;
  }

  count(): number {
    return Number(this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM agent_view WHERE cluster = ?", this.cluster)?.n ?? 0);
  }
}
