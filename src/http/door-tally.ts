// Answers given without the ledger (no or a bad signature, too large, not JSON,
// ignored, shed; GET /agent refused before the upgrade) are counted in the isolate and sent to the ledger at most every
// FLUSH_EVERY_MS, so a flood of strangers costs the ledger no call and no write
// per request. What a signed delivery teaches (its GUID, so redelivery passes it
// over, and its repository's installation) is state, not a count: it goes to the
// ledger at once, with whatever was pending. An isolate evicted before its next
// flush loses only the strangers' counters of the last 10 s at most.
import type { Context } from "hono";
import type { WorkerEnv } from "../durable/ledger-for.ts";
import type { DeliveryOutcome } from "../ledger/count-delivery.ts";
import type { DoorBatch } from "../durable/receive-delivery.ts";
import { ledgerFor } from "../durable/ledger-for.ts";
import type { AppEnv } from "./app-env.ts";

const FLUSH_EVERY_MS = 10_000;
/** Bounds the isolate's memory under a flood: GUIDs beyond these are dropped (a redelivery may follow). */
const MAX_PENDING_GUIDS = 10_000;

interface Pending {
  counts: Map<string, { event: string; outcome: DeliveryOutcome; n: number }>;
  received: Set<string>;
  installations: Map<string, number>;
  /** GET /agent refused before the upgrade, by cluster (a known name, or "other"). */
  agentRefusals: Map<string, number>;
  lastFlush: number;
}

// Per ledger name: tests and the demo run several ledgers in one isolate.
const pendingByLedger = new Map<string, Pending>();

function pendingFor(ledgerName: string): Pending {
  let p = pendingByLedger.get(ledgerName);
  if (!p) {
    p = { counts: new Map(), received: new Set(), installations: new Map(), agentRefusals: new Map(), lastFlush: 0 };
    pendingByLedger.set(ledgerName, p);
  }
  return p;
}

export interface DoorExtras {
  /** A signed delivery's GUID (ignored: no facts), remembered so that redelivery passes it over. */
  guid?: string;
  installation?: { repo: string; id: number };
}

/** Counts one answer in the isolate; sends what is pending once FLUSH_EVERY_MS has passed since the last send. */
export function countAtDoor(c: Context<AppEnv>, ledgerName: string, event: string, outcome: DeliveryOutcome, extras: DoorExtras = {}): void {
  const p = pendingFor(ledgerName);
  const key = `${outcome}\u0000${event}`;
  const entry = p.counts.get(key);
  if (entry) entry.n++;
  else if (p.counts.size < 1000) p.counts.set(key, { event, outcome, n: 1 });
  else p.counts.set(`${outcome}\u0000`, { event: "", outcome, n: (p.counts.get(`${outcome}\u0000`)?.n ?? 0) + 1 });
  if (extras.guid !== undefined && p.received.size < MAX_PENDING_GUIDS) p.received.add(extras.guid);
  if (extras.installation) p.installations.set(extras.installation.repo, extras.installation.id);
  // A signed delivery (GitHub's pace, not a flood's) is sent now: the ledger keeps what it taught.
  if (extras.guid !== undefined || extras.installation) sendNow(c, ledgerName, p);
  else flushWhenDue(c, ledgerName, p);
}

/** Counts one GET /agent refused before the upgrade (`cluster`: a known name, or "other"), like a delivery answered at the door. */
export function countAgentRefusal(c: Context<AppEnv>, ledgerName: string, cluster: string): void {
  const p = pendingFor(ledgerName);
  // The caller bounds the names (known clusters and "other"), so the map stays small.
  p.agentRefusals.set(cluster, (p.agentRefusals.get(cluster) ?? 0) + 1);
  flushWhenDue(c, ledgerName, p);
}

function flushWhenDue(c: Context<AppEnv>, ledgerName: string, p: Pending): void {
  if (Date.now() - p.lastFlush >= FLUSH_EVERY_MS) sendNow(c, ledgerName, p);
}

function sendNow(c: Context<AppEnv>, ledgerName: string, p: Pending): void {
  p.lastFlush = Date.now();
  c.executionCtx.waitUntil(flushDoorCounts(c.env, ledgerName));
}

/** Sends what this isolate counted to the ledger now (also before /metrics answers); kept for the next send if the ledger fails. */
export async function flushDoorCounts(env: WorkerEnv, ledgerName: string): Promise<void> {
  const p = pendingFor(ledgerName);
  if (p.counts.size === 0 && p.received.size === 0 && p.installations.size === 0 && p.agentRefusals.size === 0) return;
  const batch: DoorBatch = {
    counts: [...p.counts.values()],
    received: [...p.received],
    installations: [...p.installations].map(([repo, id]) => ({ repo, id })),
    agentRefusals: [...p.agentRefusals].map(([cluster, n]) => ({ cluster, n })),
  };
  p.counts = new Map();
  p.received = new Set();
  p.installations = new Map();
  p.agentRefusals = new Map();
  try {
    await ledgerFor(env, ledgerName).countBatch(batch);
  } catch {
    for (const c of batch.counts) {
      const key = `${c.outcome}\u0000${c.event}`;
      p.counts.set(key, { ...c, n: c.n + (p.counts.get(key)?.n ?? 0) });
    }
    for (const g of batch.received) if (p.received.size < MAX_PENDING_GUIDS) p.received.add(g);
    for (const { repo, id } of batch.installations) if (!p.installations.has(repo)) p.installations.set(repo, id);
    for (const { cluster, n } of batch.agentRefusals ?? []) p.agentRefusals.set(cluster, n + (p.agentRefusals.get(cluster) ?? 0));
  }
}
