// Any /admin/... path no route serves: a page a browser can go on from (a
// link back to /admin), or JSON when the client asks for it. Never the
// misconfiguration check first: a typo'd URL says so even when settings are bad.
import type { Context } from "hono";
import { errorPageHtml } from "../admin/page.tsx";
import { pageHeaders } from "./admin-page-route.ts";

/** JSON for API clients (Accept: application/json, or no HTML asked for); an HTML page for browsers. */
function wantsHtml(c: Context): boolean {
  const accept = c.req.header("accept") ?? "";
  if (/application\/json/i.test(accept)) return false;
  return /text\/html/i.test(accept);
}

export async function adminNotFound(c: Context): Promise<Response> {
  const what = `no route for ${c.req.method} ${new URL(c.req.url).pathname}`;
  if (!wantsHtml(c)) return c.json({ error: what }, 404);
  return c.html(errorPageHtml(`Nothing here: ${what}.`), 404, await pageHeaders());
}
