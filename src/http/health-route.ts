// GET /healthz tells anyone only whether arc-reaper is configured:
// {"ok":true} (200) or {"ok":false} (503). The problems are always logged, and
// listed in the answer only to the admin bearer token (under the bearer
// throttle, whether the settings are valid or not). GET /healthz/deep
// (admin bearer) tries the cluster and GitHub: see src/health/deep-health.ts.
// In the cluster /healthz (the probe) also wakes the ledger, at most once a
// minute per isolate: its first call starts the sweep clock
// (src/durable/sweep-clock.ts), and every call re-asserts the alarm
// (LedgerRoot.reassertAlarm), so an alarm the runtime gave up is set again
// within a minute even when no webhook, scrape or admin request comes.
import { elapsed } from "../model/elapsed.ts";
import type { Context } from "hono";
import { homeOf } from "../config/settings.ts";
import { settingsFor } from "../config/settings-for.ts";
import { ledgerFor, rawLedgerName, withAdmin } from "../durable/ledger-for.ts";
import { sweepEveryMs } from "../durable/sweep-clock.ts";
import { logLine } from "../log.ts";
import type { AppEnv } from "./app-env.ts";
import { doorClient } from "./request-client.ts";
import { bearerToken, constantTimeEqual } from "./constant-time.ts";

/** The bearer is the env's ADMIN_TOKEN, read raw: the settings may be invalid, the token still good. */
function adminBearer(c: Context<AppEnv>): boolean {
  const adminToken = c.env.ADMIN_TOKEN;
  const token = bearerToken(c.req.header("authorization"));
  return typeof adminToken === "string" && adminToken.trim().length >= 16 && token !== undefined && constantTimeEqual(token, adminToken.trim());
}

/**
 * When this isolate last woke the ledger (in the cluster). A cache, not state: it only spares the ledger a call
 * per probe; a fresh isolate wakes it at once. A time in the future (the clock stepped back) has expired.
 */
let ledgerWokenAt: number | undefined;
const WAKE_EVERY_MS = 60_000;

export async function healthz(c: Context<AppEnv>): Promise<Response> {
  const result = settingsFor(c.env);
  // In the cluster nothing else may call the ledger (after a start on an empty volume, or once the runtime
  // gave its alarm up): the probe does, at most once a minute.
  const now = Date.now();
  if (sweepEveryMs(homeOf(result)) !== undefined && elapsed(ledgerWokenAt, now, WAKE_EVERY_MS)) {
    ledgerWokenAt = now;
    c.executionCtx.waitUntil(
      ledgerFor(c.env, rawLedgerName(c.env))
        .idle()
        .catch(() => (ledgerWokenAt = undefined)),
    );
  }
  if (result.ok) return c.json({ ok: true });
  logLine({ msg: "healthz: arc-reaper is misconfigured", errors: result.errors });
  if (bearerToken(c.req.header("authorization")) === undefined) return c.json({ ok: false }, 503);
  // A bearer is checked under the throttle every bearer shares (bearer-throttle.ts), settings valid or not.
  // The front door's bucket: CF-Connecting-IP on Cloudflare, the trusted proxy's header in the cluster.
  const client = doorClient(c).key;
  const attempt = { client, tokenMatches: adminBearer(c), now: Date.now() };
  const outcome = await ledgerFor(c.env, rawLedgerName(c.env)).bearer(attempt);
  if (outcome.kind === "throttled") {
    logLine({ msg: "bearer throttled", path: c.req.path, client, failures: outcome.failures, retryAfterSeconds: outcome.retryAfterSeconds });
    const error = `too many failed tokens from this address: try again in ${outcome.retryAfterSeconds}s`;
    return c.json({ ok: false, error }, 429, { "retry-after": String(outcome.retryAfterSeconds) });
  }
  if (outcome.kind === "refused") logLine({ msg: "bearer refused", path: c.req.path, client, failures: outcome.failures });
  return outcome.kind === "accepted" ? c.json({ ok: false, errors: result.errors }, 503) : c.json({ ok: false }, 503);
}

/** 200 when every check passed, else 503; each check says in words what it tried; settings to change (old names) are listed. */
export async function deepHealthz(c: Context<AppEnv>): Promise<Response> {
  const settings = c.get("settings");
  const health = await withAdmin(ledgerFor(c.env, settings.ledgerName), (admin) => admin.deepHealth());
  return c.json(settings.warnings.length > 0 ? { ...health, warnings: settings.warnings } : health, health.ok ? 200 : 503);
}
