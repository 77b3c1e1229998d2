import { Hono, type Context, type Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { settingsFor } from "../config/settings-for.ts";
import type { AppEnv } from "./app-env.ts";
import { agentUpgrade } from "./agent-route.ts";
import { adminLogin, adminLoginForm, adminLogout, adminPage, loginBodyLimit } from "./admin-page-route.ts";
import { adminNotFound } from "./admin-not-found.ts";
import { adminBackup, adminRestore } from "./admin-backup-route.ts";
import { listRunners, runnerStory } from "./admin-runners-route.ts";
import { rawLedgerName } from "../durable/ledger-for.ts";
import { throttleBearer } from "./bearer-throttle.ts";
import { requireToken } from "./require-token.ts";
import { countAtDoor } from "./door-tally.ts";
import { shedFloods } from "./shed-floods.ts";
import { serveMetrics } from "./metrics-route.ts";
import { receiveWebhook } from "./webhook-route.ts";
import { logLine } from "../log.ts";
import { deepHealthz, healthz } from "./health-route.ts";
import { adminPauseSwitch } from "./admin-pause-route.ts";
import { storyPageOrNext } from "./runner-page-route.ts";

const MAX_WEBHOOK_BYTES = 1024 * 1024; // GitHub caps payloads at 25 MB; ours are a few KB

// Every route but /healthz needs valid settings; answer 503 naming what is wrong.
async function requireSettings(c: Context<AppEnv>, next: Next): Promise<Response | void> {
  const result = settingsFor(c.env);
  if (!result.ok) {
    if (c.req.path === "/webhook") countEarlyAnswer(c, "misconfigured");
    // The problems are logged, never told to whoever asked (GET /healthz lists them to the admin bearer).
    logLine({ msg: "arc-reaper is misconfigured", path: c.req.path, errors: result.errors });
    return c.json({ error: "arc-reaper is misconfigured: see the log, or GET /healthz with the admin token" }, 503);
  }
  c.set("settings", result.settings);
  await next();
}

/** Answers given before the settings are known to be good are counted too, in the isolate (door-tally.ts). */
function countEarlyAnswer(c: Context<AppEnv>, outcome: "misconfigured" | "too_large"): void {
  countAtDoor(c, rawLedgerName(c.env), c.req.header("x-github-event") ?? "", outcome);
}

export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Before any work: a flood from one address is shed, GET /agent included (an agent reconnects far below the limit).
  app.use("*", shedFloods);
  const admin = throttleBearer("admin");
  const requireAdmin = requireToken("admin");
  app.get("/healthz", (c) => healthz(c));
  app.get("/healthz/deep", requireSettings, admin, requireAdmin, (c) => deepHealthz(c));
  app.post(
    "/webhook",
    bodyLimit({
      maxSize: MAX_WEBHOOK_BYTES,
      onError: (c) => {
        countEarlyAnswer(c as Context<AppEnv>, "too_large");
        return c.json({ error: `body is over the ${MAX_WEBHOOK_BYTES}-byte limit` }, 413);
      },
    }),
    requireSettings,
    (c) => receiveWebhook(c, c.get("settings")),
  );
  app.get("/admin/runners", requireSettings, admin, requireAdmin, (c) => listRunners(c, c.get("settings")));
  app.get("/admin/runners/:name", requireSettings, admin, storyPageOrNext, requireAdmin, (c) => runnerStory(c, c.get("settings")));
  app.get("/admin", requireSettings, admin, (c) => adminPage(c, c.get("settings")));
  app.get("/admin/login", requireSettings, (c) => adminLoginForm(c, c.get("settings")));
  app.post("/admin/login", loginBodyLimit, requireSettings, (c) => adminLogin(c, c.get("settings")));
  app.post("/admin/logout", requireSettings, (c) => adminLogout(c, c.get("settings")));
  app.post("/admin/pause", requireSettings, admin, (c) => adminPauseSwitch(c, c.get("settings"), "pause"));
  app.post("/admin/resume", requireSettings, admin, (c) => adminPauseSwitch(c, c.get("settings"), "resume"));
  app.get("/admin/backup", requireSettings, admin, requireAdmin, (c) => adminBackup(c, c.get("settings")));
  app.post("/admin/restore", requireSettings, admin, requireAdmin, (c) => adminRestore(c, c.get("settings")));
  app.get("/agent", requireSettings, (c) => agentUpgrade(c, c.get("settings")));
  app.get("/metrics", requireSettings, throttleBearer("metrics"), requireToken("metrics"), (c) => serveMetrics(c, c.get("settings")));
  app.notFound((c) =>
    c.req.path.startsWith("/admin/") ? adminNotFound(c) : c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404),
  );
  return app;
}
