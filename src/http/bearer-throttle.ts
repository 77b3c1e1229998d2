// Bearer tokens share the login form's throttle (the ledger's login_failures):
// a wrong token on /admin/runners, /admin, /metrics or /healthz/deep counts as
// a failed login of its client address, and an address over the limit is
// answered 429 even with the right token. Requests without a bearer cost nothing.
import type { Context, Next } from "hono";
import { logLine } from "../log.ts";
import { ledgerFor } from "../durable/ledger-for.ts";
import type { BearerOutcome } from "../ledger/sessions-table.ts";
import type { AppEnv } from "./app-env.ts";
import { doorClient } from "./request-client.ts";
import { bearerToken, constantTimeEqual } from "./constant-time.ts";

/** Middleware (after requireSettings): `accepts` says which tokens this route takes. */
export function throttleBearer(accepts: "admin" | "metrics") {
  return async (c: Context<AppEnv>, next: Next): Promise<Response | void> => {
    const token = bearerToken(c.req.header("authorization"));
    if (token === undefined) return next();
    const settings = c.get("settings");
    const expected = accepts === "metrics" ? settings.metricsToken : settings.adminToken;
    const client = doorClient(c).key;
    const attempt = { client, tokenMatches: constantTimeEqual(token, expected), now: Date.now() };
    const outcome: BearerOutcome = await ledgerFor(c.env, settings.ledgerName).bearer(attempt);
    if (outcome.kind === "throttled") {
      logLine({ msg: "bearer throttled", path: c.req.path, client, failures: outcome.failures, retryAfterSeconds: outcome.retryAfterSeconds });
      return c.json({ error: `too many failed tokens from this address: try again in ${outcome.retryAfterSeconds}s` }, 429, {
        "retry-after": String(outcome.retryAfterSeconds),
      });
    }
    // Never the token: only who tried and how often.
    if (outcome.kind === "refused") logLine({ msg: "bearer refused", path: c.req.path, client, failures: outcome.failures });
    return next();
  };
}
