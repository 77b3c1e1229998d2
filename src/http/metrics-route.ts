import type { Context } from "hono";
import { sweepDriver } from "../config/home.ts";
import type { Settings } from "../config/settings.ts";
import type { AppEnv } from "./app-env.ts";
import { ledgerFor, withAdmin } from "../durable/ledger-for.ts";
import { flushDoorCounts } from "./door-tally.ts";
import { arcReaperFamilies } from "../metrics/arc-reaper-metrics.ts";
import { PROMETHEUS_CONTENT_TYPE, renderFamilies } from "../metrics/prometheus.ts";

/** GET /metrics: Prometheus text format from the ledger's counters and open rows, never its history. */
export async function serveMetrics(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const ledger = ledgerFor(c.env, settings.ledgerName);
  // What this isolate counted at the door goes in first (other isolates send theirs within 10 s).
  await flushDoorCounts(c.env, settings.ledgerName);
  const [snapshot, agents] = await Promise.all([
    withAdmin(ledger, (admin) => admin.snapshot()),
    settings.cluster.mode === "agent" ? withAdmin(ledger, (admin) => admin.agentStatuses()) : null,
  ]);
  const directCluster = settings.cluster.mode === "direct" ? settings.cluster.name : undefined;
  const sweep = { driver: sweepDriver(settings.home), now: Date.now() };
  const body = renderFamilies(arcReaperFamilies({ snapshot, agents, sweep, ...(directCluster !== undefined ? { directCluster } : {}) }));
  return c.body(body, 200, { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" });
}
