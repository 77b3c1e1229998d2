// POST /test/seed-history?from=&count=: bench only. Answers 404 unless
// ARC_REAPER_TEST_HOOKS=on, and needs the admin token like /admin/runners.
import type { Context } from "hono";
import type { Settings } from "../config/settings.ts";
import { factsFromWebhook } from "../github/facts-from-webhook.ts";
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

const MAX_LOOP = 20_000;

/**
 * POST /test/ledger-receive: bench only (404 unless ARC_REAPER_TEST_HOOKS=on). A
 * workflow_job body straight to the ledger, without the signature check, the
 * log line or the door: what one ledger sustains when the Worker's path is free.
 */
export async function ledgerReceiveRoute(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  if (c.env.ARC_REAPER_TEST_HOOKS !== "on") return c.json({ error: "no route for POST /test/ledger-receive" }, 404);
  const guid = c.req.header("x-github-delivery") ?? crypto.randomUUID();
  const outcome = factsFromWebhook(c.req.header("x-github-event") ?? "workflow_job", guid, await c.req.json());
  if (outcome.kind !== "facts") return c.json({ error: `not a recorded delivery: ${outcome.kind}` }, 400);
  // ?dry=1: everything but the ledger, so the bench can tell the ledger's share from the rest.
  if (c.req.query("dry") === "1") return c.json({ outcome: "dry", facts: outcome.facts.length }, 202);
  // ?rpc=1: a call to the ledger that writes nothing, to tell the RPC from the stored write.
  if (c.req.query("rpc") === "1") {
    await ledgerFor(c.env, settings.ledgerName).idle();
    return c.json({ outcome: "rpc", facts: outcome.facts.length }, 202);
  }
  const receipt = await ledgerFor(c.env, settings.ledgerName).receive({ event: "workflow_job", guid, facts: outcome.facts });
  return c.json(receipt, 202);
}

/** POST /test/ledger-loop?count=&first=: bench only. `count` recorded deliveries made inside the ledger, one after another: its own rate, without RPC. */
export async function ledgerLoopRoute(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  if (c.env.ARC_REAPER_TEST_HOOKS !== "on") return c.json({ error: "no route for POST /test/ledger-loop" }, 404);
  const count = Number(c.req.query("count"));
  const first = Number(c.req.query("first") ?? 1);
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_LOOP || !Number.isSafeInteger(first) || first < 1) {
    return c.json({ error: `count must be 1 to ${MAX_LOOP} and first a positive whole number` }, 400);
  }
  return c.json(await ledgerFor(c.env, settings.ledgerName).receiveLoop(first, count));
}
