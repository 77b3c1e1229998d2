// GET /healthz tells anyone only whether arc-reaper is configured:
// {"ok":true} (200) or {"ok":false} (503). The problems are always logged, and
// listed in the answer only to the admin bearer token. GET /healthz/deep
// (admin bearer) tries the cluster and GitHub: see src/health/deep-health.ts.
// In the cluster the first /healthz (the probe) also wakes the ledger, which
// starts its sweep clock (src/ledger/sweep-clock.ts).
import type { Context } from "hono";
import { settingsFor } from "../config/settings-for.ts";
import { ledgerFor, rawLedgerName, withAdmin } from "../ledger/ledger-for.ts";
import { sweepEveryMs } from "../ledger/sweep-clock.ts";
import { logLine } from "../log.ts";
import type { AppEnv } from "./app-env.ts";
import { bearerToken, constantTimeEqual } from "./constant-time.ts";

/** The bearer is the env's ADMIN_TOKEN, read raw: the settings may be invalid, the token still good. */
function adminBearer(c: Context<AppEnv>): boolean {
  const adminToken = c.env.ADMIN_TOKEN;
  const token = bearerToken(c.req.header("authorization"));
  return typeof adminToken === "string" && adminToken.trim().length >= 16 && token !== undefined && constantTimeEqual(token, adminToken.trim());
}

/** Whether this isolate has woken the ledger (in the cluster its constructor starts the sweep clock). */
let ledgerWoken = false;

export function healthz(c: Context<AppEnv>): Response {
  // In the cluster nothing else calls the ledger after a start on an empty volume: the first probe does.
  if (!ledgerWoken && sweepEveryMs(c.env) !== undefined) {
    ledgerWoken = true;
    c.executionCtx.waitUntil(
      ledgerFor(c.env, rawLedgerName(c.env))
        .idle()
        .catch(() => (ledgerWoken = false)),
    );
  }
  const result = settingsFor(c.env);
  if (result.ok) return c.json({ ok: true });
  logLine({ msg: "healthz: arc-reaper is misconfigured", errors: result.errors });
  return adminBearer(c) ? c.json({ ok: false, errors: result.errors }, 503) : c.json({ ok: false }, 503);
}

/** 200 when every check passed, else 503; each check says in words what it tried; settings to change (old names) are listed. */
export async function deepHealthz(c: Context<AppEnv>): Promise<Response> {
  const settings = c.get("settings");
  const health = await withAdmin(ledgerFor(c.env, settings.ledgerName), (admin) => admin.deepHealth());
  return c.json(settings.warnings.length > 0 ? { ...health, warnings: settings.warnings } : health, health.ok ? 200 : 503);
}
