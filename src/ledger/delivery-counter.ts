// Webhook deliveries by event and outcome, counted in the ledger so every
// isolate adds to one counter. The event header is only trusted after the
// signature checks and anyone can send anything before that: known events keep
// their names, the rest become "other", so a caller cannot grow the label set.
import type { CountersTable } from "./counters-table.ts";

const KNOWN_EVENTS = new Set(["workflow_job", "workflow_run", "ping", "installation", "installation_repositories", "github_app_authorization"]);
export const DELIVERY_OUTCOMES = ["recorded", "ignored", "invalid", "rejected", "too_large", "misconfigured"] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export function countDelivery(counters: CountersTable, event: string, outcome: DeliveryOutcome): void {
  const e = KNOWN_EVENTS.has(event) ? event : event === "" ? "none" : "other";
  counters.add("arc_reaper_webhook_deliveries_total", { event: e, outcome });
}
