// POST /admin/pause and POST /admin/resume: the bearer ADMIN_TOKEN (an API
// call: answered in JSON) or a session with a matching Origin (the page's
// button: sent back to /admin). The switch lives in the ledger's memory.
import type { Context } from "hono";
import { errorPageHtml } from "../admin/page.tsx";
import type { Settings } from "../config/settings.ts";
import { ledgerFor, withAdmin } from "../durable/ledger-for.ts";
import type { AppEnv } from "./app-env.ts";
import { pageHeaders } from "./admin-page-route.ts";
import { isAdmin } from "./admin-session.ts";
import { checkOrigin } from "./origin-check.ts";

export async function adminPauseSwitch(c: Context<AppEnv>, settings: Settings, to: "pause" | "resume"): Promise<Response> {
  const auth = await isAdmin(c, settings);
  if (!auth) return c.json({ error: "a valid ADMIN_TOKEN bearer token or admin session is required" }, 401, { "www-authenticate": "Bearer" });
  const origin = checkOrigin(c, auth === "session");
  if (!origin.ok) {
    return auth === "session" ? c.html(errorPageHtml(`Refused: ${origin.why}.`), 403, await pageHeaders()) : c.json({ error: origin.why }, 403);
  }
  const ledger = ledgerFor(c.env, settings.ledgerName);
  if (to === "pause") {
    const paused = await withAdmin(ledger, (admin) => admin.pause(auth));
    return auth === "session" ? c.redirect("/admin", 303) : c.json({ paused });
  }
  const { wasPaused, madeDue } = await withAdmin(ledger, (admin) => admin.resume(auth));
  return auth === "session" ? c.redirect("/admin", 303) : c.json({ paused: null, wasPaused, madeDue });
}
