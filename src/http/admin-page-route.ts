// GET /admin (the HTML page), POST /admin/login and POST /admin/logout.
// The page takes the bearer ADMIN_TOKEN or the session cookie of a login.
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { adminPageHtml, errorPageHtml, githubWebUrl, loginPageHtml, PAGE_CSS } from "../admin/page.tsx";
import type { Settings } from "../config/settings.ts";
import type { AppEnv } from "./app-env.ts";
import { ledgerFor } from "../ledger/ledger-for.ts";
import { runnerQuery } from "./admin-runners-route.ts";
import { constantTimeEqual } from "./constant-time.ts";
import { endSession, isAdmin, startSession } from "./admin-session.ts";

const MAX_LOGIN_BYTES = 4096;

/** The login form is one field: refuse anything bigger before reading it. */
export const loginBodyLimit = bodyLimit({
  maxSize: MAX_LOGIN_BYTES,
  onError: async (c) => c.html(loginPageHtml({ error: "The login form is too large." }), 413, await pageHeaders()),
});

let styleHash: Promise<string> | undefined;
const cssHash = (): Promise<string> =>
  (styleHash ??= crypto.subtle
    .digest("SHA-256", new TextEncoder().encode(PAGE_CSS))
    .then((d) => `'sha256-${btoa(String.fromCharCode(...new Uint8Array(d)))}'`));

/** No scripts, no frames, forms only to this origin, the one stylesheet by hash. */
async function pageHeaders(): Promise<Record<string, string>> {
  return {
    "content-security-policy": `default-src 'none'; style-src ${await cssHash()}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
  };
}

export async function adminPage(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const headers = await pageHeaders();
  const auth = await isAdmin(c, settings.adminToken);
  if (!auth) return c.html(loginPageHtml({}), 401, headers);

  const { query, error } = runnerQuery(c);
  if (!query) return c.html(errorPageHtml(error ?? "bad query"), 400, headers);
  const now = Date.now();
  const ledger = ledgerFor(c.env, settings.ledgerName);
  const [page, snapshot, agent] = await Promise.all([ledger.runners(query), ledger.snapshot(), settings.cluster.mode === "agent" ? ledger.agentStatus() : null]);
  const html = adminPageHtml({
    rows: page.runners,
    nextCursor: page.nextCursor,
    repo: query.repo,
    limit: query.limit,
    counts: snapshot.runners,
    state: query.state,
    lastSweep: snapshot.lastSweep ?? undefined,
    now,
    githubWebUrl: githubWebUrl(settings.githubApiUrl),
    settings,
    auth,
    agent,
  });
  return c.html(html, 200, headers);
}

export async function adminLogin(c: Context, settings: Settings): Promise<Response> {
  const headers = await pageHeaders();
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const token = form.token;
  if (typeof token !== "string" || !constantTimeEqual(token, settings.adminToken)) {
    return c.html(loginPageHtml({ error: "That is not the ADMIN_TOKEN." }), 401, headers);
  }
  await startSession(c, settings.adminToken);
  return c.redirect("/admin", 303);
}

export function adminLogout(c: Context): Response {
  endSession(c);
  return c.redirect("/admin", 303);
}
