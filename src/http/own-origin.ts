// This site's origin, as a browser sees it. Behind an Ingress that terminates
// TLS the server is reached over plain HTTP and its request URL says http://,
// while the browser is on https:// and sends that Origin: so in the cluster the
// protocol the proxy forwarded (X-Forwarded-Proto) is taken, but only from a
// request the trusted proxies named a client for (REAPER_CLIENT_ADDRESS_HEADER,
// request-client.ts); from anyone else the header is ignored, so a forged one
// cannot make another origin pass. On Cloudflare the URL is already https://.
import type { Context } from "hono";
import type { AppEnv } from "./app-env.ts";
import { proxiedClient } from "./request-client.ts";

const PROTOCOLS = new Set(["http", "https"]);

export function ownOrigin(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  const forwarded = c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  if (forwarded === undefined || !PROTOCOLS.has(forwarded) || proxiedClient(c) === undefined) return url.origin;
  return `${forwarded}://${url.host}`;
}
