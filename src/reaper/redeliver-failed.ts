// GitHub never retries a failed delivery. Every REAPER_DELIVERIES_EVERY_SECONDS
// a sweep lists the App's failed deliveries (status=failure: status codes
// 400-599) since the last listing ended and asks GitHub to redeliver the
// workflow_job and workflow_run deliveries whose GUID the ledger never received;
// a redelivery that fails too is asked again at a later listing while the GUID
// is inside the look-back, never twice in one listing. A listing cut short by
// the budget resumes from its cursor at the next sweep. A GitHub Enterprise
// Server that refuses `status` (422) is listed in full, as before, for a day.
// A delivery whose connection never completed has no status code and is in
// neither listing: the level-triggered net (unseen busy runners, rechecks) covers it.
import { GithubError, type Github, type HookDelivery } from "../github/github-client.ts";
import type { RedeliveryRow } from "../model/redelivery.ts";
import { errorText } from "../model/error-text.ts";

// The deliveries whose facts arc-reaper records: the rest are never worth a redelivery.
const ACTIONS: Record<string, ReadonlySet<string | null>> = {
  workflow_job: new Set(["in_progress", "completed"]),
  workflow_run: new Set(["completed"]),
};
const acted = (d: HookDelivery): boolean => ACTIONS[d.event]?.has(d.action) ?? false;
/** After a 422 to `status`, the full listing is used this long before the filter is tried again. */
const UNFILTERED_RETRY_MS = 86_400_000;
// A delivery is listed only after its attempt ended (up to GitHub's 10 s timeout):
// re-read a little of what the previous listing saw, so none slips between two.
const OVERLAP_MS = 2 * 60_000;
/** A GUID is asked for at most this many times. */
const MAX_REDELIVERY_ATTEMPTS = 5;
const succeeded = (d: HookDelivery): boolean => d.statusCode >= 200 && d.statusCode < 300;

/** Kept in the ledger between sweeps. */
export interface DeliveriesMark {
  /** Deliveries up to this time (ms) were listed. */
  listedUntil: number;
  /** When the last listing started (ms). */
  lastListingAt?: number;
  /** A listing that ran out of budget: where to go on (`full`: a listing without the status filter). */
  resume?: { cursor: string; startedAt: number; since: number; full?: boolean };
  /** When GitHub last refused `status=failure` (422): the full listing is used meanwhile. */
  filterRefusedAt?: number;
}

export interface RedeliveryReport {
  listed: number;
  asked: string[]; // GUIDs
  failed: string[]; // why, per failed ask
  skipped?: string; // why no listing ran
}

export interface RedeliveryStore {
  /** Whether the ledger received a delivery of this GUID: then it needs no redelivery. */
  received(guid: string): boolean;
  get(guid: string): RedeliveryRow | undefined;
  put(row: RedeliveryRow): void;
  pending(since: number): RedeliveryRow[];
}

export interface RedeliveryOptions {
  github: Github;
  store: RedeliveryStore;
  mark: DeliveriesMark;
  now: number;
  lookbackSeconds: number;
  everySeconds: number;
  /** True once the share of the budget that redelivery may use is spent. */
  maxCallsUsed: () => boolean;
}

/**
 * Every sweep: asks left over by an earlier listing (cut short by the budget).
 * Every `everySeconds` (or while a cut listing resumes): a listing, then asks.
 */
export async function redeliverFailed(opts: RedeliveryOptions): Promise<{ report: RedeliveryReport; mark: DeliveriesMark }> {
  const report: RedeliveryReport = { listed: 0, asked: [], failed: [] };
  const lookbackStart = opts.now - opts.lookbackSeconds * 1000;
  // Asked in this sweep: its new attempt cannot show up in a listing made seconds later.
  const askedNow = new Set<string>();
  const ask = async (row: RedeliveryRow): Promise<boolean> => {
    if (opts.maxCallsUsed()) return false;
    askedNow.add(row.guid);
    const next: RedeliveryRow = { ...row, attempts: row.attempts + 1, askFailed: false };
    try {
      await opts.github.redeliver(row.deliveryId);
      report.asked.push(row.guid);
    } catch (e) {
      next.askFailed = true;
      report.failed.push(`${row.guid}: ${errorText(e)}`);
    }
    opts.store.put(next);
    return true;
  };

  // Left over from an earlier listing: never asked yet, so no listing has asked them twice.
  for (const row of opts.store.pending(lookbackStart)) {
    if (row.attempts !== 0) continue;
    if (opts.store.received(row.guid)) opts.store.put({ ...row, succeeded: true });
    else if (!(await ask(row))) break;
  }
  const { mark } = opts;
  if (!mark.resume && mark.lastListingAt !== undefined && opts.now - mark.lastListingAt < opts.everySeconds * 1000) {
    report.skipped = `listed ${Math.round((opts.now - mark.lastListingAt) / 1000)}s ago, every ${opts.everySeconds}s`;
    return { report, mark };
  }
  if (opts.maxCallsUsed()) {
    report.skipped = "the budget's share for redelivery is spent";
    return { report, mark };
  }

  const resume = mark.resume;
  const listing = resume?.startedAt ?? opts.now;
  const since = resume?.since ?? Math.max(lookbackStart, mark.listedUntil - OVERLAP_MS);
  let filterRefusedAt = mark.filterRefusedAt;
  let full = resume ? resume.full === true : filterRefusedAt !== undefined && opts.now - filterRefusedAt < UNFILTERED_RETRY_MS;
  const list = () => opts.github.deliveriesSince(since, { cursor: resume?.cursor, stop: opts.maxCallsUsed, ...(full ? {} : { status: "failure" as const }) });
  let page: Awaited<ReturnType<typeof list>>;
  try {
    page = await list();
  } catch (e) {
    // A GitHub Enterprise Server that does not know `status` answers 422: list everything instead.
    if (full || resume || !(e instanceof GithubError) || e.status !== 422 || opts.maxCallsUsed()) throw e;
    [full, filterRefusedAt] = [true, opts.now];
    page = await list();
  }
  report.listed = page.deliveries.length;

  const byGuid = new Map<string, HookDelivery[]>();
  for (const d of page.deliveries) {
    if (acted(d)) byGuid.set(d.guid, [...(byGuid.get(d.guid) ?? []), d]);
  }
  const candidates: RedeliveryRow[] = [];
  for (const [guid, attempts] of byGuid) {
    const known = opts.store.get(guid);
    // Received by the ledger (the first attempt timed out after it was recorded, or a redelivery
    // came), or, in a full listing, an attempt that succeeded: nothing to ask.
    if (attempts.some(succeeded) || opts.store.received(guid)) {
      if (known && !known.succeeded) opts.store.put({ ...known, succeeded: true });
      continue;
    }
    // Its success was seen on another page of this listing, or by an earlier one: never asked again.
    if (known?.succeeded) continue;
    const latest = attempts.sort((a, b) => b.deliveredAt.localeCompare(a.deliveredAt))[0]!;
    const oldest = Math.min(...attempts.map((a) => Date.parse(a.deliveredAt)));
    candidates.push({
      guid,
      event: latest.event,
      deliveryId: latest.id,
      askFailed: known?.askFailed ?? false,
      attempts: known?.attempts ?? 0,
      lastListing: known?.lastListing ?? 0,
      firstFailedAt: Math.min(oldest, known?.firstFailedAt ?? oldest),
      succeeded: false,
    });
  }
  // Asks GitHub refused at an earlier listing: no new attempt shows up in a listing, so ask again at this one.
  const seen = new Set(candidates.map((c) => c.guid));
  for (const row of opts.store.pending(lookbackStart)) {
    if (row.askFailed && row.attempts > 0 && !seen.has(row.guid) && !opts.store.received(row.guid)) candidates.push(row);
  }

  for (const c of candidates) {
    if (askedNow.has(c.guid) || c.lastListing === listing || c.attempts >= MAX_REDELIVERY_ATTEMPTS || c.firstFailedAt < lookbackStart) continue;
    const row = { ...c, lastListing: listing };
    // Out of budget: a GUID never asked is kept as a pending ask for the next sweeps, without listing
    // again; one asked before keeps its count (its redelivery may be on its way).
    if (!(await ask(row)) && c.attempts === 0) opts.store.put({ ...row, attempts: 0, askFailed: true });
  }

  const refused = filterRefusedAt !== undefined ? { filterRefusedAt } : {};
  const next: DeliveriesMark =
    !page.complete && page.cursor
      ? {
          listedUntil: mark.listedUntil,
          lastListingAt: listing,
          resume: { cursor: page.cursor, startedAt: listing, since, ...(full ? { full } : {}) },
          ...refused,
        }
      : { listedUntil: listing, lastListingAt: listing, ...refused };
  return { report, mark: next };
}
