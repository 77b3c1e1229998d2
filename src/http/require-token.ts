// The bearer on /admin/runners, /healthz/deep (ADMIN_TOKEN) and /metrics
// (METRICS_TOKEN, or ADMIN_TOKEN when unset), checked by hono's bearer-auth with
// a constant-time comparison, after the shared throttle (bearer-throttle.ts).
// Every refusal is a 401 with a JSON error naming the token wanted, whatever was
// wrong with the header. Both tokens are RFC 6750 b64tokens (settings.ts checks).
import type { Context, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import type { AppEnv } from "./app-env.ts";
import { constantTimeEqual } from "./constant-time.ts";

const WANTED = {
  admin: "a valid ADMIN_TOKEN bearer token is required",
  metrics: "a valid METRICS_TOKEN (or ADMIN_TOKEN when METRICS_TOKEN is unset) bearer token is required",
} as const;

export function requireToken(which: "admin" | "metrics"): MiddlewareHandler<AppEnv> {
  const refuse = { message: (c: Context) => c.json({ error: WANTED[which] }, 401, { "www-authenticate": "Bearer" }), wwwAuthenticateHeader: "Bearer" };
  return bearerAuth<AppEnv>({
    verifyToken: (token, c) => {
      const settings = c.get("settings");
      return constantTimeEqual(token, which === "metrics" ? settings.metricsToken : settings.adminToken);
    },
    noAuthenticationHeader: refuse,
    invalidAuthenticationHeader: refuse,
    invalidToken: refuse,
  });
}
