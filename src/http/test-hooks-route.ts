// POST /test/seed-history?from=&count=: bench only. Answers 404 unless
// ARC_REAPER_TEST_HOOKS=on, and needs the admin token like /admin/runners.
import type { Context } from "hono";
import type { Settings } from "../config/settings.ts";
import { ledgerFor } from "../ledger/ledger-for.ts";
import type { AppEnv } from "./app-env.ts";

const MAX_COUNT = 50_000;

export async function seedHistoryRoute(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  if (c.env.ARC_REAPER_TEST_HOOKS !== "on") return c.json({ error: "no route for POST /test/seed-history" }, 404);
  const from = Number(c.req.query("from"));
  const count = Number(c.req.query("count"));
  if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(count) || count < 1 || count > MAX_COUNT) {
    return c.json({ error: `from must be a whole number and count 1 to ${MAX_COUNT}` }, 400);
  }
  return c.json({ written: await ledgerFor(c.env, settings.ledgerName).seedHistory(from, count) });
}
