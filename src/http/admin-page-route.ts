// GET /admin (the HTML page), POST /admin/login and POST /admin/logout.
// The page takes the bearer ADMIN_TOKEN or the session cookie of a login;
// sessions and the login throttle live in the ledger (admin-session.ts).
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { adminPageHtml, errorPageHtml, githubWebUrl, loginPageHtml, PAGE_CSS } from "../admin/page.tsx";
import type { Settings } from "../config/settings.ts";
import type { AppEnv } from "./app-env.ts";
import { ledgerFor, withAdmin } from "../durable/ledger-for.ts";
import { runnerQuery } from "./admin-runners-route.ts";
import { logLine } from "../log.ts";
import { endSession, isAdmin, startSession } from "./admin-session.ts";
import { checkOrigin } from "./origin-check.ts";
import { doorClient } from "./request-client.ts";

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

/**
 * No scripts, no frames, forms only to this origin, the one stylesheet by hash.
 * Referrer-Policy same-origin, not no-referrer: under no-referrer browsers send
 * `Origin: null` on the page's own form posts, which the Origin check refuses;
 * other sites still get no referrer at all.
 */
export async function pageHeaders(): Promise<Record<string, string>> {
  return {
    "content-security-policy": `default-src 'none'; style-src ${await cssHash()}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    "cache-control": "no-store",
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
  };
}

export async function adminPage(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const headers = await pageHeaders();
  const auth = await isAdmin(c, settings);
  if (!auth) return c.html(loginPageHtml({}), 401, headers);

  const { query, error } = runnerQuery(c);
  if (!query) return c.html(errorPageHtml(error ?? "bad query"), 400, headers);
  const now = Date.now();
  const ledger = ledgerFor(c.env, settings.ledgerName);
  const [view, agent] = await Promise.all([
    withAdmin(ledger, (admin) => admin.adminView(query, now)),
    settings.cluster.mode === "agent" ? withAdmin(ledger, (admin) => admin.agentStatuses()) : null,
  ]);
  const { page, snapshot, day } = view;
  const html = adminPageHtml({
    day,
    rows: page.runners,
    nextCursor: page.nextCursor,
    repo: query.repo,
    cluster: query.cluster,
    limit: query.limit,
    counts: snapshot.runners,
    state: query.state,
    lastSweep: snapshot.lastSweep ?? undefined,
    paused: snapshot.paused ?? undefined,
    now,
    githubWebUrl: githubWebUrl(settings.githubApiUrl),
    settings,
    auth,
    agents: agent,
    ...(snapshot.idleRunners ? { idle: snapshot.idleRunners } : {}),
  });
  return c.html(html, 200, headers);
}

/** GET /admin/login (a bookmarked or typed login URL): the form, or /admin when already logged in. */
export async function adminLoginForm(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  if (await isAdmin(c, settings)) return c.redirect("/admin", 303);
  return c.html(loginPageHtml({}), 200, await pageHeaders());
}

/** POST /admin/login: Origin, then the ledger's throttle (5 failures a minute per address), then the token. */
export async function adminLogin(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const headers = await pageHeaders();
  const client = doorClient(c).key;
  const origin = checkOrigin(c, false);
  if (!origin.ok) {
    logLine({ msg: "admin login refused", client, why: origin.why });
    return c.html(loginPageHtml({ error: `Refused: ${origin.why}.` }), 403, headers);
  }
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const outcome = await startSession(c, settings, client, typeof form.token === "string" ? form.token : "");
  if (outcome.kind === "session") {
    logLine({ msg: "admin login", client });
    return c.redirect("/admin", 303);
  }
  // Never the submitted token: only who tried and how often.
  if (outcome.kind === "throttled") {
    logLine({ msg: "admin login throttled", client, failures: outcome.failures, retryAfterSeconds: outcome.retryAfterSeconds });
    const error = `Too many failed logins from this address: try again in ${outcome.retryAfterSeconds}s.`;
    return c.html(loginPageHtml({ error }), 429, { ...headers, "retry-after": String(outcome.retryAfterSeconds) });
  }
  logLine({ msg: "admin login failed", client, failures: outcome.failures });
  return c.html(loginPageHtml({ error: "That is not the ADMIN_TOKEN." }), 401, headers);
}

/** POST /admin/logout: the ledger deletes the session, so a copied cookie stops working too. */
export async function adminLogout(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const origin = checkOrigin(c, true);
  if (!origin.ok) return c.html(errorPageHtml(`Refused: ${origin.why}.`), 403, await pageHeaders());
  await endSession(c, settings);
  return c.redirect("/admin", 303);
}
