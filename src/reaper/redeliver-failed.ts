// GitHub never retries a failed delivery. Every REAPER_DELIVERIES_EVERY_SECONDS
// a sweep lists the App's deliveries since the last listing ended and asks
// GitHub to redeliver the failed workflow_job and workflow_run deliveries whose
// GUID never succeeded; a redelivery that fails too is asked again at a later
// listing while the GUID is inside the look-back, never twice in one listing.
// A listing cut short by the budget resumes from its cursor at the next sweep.
import type { Github, HookDelivery } from "../github/github-client.ts";
import type { RedeliveryRow } from "../ledger/redeliveries-table.ts";

const EVENTS = new Set(["workflow_job", "workflow_run"]);
// A delivery is listed only after its attempt ended (up to GitHub's 10 s timeout):
// re-read a little of what the previous listing saw, so none slips between two.
const OVERLAP_MS = 2 * 60_000;
/** A GUID is asked for at most this many times. */
export const MAX_REDELIVERY_ATTEMPTS = 5;
const succeeded = (d: HookDelivery): boolean => d.statusCode >= 200 && d.statusCode < 300;

/** Kept in the ledger between sweeps. */
export interface DeliveriesMark {
  /** Deliveries up to this time (ms) were listed. */
  listedUntil: number;
  /** A listing that ran out of budget: where to go on. */
  resume?: { cursor: string; startedAt: number; since: number };
}

export interface RedeliveryReport {
  listed: number;
  asked: string[]; // GUIDs
  failed: string[]; // why, per failed ask
  skipped?: string; // why no listing ran
}

export interface RedeliveryStore {
  get(guid: string): RedeliveryRow | undefined;
  put(row: RedeliveryRow): void;
  pending(since: number): RedeliveryRow[];
}

export async function redeliverFailed(opts: {
  github: Github;
  store: RedeliveryStore;
  mark: DeliveriesMark;
  now: number;
  lookbackSeconds: number;
  /** True once the share of the budget that redelivery may use is spent. */
  maxCallsUsed: () => boolean;
}): Promise<{ report: RedeliveryReport; mark: DeliveriesMark }> {
  const report: RedeliveryReport = { listed: 0, asked: [], failed: [] };
  const lookbackStart = opts.now - opts.lookbackSeconds * 1000;
  const resume = opts.mark.resume;
  const listing = resume?.startedAt ?? opts.now;
  const since = resume?.since ?? Math.max(lookbackStart, opts.mark.listedUntil - OVERLAP_MS);
  const page = await opts.github.deliveriesSince(since, { cursor: resume?.cursor, stop: opts.maxCallsUsed });
  report.listed = page.deliveries.length;

  const byGuid = new Map<string, HookDelivery[]>();
  for (const d of page.deliveries) {
    if (EVENTS.has(d.event)) byGuid.set(d.guid, [...(byGuid.get(d.guid) ?? []), d]);
  }
  const candidates = new Map<string, { event: string; firstFailedAt: number; deliveryId: string }>();
  for (const [guid, attempts] of byGuid) {
    const known = opts.store.get(guid);
    if (attempts.some(succeeded)) {
      if (known && !known.succeeded) opts.store.put({ ...known, succeeded: true });
      continue;
    }
    const latest = attempts.sort((a, b) => b.deliveredAt.localeCompare(a.deliveredAt))[0]!;
    const oldest = Math.min(...attempts.map((a) => Date.parse(a.deliveredAt)));
    candidates.set(guid, { event: latest.event, firstFailedAt: Math.min(oldest, known?.firstFailedAt ?? oldest), deliveryId: latest.id });
  }
  // Earlier asks that GitHub refused: no new attempt will show up in a listing, so ask again.
  for (const row of opts.store.pending(lookbackStart)) {
    if (row.askFailed && !candidates.has(row.guid)) candidates.set(row.guid, { event: row.event, firstFailedAt: row.firstFailedAt, deliveryId: row.deliveryId });
  }

  let handledAll = page.complete;
  for (const [guid, c] of candidates) {
    const known = opts.store.get(guid);
    if (known?.succeeded || (known && known.lastListing === listing)) continue;
    if (known && known.attempts >= MAX_REDELIVERY_ATTEMPTS) continue;
    if (c.firstFailedAt < lookbackStart) continue;
    if (opts.maxCallsUsed()) {
      handledAll = false;
      break;
    }
    const row: RedeliveryRow = {
      guid, event: c.event, deliveryId: c.deliveryId, askFailed: false, attempts: (known?.attempts ?? 0) + 1,
      lastListing: listing, firstFailedAt: c.firstFailedAt, succeeded: false,
    };
    try {
      await opts.github.redeliver(c.deliveryId);
      report.asked.push(guid);
    } catch (e) {
      row.askFailed = true;
      report.failed.push(`${guid}: ${(e as Error).message}`);
    }
    opts.store.put(row);
  }

  if (!page.complete && page.cursor) return { report, mark: { listedUntil: opts.mark.listedUntil, resume: { cursor: page.cursor, startedAt: listing, since } } };
  return { report, mark: handledAll ? { listedUntil: listing } : { listedUntil: opts.mark.listedUntil } };
}
