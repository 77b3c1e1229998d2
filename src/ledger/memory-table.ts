// Small named values that must outlive an isolate: the deliveries mark,
// back-offs per GitHub scope, installations of repositories, the pause switch.
import type { GithubMemory } from "../github/installation-and-rate-memory.ts";
import { type ListShapeMemory, type ListShapeNote, noteHolds } from "../model/list-shape.ts";
import type { Sql } from "./sql.ts";

/** When the last sweep started (the real clock); the in-cluster sweep clock counts from it (src/durable/sweep-clock.ts). */
export const SWEEP_RAN_KEY = "sweep-ran-at";
const RUNNER_IDS_KEY = "runner-ids-match";
const LIST_SHAPE_PREFIX = "list-shape/";

export class MemoryTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  get<T>(key: string): T | undefined {
    const row = this.sql.first<{ value: string }>("SELECT value FROM memory WHERE key = ?", key);
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  set(key: string, value: unknown): void {
    this.sql.run("INSERT INTO memory (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, JSON.stringify(value));
  }

  delete(key: string): void {
    this.sql.run("DELETE FROM memory WHERE key = ?", key);
  }

  /**
   * The clusters where ARC's runner ids were seen to match GitHub's (an object of a job's runner name carrying
   * the job's runner_id), and since when (ms): only there does another id rule an object out.
   */
  runnerIdsMatch(): Record<string, number> {
    return this.get<Record<string, number>>(RUNNER_IDS_KEY) ?? {};
  }

  /** Ids seen matching in `clusters` at `at`: the first time stands (a write only for a cluster new to it). */
  runnerIdsMatched(clusters: Iterable<string>, at: number): void {
    const known = this.runnerIdsMatch();
    const fresh = [...clusters].filter((c) => known[c] === undefined);
    if (fresh.length > 0) this.set(RUNNER_IDS_KEY, { ...known, ...Object.fromEntries(fresh.map((c) => [c, at])) });
  }

  /** How direct mode lists `cluster` (src/model/list-shape.ts): a row while it falls back to full objects, none while Tables serve. */
  listShape(cluster: string): ListShapeMemory {
    const key = `${LIST_SHAPE_PREFIX}${cluster}`;
    return {
      note: () => this.get<ListShapeNote>(key),
      // The first refusal stands until it expires: the namespaces of one sweep, listed at once, write it once.
      refused: (why, at) => {
        if (!noteHolds(this.get<ListShapeNote>(key), at)) this.set(key, { shape: "full", since: at, why: why.slice(0, 300) } satisfies ListShapeNote);
      },
      served: () => this.delete(key),
    };
  }

  /** Forgets the installation for every repository it was remembered for; it is not used again before `until`. */
  revokeInstallation(id: number, until: number): void {
    this.sql.run("DELETE FROM memory WHERE key >= 'installation/' AND key < 'installation0' AND value = ?", JSON.stringify(id));
    this.set(`installation-revoked/${id}`, until);
  }

  /** What a delivery says: the repository's installation is this one (a write only on change). */
  installationNamed(repo: string, id: number): void {
    if (this.get<number>(`installation/${repo}`) === id) return;
    this.set(`installation/${repo}`, id);
    this.delete(`installation-revoked/${id}`);
    this.delete(`installation-failed/${repo}`);
  }

  /** GitHub's installations and back-offs, read and written through this table (a write only on change). */
  github(): GithubMemory {
    return {
      installation: (repo) => this.get<number>(`installation/${repo}`),
      rememberInstallation: (repo, id) => this.set(`installation/${repo}`, id),
      forgetInstallation: (repo) => this.delete(`installation/${repo}`),
      revokeInstallation: (id, until) => this.revokeInstallation(id, until),
      installationRevoked: (id) => (this.get<number>(`installation-revoked/${id}`) ?? 0) > Date.now(),
      installationFailedUntil: (repo) => this.get<number>(`installation-failed/${repo}`) ?? 0,
      rememberInstallationFailure: (repo, until) => this.set(`installation-failed/${repo}`, until),
      rate: (scope) => ({
        blockedUntil: () => this.get<number>(`backoff/${scope}`) ?? 0,
        block: (until) => this.set(`backoff/${scope}`, until),
      }),
    };
  }
}
