// POST routes check Origin against the request's own origin, so that another
// site cannot make a logged-in browser post to them. A request that sends
// Origin must send exactly ours. One without Origin is accepted only when a
// cookie cannot be what authenticates it (a bearer API call, the login form):
// a cookie-authenticated form post without Origin is refused, because every
// browser sends Origin on a POST.
import type { Context } from "hono";

export type OriginVerdict = { ok: true } | { ok: false; why: string };

/** `cookieAuth`: the request is (or may be) authenticated by the session cookie. */
export function checkOrigin(c: Context, cookieAuth: boolean): OriginVerdict {
  const origin = c.req.header("origin");
  const own = new URL(c.req.url).origin;
  if (origin === undefined) {
    return cookieAuth ? { ok: false, why: "a form post with the session cookie must carry an Origin header" } : { ok: true };
  }
  if (origin !== own) return { ok: false, why: `Origin ${JSON.stringify(origin.slice(0, 200))} is not this site's origin` };
  return { ok: true };
}
