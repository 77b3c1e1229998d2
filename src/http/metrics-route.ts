import type { Context } from "hono";
import type { Settings } from "../config/settings.ts";
import { arcReaperFamilies } from "../metrics/arc-reaper-metrics.ts";
import { PROMETHEUS_CONTENT_TYPE, renderFamilies } from "../metrics/prometheus.ts";
import { webhookDeliveryCounts } from "../metrics/webhook-deliveries.ts";
import { listRecords, type FactsKV } from "../store/kv-facts.ts";

/** GET /metrics: Prometheus text format from one KV list pass and this isolate's counters. */
export async function serveMetrics(c: Context, settings: Settings, kv: FactsKV): Promise<Response> {
  const { facts, lastSweep } = await listRecords(kv);
  const body = renderFamilies(
    arcReaperFamilies({
      facts,
      lastSweep,
      deliveries: webhookDeliveryCounts(),
      now: Date.now(),
      policy: settings,
    }),
  );
  return c.body(body, 200, { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" });
}
