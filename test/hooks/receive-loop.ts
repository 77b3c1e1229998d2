// Bench only: recorded deliveries made inside the ledger, one after another,
// through the same path as receive(): the ledger's own rate, without RPC.
import type { JobStarted } from "../../src/model/facts.ts";
import type { SignedDelivery } from "../../src/durable/receive-delivery.ts";

export async function receiveLoop(
  receive: (d: SignedDelivery) => Promise<unknown>,
  first: number,
  count: number,
): Promise<{ count: number; ms: number; perSecond: number }> {
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  for (let job = first; job < first + count; job++) {
    const fact: JobStarted = {
      type: "job-started",
      runner: `arc-runners-loop-${job}`,
      repo: "octo-org/octo-repo",
      runId: 1_000_000 + Math.floor(job / 4),
      runAttempt: 1,
      jobId: job,
      startedAt,
      installationId: 4242,
      source: `loop-${job}`,
    };
    await receive({ event: "workflow_job", guid: `loop-${job}`, facts: [fact] });
  }
  // Date.now() inside a Durable Object only moves across I/O; performance.now() is the same clock. The
  // caller's wall time is the figure to trust; this one is reported beside it.
  const ms = performance.now() - t0;
  return { count, ms, perSecond: ms > 0 ? (count * 1000) / ms : Number.NaN };
}
