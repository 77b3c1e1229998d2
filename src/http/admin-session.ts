// The admin page's login session. The cookie holds a random session id (32
// bytes, base64url), never ADMIN_TOKEN. The ledger keeps only the SHA-256 of
// that id, the SHA-256 of the ADMIN_TOKEN it was made with, and the expiry
// (12 h): every admin request checks the row, logout deletes it (a copied
// cookie stops working), and rotating ADMIN_TOKEN ends every session. The
// cookie is __Host- prefixed, HttpOnly, Secure and SameSite=Strict (browsers
// keep Secure cookies on http://localhost and 127.0.0.1 too, which count as
// secure contexts).
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Settings } from "../config/settings.ts";
import { ledgerFor } from "../durable/ledger-for.ts";
import type { LoginOutcome } from "../ledger/sessions-table.ts";
import type { AppEnv } from "./app-env.ts";
import { bearerToken, constantTimeEqual } from "./constant-time.ts";

/** Sent as __Host-arc-reaper-admin. */
const SESSION_COOKIE = "arc-reaper-admin";
const SESSION_SECONDS = 12 * 3600;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
const TOKEN_PURPOSE = "arc-reaper admin token v1|";

const COOKIE_OPTIONS = { prefix: "host", secure: true, path: "/", httpOnly: true, sameSite: "Strict" } as const;

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

async function sha256(text: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

/** What the ledger stores for the token a session was made with. */
const tokenHash = (adminToken: string): Promise<string> => sha256(`${TOKEN_PURPOSE}${adminToken}`);

/** The session id of the request's cookie, when it has the shape of one. */
function sessionId(c: Context): string | undefined {
  const value = getCookie(c, SESSION_COOKIE, "host");
  return value !== undefined && SESSION_ID.test(value) ? value : undefined;
}

/** A valid bearer ADMIN_TOKEN, or a session cookie the ledger knows, unexpired and of this ADMIN_TOKEN. */
export async function isAdmin(c: Context<AppEnv>, settings: Settings): Promise<"bearer" | "session" | undefined> {
  const token = bearerToken(c.req.header("authorization"));
  if (token !== undefined && constantTimeEqual(token, settings.adminToken)) return "bearer";
  const id = sessionId(c);
  if (id === undefined) return undefined;
  const live = await ledgerFor(c.env, settings.ledgerName).checkSession(await sha256(id), await tokenHash(settings.adminToken), Date.now());
  return live ? "session" : undefined;
}

/** One login attempt: the ledger throttles per address first; a good token gets a new session and its cookie. */
export async function startSession(c: Context<AppEnv>, settings: Settings, client: string, submitted: string): Promise<LoginOutcome> {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const id = base64url(bytes);
  const attempt = {
    client,
    tokenMatches: constantTimeEqual(submitted, settings.adminToken),
    session: { idHash: await sha256(id), tokenHash: await tokenHash(settings.adminToken), ttlMs: SESSION_SECONDS * 1000 },
    now: Date.now(),
  };
  const outcome: LoginOutcome = await ledgerFor(c.env, settings.ledgerName).login(attempt);
  if (outcome.kind === "session") setCookie(c, SESSION_COOKIE, id, { ...COOKIE_OPTIONS, maxAge: SESSION_SECONDS });
  return outcome;
}

/** Logout: the ledger forgets the session, and the browser its cookie. */
export async function endSession(c: Context<AppEnv>, settings: Settings): Promise<void> {
  const id = sessionId(c);
  if (id !== undefined) await ledgerFor(c.env, settings.ledgerName).endSession(await sha256(id));
  deleteCookie(c, SESSION_COOKIE, COOKIE_OPTIONS);
}
