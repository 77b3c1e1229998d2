// GitHub never retries a failed delivery. Each sweep asks it to redeliver the
// failed workflow_job and workflow_run deliveries of the look-back window whose
// GUID never succeeded, once per GUID (remembered as a fact).
import type { Github, HookDelivery } from "../github/github-client.ts";
import type { Fact } from "../store/facts.ts";

const EVENTS = new Set(["workflow_job", "workflow_run"]);
// A delivery is listed only after its attempt ended (up to GitHub's 10 s timeout):
// re-read a little of what the previous sweep saw, so none slips between two listings.
const OVERLAP_MS = 2 * 60_000;
const succeeded = (d: HookDelivery): boolean => d.statusCode >= 200 && d.statusCode < 300;

export interface RedeliveryReport {
  listed: number;
  asked: string[]; // GUIDs
  failed: string[]; // why, per failed ask
}

export async function redeliverFailed(opts: {
  github: Github;
  facts: readonly Fact[];
  record: (fact: Fact) => Promise<void>;
  now: number;
  lookbackSeconds: number;
  /** Stop asking once this many GitHub calls of the sweep are spent, to leave room for runner checks. */
  maxCallsUsed: () => boolean;
}): Promise<RedeliveryReport> {
  const report: RedeliveryReport = { listed: 0, asked: [], failed: [] };
  const alreadyAsked = new Set(opts.facts.flatMap((f) => (f.type === "redelivery-requested" ? [f.guid] : [])));
  // Only what the previous sweep of this isolate has not listed yet, within the look-back:
  // listing the whole window every minute would cost pages of calls on a busy App.
  const since = Math.max(opts.now - opts.lookbackSeconds * 1000, opts.github.cache.deliveriesListedUntil - OVERLAP_MS);
  const deliveries = await opts.github.deliveriesSince(since);
  let handledAll = true;
  report.listed = deliveries.length;

  const byGuid = new Map<string, HookDelivery[]>();
  for (const d of deliveries) {
    if (EVENTS.has(d.event)) byGuid.set(d.guid, [...(byGuid.get(d.guid) ?? []), d]);
  }
  for (const [guid, attempts] of byGuid) {
    if (attempts.some(succeeded) || alreadyAsked.has(guid)) continue;
    if (opts.maxCallsUsed()) {
      handledAll = false;
      break;
    }
    const latest = attempts.sort((a, b) => b.deliveredAt.localeCompare(a.deliveredAt))[0]!;
    try {
      await opts.github.redeliver(latest.id);
      await opts.record({ type: "redelivery-requested", guid, deliveryId: latest.id, event: latest.event, at: new Date(opts.now).toISOString() });
      report.asked.push(guid);
    } catch (e) {
      handledAll = false;
      report.failed.push(`${guid}: ${(e as Error).message}`);
    }
  }
  // Move the mark only when nothing was left for later, so a skipped GUID is listed again.
  if (handledAll) opts.github.cache.deliveriesListedUntil = opts.now;
  return report;
}
