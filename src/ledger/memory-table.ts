// Small named values that must outlive an isolate: the deliveries mark,
// back-offs per GitHub scope, installations of repositories, the pause switch,
// the sweep's clock and figures, the agents' connections. Every key is in one
// typed list (MemoryValues), so a key is spelled once and its value read as
// the type it was written with.
import type { GithubMemory } from "../github/installation-and-rate-memory.ts";
import type { ClusterIdentity } from "../model/cluster-identity.ts";
import type { IdleCount } from "../model/idle.ts";
import { type ListShapeMemory, type ListShapeNote, noteHolds } from "../model/list-shape.ts";
import type { DeliveriesMark } from "../reaper/redeliver-failed.ts";
import type { PassSummary } from "../reaper/run-pass.ts";
import type { CallBudget } from "../github/call-budget.ts";
import type { Sql } from "./sql.ts";

/** The last sweep's figures (the admin page, /metrics). */
export type LastSweep = Pick<PassSummary, "checked" | "deleted" | "kept" | "waiting" | "gone" | "heldBack" | "githubCalls" | "dryRun" | "paused"> &
  Pick<CallBudget, "rateLimitRemaining" | "rateLimitLimit"> & {
    /** Of githubCalls, those GitHub counts against the primary rate limit (absent in a sweep stored before issue 47). */
    githubCounted?: number;
    at: string;
    durationMs: number;
    errors: Record<string, number>;
    unreadable?: string[];
  };

export type PausedBy = "bearer" | "session";
export interface PauseState {
  since: string;
  by: PausedBy;
}

/** Every key of the memory table and its value's type. A key ending in `/` or `:` is followed by a name. */
export interface MemoryValues {
  /** When the last sweep started (the real clock); the in-cluster sweep clock counts from it (src/durable/sweep-clock.ts). */
  "sweep-ran-at": number;
  /** When the sweep last pruned the history (it prunes once an hour). */
  "pruned-at": number;
  "last-sweep": LastSweep;
  /** The pause switch (pause-switch.ts): present while paused. */
  paused: PauseState;
  /** How far the failed deliveries were listed (src/reaper/redeliver-failed.ts). */
  "deliveries-mark": DeliveriesMark;
  /** The deletion window's and the GitHub calls' times (sliding windows of 60 s). */
  "deletions-times": number[];
  "github-times": number[];
  /** The sweep's count of runners that never work (idle-port.ts). */
  "idle-runners": IdleCount;
  /** Per cluster name, since when ARC's runner ids were seen matching GitHub's: before identities, no longer read (never trusted). */
  "runner-ids-match": Record<string, number>;
  /** Per cluster identity (its kube-system namespace's uid), since when ARC's runner ids were seen matching GitHub's. */
  "runner-ids-match-by-identity": Record<string, number>;
  /** What each cluster name points at now (src/model/cluster-identity.ts). */
  [cluster: `cluster-identity/${string}`]: ClusterIdentity;
  /** How direct mode lists a cluster, while it falls back to full objects. */
  [cluster: `list-shape/${string}`]: ListShapeNote;
  /** A repository's installation; an installation forgotten until a time; a repository's failed look-up until a time. */
  [repo: `installation/${string}`]: number;
  [id: `installation-revoked/${number}`]: number;
  [repo: `installation-failed/${string}`]: number;
  /** When GitHub was last asked to confirm an installation's change (src/durable/confirm-installation.ts). */
  [change: `github-checked/installation/${string}`]: number;
  /** A GitHub rate scope blocked until a time. */
  [scope: `backoff/${string}`]: number;
  /** The agent link's (src/agent-link/attachment.ts): the clusters seen, each one's connection and when it left. */
  "agent-clusters": string[];
  [cluster: `agent-conn:${string}`]: string;
  [cluster: `agent-disconnected-at:${string}`]: number;
  /** The test ledger's settings (test/hooks/test-ledger.ts); production never writes it. */
  "test-settings": Record<string, string>;
  /** The test ledger's failing alarm: how many more runs throw, and whether the last drops the alarm (test/hooks/test-ledger.ts). */
  "test-alarm-failures": { left: number; giveUp: boolean };
}

export type MemoryKey = keyof MemoryValues;

export class MemoryTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  get<K extends MemoryKey>(key: K): MemoryValues[K] | undefined {
    const row = this.sql.first<{ value: string }>("SELECT value FROM memory WHERE key = ?", key);
    return row ? (JSON.parse(row.value) as MemoryValues[K]) : undefined;
  }

  set<K extends MemoryKey>(key: K, value: MemoryValues[K]): void {
    this.sql.run("INSERT INTO memory (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, JSON.stringify(value));
  }

  delete(key: MemoryKey): void {
    this.sql.run("DELETE FROM memory WHERE key = ?", key);
  }

  /**
   * The clusters where ARC's runner ids were seen to match GitHub's (an object of a job's runner name carrying
   * the job's runner_id), and since when (ms): only there does another id rule an object out. Kept per cluster
   * identity: a cluster whose identity is unknown, or whose identity changed since, is not among them.
   */
  runnerIdsMatch(): Record<string, number> {
    const byIdentity = this.get("runner-ids-match-by-identity") ?? {};
    const out: Record<string, number> = {};
    for (const [cluster, identity] of Object.entries(this.clusterIdentities())) {
      const since = identity.uid === undefined ? undefined : byIdentity[identity.uid];
      if (since !== undefined) out[cluster] = since;
    }
    return out;
  }

  /** Ids seen matching in `clusters` at `at`, for each one's identity now: the first time stands; a cluster of unknown identity proves nothing. */
  runnerIdsMatched(clusters: Iterable<string>, at: number): void {
    const known = this.get("runner-ids-match-by-identity") ?? {};
    const fresh = [...clusters].map((c) => this.clusterIdentity(c)?.uid).filter((uid): uid is string => uid !== undefined && known[uid] === undefined);
    if (fresh.length > 0) this.set("runner-ids-match-by-identity", { ...known, ...Object.fromEntries(fresh.map((uid) => [uid, at])) });
  }

  /** What a cluster name points at, as last read or reported. */
  clusterIdentity(cluster: string): ClusterIdentity | undefined {
    return this.get(`cluster-identity/${cluster}`);
  }

  /** Every cluster name's identity, by name. */
  clusterIdentities(): Record<string, ClusterIdentity> {
    const rows = this.sql.all<{ key: string; value: string }>("SELECT key, value FROM memory WHERE key >= 'cluster-identity/' AND key < 'cluster-identity0'");
    return Object.fromEntries(rows.map((r) => [r.key.slice("cluster-identity/".length), JSON.parse(r.value) as ClusterIdentity]));
  }

  /**
   * Records what a cluster name points at now. A known identity that differs from the last known one is a
   * change: answered (for the caller to log and count), kept beside it, and what was known of the previous
   * identity's ids is forgotten. An unknown one (`uid` absent) trusts nothing until an identity is known again.
   */
  noteClusterIdentity(cluster: string, seen: Omit<ClusterIdentity, "previous" | "changedAt">): { changedFrom?: string } {
    const before = this.clusterIdentity(cluster);
    const last = before?.uid ?? before?.previous;
    const changed = seen.uid !== undefined && last !== undefined && last !== seen.uid;
    const next: ClusterIdentity = { ...seen };
    if (changed) {
      next.previous = last;
      next.changedAt = seen.at;
      const known = this.get("runner-ids-match-by-identity") ?? {};
      if (known[last] !== undefined) {
        const { [last]: _dropped, ...rest } = known;
        this.set("runner-ids-match-by-identity", rest);
      }
    } else if (before?.changedAt !== undefined) {
      next.previous = before.previous;
      next.changedAt = before.changedAt;
    }
    if (seen.uid === undefined && before?.uid !== undefined) next.previous = before.uid;
    if (JSON.stringify(before) !== JSON.stringify(next)) this.set(`cluster-identity/${cluster}`, next);
    return changed ? { changedFrom: last } : {};
  }

  /** How direct mode lists `cluster` (src/model/list-shape.ts): a row while it falls back to full objects, none while Tables serve. */
  listShape(cluster: string): ListShapeMemory {
    const key = `list-shape/${cluster}` as const;
    return {
      note: () => this.get(key),
      // The first refusal stands until it expires: the namespaces of one sweep, listed at once, write it once.
      refused: (why, at) => {
        if (!noteHolds(this.get(key), at)) this.set(key, { shape: "full", since: at, why: why.slice(0, 300) } satisfies ListShapeNote);
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
    if (this.get(`installation/${repo}`) === id) return;
    this.set(`installation/${repo}`, id);
    this.delete(`installation-revoked/${id}`);
    this.delete(`installation-failed/${repo}`);
  }

  /** GitHub's installations and back-offs, read and written through this table (a write only on change). */
  github(): GithubMemory {
    return {
      installation: (repo) => this.get(`installation/${repo}`),
      rememberInstallation: (repo, id) => this.set(`installation/${repo}`, id),
      forgetInstallation: (repo) => this.delete(`installation/${repo}`),
      revokeInstallation: (id, until) => this.revokeInstallation(id, until),
      installationRevoked: (id) => (this.get(`installation-revoked/${id}`) ?? 0) > Date.now(),
      installationFailedUntil: (repo) => this.get(`installation-failed/${repo}`) ?? 0,
      rememberInstallationFailure: (repo, until) => this.set(`installation-failed/${repo}`, until),
      rate: (scope) => ({
        blockedUntil: () => this.get(`backoff/${scope}`) ?? 0,
        block: (until) => this.set(`backoff/${scope}`, until),
      }),
    };
  }
}
