import type { Context } from "hono";
import { isRunnerState, runnerRow, RUNNER_STATES } from "../admin/runner-rows.ts";
import type { Settings } from "../config/settings.ts";
import { trackedRunners } from "../reaper/tracked-runners.ts";
import { listFacts, type FactsKV } from "../store/kv-facts.ts";

/** GET /admin/runners: what arc-reaper tracks and why, from one KV list pass. */
export async function listRunners(c: Context, settings: Settings, kv: FactsKV): Promise<Response> {
  const wanted = c.req.query("state");
  if (wanted !== undefined && !isRunnerState(wanted)) {
    return c.json({ error: `state must be one of ${RUNNER_STATES.join(", ")}, got ${JSON.stringify(wanted)}` }, 400);
  }
  const now = Date.now();
  const rows = trackedRunners(await listFacts(kv))
    .map((t) => runnerRow(t, now, settings, settings.dryRun))
    .filter((row) => wanted === undefined || row.state === wanted);
  return c.json({ runners: rows });
}
