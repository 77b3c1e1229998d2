import { Hono, type Context, type Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { settingsFor } from "../config/settings-for.ts";
import type { Settings } from "../config/settings.ts";
import type { WorkerEnv } from "../env.ts";
import { adminLogin, adminLogout, adminPage, loginBodyLimit } from "./admin-page-route.ts";
import { listRunners } from "./admin-route.ts";
import { bearerToken, constantTimeEqual } from "./constant-time.ts";
import { serveMetrics } from "./metrics-route.ts";
import { receiveWebhook } from "./webhook-route.ts";

type AppEnv = { Bindings: WorkerEnv; Variables: { settings: Settings } };

const MAX_WEBHOOK_BYTES = 1024 * 1024; // GitHub caps payloads at 25 MB; ours are a few KB

// Every route but /healthz needs valid settings; answer 503 naming what is wrong.
async function requireSettings(c: Context<AppEnv>, next: Next): Promise<Response | void> {
  const result = settingsFor(c.env);
  if (!result.ok) return c.json({ error: "arc-reaper is misconfigured", settings: result.errors }, 503);
  c.set("settings", result.settings);
  await next();
}

async function requireAdmin(c: Context<AppEnv>, next: Next): Promise<Response | void> {
  const token = bearerToken(c.req.header("authorization"));
  if (!token || !constantTimeEqual(token, c.get("settings").adminToken)) {
    return c.json({ error: "a valid ADMIN_TOKEN bearer token is required" }, 401, { "www-authenticate": "Bearer" });
  }
  await next();
}

export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/healthz", (c) => {
    const result = settingsFor(c.env);
    return result.ok ? c.json({ ok: true }) : c.json({ ok: false, errors: result.errors }, 503);
  });
  app.post(
    "/webhook",
    bodyLimit({
      maxSize: MAX_WEBHOOK_BYTES,
      onError: (c) => c.json({ error: `body is over the ${MAX_WEBHOOK_BYTES}-byte limit` }, 413),
    }),
    requireSettings,
    (c) => receiveWebhook(c, c.get("settings"), c.env.FACTS),
  );
  app.get("/admin/runners", requireSettings, requireAdmin, (c) => listRunners(c, c.get("settings"), c.env.FACTS));
  app.get("/admin", requireSettings, (c) => adminPage(c, c.get("settings"), c.env.FACTS));
  app.post("/admin/login", loginBodyLimit, requireSettings, (c) => adminLogin(c, c.get("settings")));
  app.post("/admin/logout", (c) => adminLogout(c));
  app.get("/metrics", requireSettings, requireAdmin, (c) => serveMetrics(c, c.get("settings"), c.env.FACTS));
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));
  return app;
}
