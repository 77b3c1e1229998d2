import type { Context } from "hono";
import { runnerRows, stateFilter } from "../admin/runner-rows.ts";
import type { Settings } from "../config/settings.ts";
import { listFacts, type FactsKV } from "../store/kv-facts.ts";

/** GET /admin/runners: what arc-reaper tracks and why, from one KV list pass. */
export async function listRunners(c: Context, settings: Settings, kv: FactsKV): Promise<Response> {
  const filter = stateFilter(c.req.query("state"));
  if (filter.error) return c.json({ error: filter.error }, 400);
  const rows = runnerRows(await listFacts(kv), Date.now(), settings);
  return c.json({ runners: rows.filter((row) => !filter.state || row.state === filter.state) });
}
