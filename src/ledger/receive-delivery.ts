// A signed delivery's way into the ledger: its GUID first (a GUID received
// before is a replay: counted, nothing else written), then what it says about
// installations, then its facts, except those about jobs older than the
// history (a replayed completion must not bring back a pruned runner).
import type { InstallationChange } from "../github/installation-from-webhook.ts";
import type { Fact } from "../model/facts.ts";
import { countDelivery, type DeliveryOutcome } from "./count-delivery.ts";
import { ReceivedGuidsTable } from "./received-guids-table.ts";
import type { LedgerStore } from "./ledger-store.ts";
import type { MemoryTable } from "./memory-table.ts";
import type { RunnerRecord } from "../model/runner.ts";
import type { Sql } from "./sql.ts";

export interface SignedDelivery {
  event: string;
  /** X-GitHub-Delivery: stable across redeliveries. */
  guid: string;
  facts: Fact[];
  installation?: InstallationChange;
}

export interface Received {
  outcome: Extract<DeliveryOutcome, "recorded" | "duplicate" | "stale">;
  changed: RunnerRecord[];
  /** An installation deleted, suspended or repositories removed: applied only once GitHub confirms it (confirm-installation.ts). */
  toConfirm?: Exclude<InstallationChange, { kind: "restored" }>;
}

export function receiveDelivery(
  sql: Sql,
  state: LedgerStore,
  d: SignedDelivery,
  now: number,
  policy: { historyDays: number; maxJobSeconds: number },
): Received {
  const { historyDays } = policy;
  const toConfirm = d.installation?.kind === "restored" ? undefined : d.installation;
  const answer = (outcome: Received["outcome"], changed: RunnerRecord[] = []): Received => {
    countDelivery(state.counters, d.event, outcome);
    return outcome === "duplicate" || !toConfirm ? { outcome, changed } : { outcome, changed, toConfirm };
  };
  if (!new ReceivedGuidsTable(sql).add(d.guid, now)) return answer("duplicate");
  // Unsuspended: used again at once (a false claim costs only a refused mint). The rest waits for GitHub's word.
  if (d.installation?.kind === "restored") state.memory.delete(`installation-revoked/${d.installation.id}`);
  // The history, and never less than the bound and a day: a job still within the bound is never stale.
  const windowStart = now - Math.max(historyDays * 86_400_000, policy.maxJobSeconds * 1000 + 86_400_000);
  const fresh = d.facts.filter((f) => factTime(f) >= windowStart);
  for (const f of fresh) if ("repo" in f && f.installationId !== undefined) state.memory.installationNamed(f.repo, f.installationId);
  if (fresh.length < d.facts.length && fresh.length === 0) return answer("stale");
  return answer("recorded", state.record(fresh, now));
}

/** Signed deliveries answered without facts, batched by the Worker: their GUIDs and the installations they named. */
export function rememberBatch(sql: Sql, memory: MemoryTable, batch: { received: string[]; installations: { repo: string; id: number }[] }, now: number): void {
  const received = new ReceivedGuidsTable(sql);
  for (const guid of batch.received) received.add(guid, now);
  for (const { repo, id } of batch.installations) memory.installationNamed(repo, id);
}

/** When the job a fact is about started (a run: when it completed), in ms; NaN never counts as stale. */
function factTime(f: Fact): number {
  let at: string | undefined;
  if (f.type === "job-started") at = f.startedAt;
  else if (f.type === "job-completed") at = f.startedAt ?? f.completedAt;
  else if (f.type === "run-completed") at = f.updatedAt;
  const t = at === undefined ? Number.NaN : Date.parse(at);
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
}
