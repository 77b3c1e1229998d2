// The admin page's login session. The cookie never holds ADMIN_TOKEN: it holds
// an expiry time and an HMAC-SHA256, keyed by ADMIN_TOKEN, of a fixed purpose
// string and that expiry. Checking it needs only the token, in constant time;
// rotating ADMIN_TOKEN ends every session. The cookie is __Host- prefixed,
// HttpOnly, Secure and SameSite=Strict (browsers keep Secure cookies on
// http://localhost and 127.0.0.1 too, which count as secure contexts).
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { bearerToken, constantTimeEqual } from "./constant-time.ts";

/** Sent as __Host-arc-reaper-admin. */
export const SESSION_COOKIE = "arc-reaper-admin";
export const SESSION_SECONDS = 12 * 3600;
const PURPOSE = "arc-reaper admin session v1";
const COOKIE_VALUE = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

const COOKIE_OPTIONS = { prefix: "host", secure: true, path: "/", httpOnly: true, sameSite: "Strict" } as const;

async function sessionMac(adminToken: string, expiresAt: number): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(adminToken), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${PURPOSE}|${expiresAt}`)));
  return btoa(String.fromCharCode(...mac)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The cookie value for a session that starts at nowMs: `<expiry seconds>.<mac>`. */
export async function sessionValue(adminToken: string, nowMs: number): Promise<string> {
  const expiresAt = Math.floor(nowMs / 1000) + SESSION_SECONDS;
  return `${expiresAt}.${await sessionMac(adminToken, expiresAt)}`;
}

export async function isValidSession(value: string | undefined, adminToken: string, nowMs: number): Promise<boolean> {
  const match = COOKIE_VALUE.exec(value ?? "");
  if (!match) return false;
  const expiresAt = Number(match[1]);
  if (expiresAt * 1000 <= nowMs) return false;
  return constantTimeEqual(match[2]!, await sessionMac(adminToken, expiresAt));
}

/** A valid bearer ADMIN_TOKEN or a valid session cookie. */
export async function isAdmin(c: Context, adminToken: string): Promise<"bearer" | "session" | undefined> {
  const token = bearerToken(c.req.header("authorization"));
  if (token !== undefined && constantTimeEqual(token, adminToken)) return "bearer";
  if (await isValidSession(getCookie(c, SESSION_COOKIE, "host"), adminToken, Date.now())) return "session";
  return undefined;
}

export async function startSession(c: Context, adminToken: string): Promise<void> {
  setCookie(c, SESSION_COOKIE, await sessionValue(adminToken, Date.now()), { ...COOKIE_OPTIONS, maxAge: SESSION_SECONDS });
}

export function endSession(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, COOKIE_OPTIONS);
}
