// POST routes check Origin against the request's own origin, so that another
// site cannot make a logged-in browser post to them. A request that sends
// Origin must send exactly ours. One without Origin is accepted only when a
// cookie cannot be what authenticates it (a bearer API call, the login form):
// a cookie-authenticated form post without Origin is refused, because every
// browser sends Origin on a POST. Ours is what the browser sees (own-origin.ts:
// behind a TLS-terminating Ingress, https://).
import type { Context } from "hono";
import type { AppEnv } from "./app-env.ts";
import { ownOrigin } from "./own-origin.ts";

export type OriginVerdict = { ok: true } | { ok: false; why: string };

/** `cookieAuth`: the request is (or may be) authenticated by the session cookie. */
export function checkOrigin(c: Context<AppEnv>, cookieAuth: boolean): OriginVerdict {
  const origin = c.req.header("origin");
  const own = ownOrigin(c);
  if (origin === undefined) {
    return cookieAuth ? { ok: false, why: "a form post with the session cookie must carry an Origin header" } : { ok: true };
  }
  if (origin !== own) return { ok: false, why: `Origin ${JSON.stringify(origin.slice(0, 200))} is not this site's origin` };
  return { ok: true };
}
