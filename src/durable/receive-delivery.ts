// A signed delivery's way through the ledger: its GUID first (a GUID received
// before is a replay: counted, nothing else written), then what it says about
// installations, then its facts, except those about jobs older than the
// history (a replayed completion must not bring back a pruned runner), the
// delivery counted, the alarm moved earlier for the rows it changed, and an
// installation's removal confirmed with GitHub. Beside it: the batch of
// deliveries the Worker answered at its door without the ledger.
import type { Settings } from "../config/settings.ts";
import type { InstallationChange } from "../github/installation-from-webhook.ts";
import { tokenCacheFor } from "../github/token-cache.ts";
import { countDelivery, type DeliveryOutcome } from "../ledger/count-delivery.ts";
import { CountersTable } from "../ledger/counters-table.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import { MemoryTable } from "../ledger/memory-table.ts";
import { ReceivedGuidsTable } from "../ledger/received-guids-table.ts";
import type { Sql } from "../ledger/sql.ts";
import type { Fact } from "../model/facts.ts";
import { historyWindowMs } from "../model/history-window.ts";
import type { RunnerRecord } from "../model/runner.ts";
import { confirmInstallationChange } from "./confirm-installation.ts";
import type { LedgerRoot } from "./ledger-root.ts";

/** GitHub's word on an installation is asked while the delivery waits: well inside GitHub's 10 s. */
const CONFIRM_TIMEOUT_MS = 4_000;

/** What the Worker counted at its door (in its isolate) since its last flush. */
export interface DoorBatch {
  counts: { event: string; outcome: DeliveryOutcome; n: number }[];
  /** GUIDs of signed deliveries answered without facts (ignored), so that redelivery passes them over. */
  received: string[];
  /** The installation each of those deliveries named, per repository. */
  installations: { repo: string; id: number }[];
  /** GET /agent refused before the upgrade, by cluster (a known name, or "other"). */
  agentRefusals?: { cluster: string; n: number }[];
}

export interface Receipt {
  outcome: Received["outcome"];
  /** Rows this delivery wrote (facts and the delivery counter). */
  rowsWritten: number;
  changed: number;
}

export interface SignedDelivery {
  event: string;
  /** X-GitHub-Delivery: stable across redeliveries. */
  guid: string;
  facts: Fact[];
  installation?: InstallationChange;
}

interface Received {
  outcome: Extract<DeliveryOutcome, "recorded" | "duplicate" | "stale">;
  changed: RunnerRecord[];
  /** An installation deleted, suspended or repositories removed: applied only once GitHub confirms it (confirm-installation.ts). */
  toConfirm?: Exclude<InstallationChange, { kind: "restored" }>;
}

/** A signed delivery: a replay is only counted; its facts are recorded idempotently, and the delivery counted. */
export async function receiveDelivery(root: LedgerRoot, delivery: SignedDelivery): Promise<Receipt> {
  const before = root.cost();
  const settings = root.settings();
  const store = root.store(settings);
  const { outcome, changed, toConfirm } = recordDelivery(root.sql, store, delivery, Date.now(), settings);
  if (changed.length > 0) await armFor(root.storage, changed);
  if (toConfirm) await confirmInstallation(root, settings, store, toConfirm);
  return { outcome, rowsWritten: root.cost().rowsWritten - before.rowsWritten, changed: changed.length };
}

/** The delivery's GUID, installations and facts written, and the delivery counted: what it changed. */
function recordDelivery(sql: Sql, state: LedgerStore, d: SignedDelivery, now: number, policy: { historyDays: number; maxJobSeconds: number }): Received {
  const toConfirm = d.installation?.kind === "restored" ? undefined : d.installation;
  const answer = (outcome: Received["outcome"], changed: RunnerRecord[] = []): Received => {
    countDelivery(state.counters, d.event, outcome);
    return outcome === "duplicate" || !toConfirm ? { outcome, changed } : { outcome, changed, toConfirm };
  };
  if (!new ReceivedGuidsTable(sql).add(d.guid, now)) return answer("duplicate");
  // Unsuspended: used again at once (a false claim costs only a refused mint). The rest waits for GitHub's word.
  if (d.installation?.kind === "restored") state.memory.delete(`installation-revoked/${d.installation.id}`);
  // The history, and never less than the bound and a day: a job still within the bound is never stale.
  const windowStart = now - historyWindowMs(policy);
  const fresh = d.facts.filter((f) => factTime(f) >= windowStart);
  for (const f of fresh) if ("repo" in f && f.installationId !== undefined) state.memory.installationNamed(f.repo, f.installationId);
  if (fresh.length < d.facts.length && fresh.length === 0) return answer("stale");
  return answer("recorded", state.record(fresh, now));
}

/**
 * After a delivery: only the rows it changed can need the alarm earlier, so their due times are compared
 * with the armed one instead of every table's earliest (four MIN statements a delivery). A row whose due
 * time moved later leaves an early alarm, which finds nothing due and re-arms after its pass.
 */
async function armFor(storage: DurableObjectStorage, changed: readonly RunnerRecord[]): Promise<void> {
  let earliest: number | undefined;
  for (const r of changed) if (r.dueAt !== null && (earliest === undefined || r.dueAt < earliest)) earliest = r.dueAt;
  if (earliest === undefined) return;
  const current = await storage.getAlarm();
  if (current === null || earliest < current) await storage.setAlarm(earliest);
}

/** An installation's deletion, suspension or lost repositories, applied only as GitHub confirms it, within the GitHub budget. */
async function confirmInstallation(root: LedgerRoot, settings: Settings, store: LedgerStore, change: NonNullable<Received["toConfirm"]>): Promise<void> {
  const now = Date.now();
  const spent = store.githubTimes(now, settings.maxGithubCallsPerMinute).length;
  const { github, budget } = root.clients(settings, store, tokenCacheFor(settings), settings.maxGithubCallsPerMinute - spent, CONFIRM_TIMEOUT_MS);
  const confirmation = await confirmInstallationChange(github, store.memory, change, now, settings.historyDays);
  store.spendGithubCalls(Date.now(), budget.used, settings.maxGithubCallsPerMinute);
  root.log({
    msg: "installation change",
    claimed: change,
    ...(confirmation.kind === "applied" ? { forgot: confirmation.forgot } : { kept: confirmation.why }),
    githubCalls: budget.used,
  });
}

/** Deliveries the Worker answered without the ledger, counted in its isolate and sent here at most every 10 s: counts, GUIDs, installations. */
export function countDoorBatch(sql: Sql, batch: DoorBatch, now: number): void {
  const counters = new CountersTable(sql);
  for (const { event, outcome, n } of batch.counts) countDelivery(counters, event, outcome, n);
  for (const { cluster, n } of batch.agentRefusals ?? []) counters.add("arc_reaper_agent_refusals_total", { cluster }, n);
  const received = new ReceivedGuidsTable(sql);
  for (const guid of batch.received) received.add(guid, now);
  const memory = new MemoryTable(sql);
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
