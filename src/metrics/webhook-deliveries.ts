// Webhook deliveries by event and outcome, counted in memory. Each Workers
// isolate has its own counters, and they start from zero when the isolate does:
// a Prometheus counter's reset, which rate() and increase() already handle.

// The event header is only trusted after the signature checks, and anyone can
// send anything before that: known events keep their names, the rest become
// "other", so a caller cannot grow the label set.
const KNOWN_EVENTS = new Set(["workflow_job", "workflow_run", "ping", "installation", "installation_repositories", "github_app_authorization"]);
const KNOWN_OUTCOMES = new Set(["recorded", "ignored", "invalid", "rejected"]);

const counts = new Map<string, { event: string; outcome: string; count: number }>();

export function countWebhookDelivery(event: string, outcome: string): void {
  const e = KNOWN_EVENTS.has(event) ? event : event === "" ? "none" : "other";
  const o = KNOWN_OUTCOMES.has(outcome) ? outcome : "other";
  const key = `${e} ${o}`;
  const entry = counts.get(key) ?? { event: e, outcome: o, count: 0 };
  entry.count++;
  counts.set(key, entry);
}

export function webhookDeliveryCounts(): { event: string; outcome: string; count: number }[] {
  return [...counts.values()]
    .map((c) => ({ ...c }))
    .sort((a, b) => a.event.localeCompare(b.event) || a.outcome.localeCompare(b.outcome));
}
