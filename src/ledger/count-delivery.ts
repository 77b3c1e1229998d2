// Webhook deliveries by event and outcome, counted in the ledger so every
// isolate adds to one counter. The event header is only trusted after the
// signature checks and anyone can send anything before that: known events keep
// their names, the rest become "other", so a caller cannot grow the label set.
import type { CountersTable } from "./counters-table.ts";

const KNOWN_EVENTS = new Set(["workflow_job", "workflow_run", "ping", "installation", "installation_repositories", "github_app_authorization"]);
// duplicate: a GUID the ledger received before (a replay); stale: facts about a job older than the
// history; shed: refused by the per-address rate limit before any work.
const DELIVERY_OUTCOMES = ["recorded", "ignored", "invalid", "rejected", "too_large", "misconfigured", "duplicate", "stale", "shed"] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export function countDelivery(counters: CountersTable, event: string, outcome: DeliveryOutcome, n = 1): void {
  const e = KNOWN_EVENTS.has(event) ? event : event === "" ? "none" : "other";
  counters.add("arc_reaper_webhook_deliveries_total", { event: e, outcome }, n);
}
