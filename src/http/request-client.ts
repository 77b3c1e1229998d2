// Who sent a request, as the front door counts it (flood shedding, failed logins,
// bearer throttles). On Cloudflare: CF-Connecting-IP, which Cloudflare sets and
// a client cannot; without one, or with loopback (wrangler dev, local tools, the
// bench), there is no stranger to count. In the cluster: the address the
// trusted proxy wrote (REAPER_CLIENT_ADDRESS_HEADER). X-Forwarded-For is read
// from the right: each proxy appends the address it saw, so with N trusted
// proxies the client is the N-th entry from the end and whatever a client
// wrote before it is ignored. Unset, or a header too short or malformed:
// one shared bucket, which IS limited (never exempt).
import type { Context } from "hono";
import type { ForwardedAddress } from "../config/home.ts";
import { homeOf } from "../config/settings.ts";
import { settingsFor } from "../config/settings-for.ts";
import type { AppEnv } from "./app-env.ts";
import { clientAddress } from "./client-address.ts";

export interface DoorClient {
  /** The bucket the request counts against: an address, an IPv6 /64, or "unknown". */
  key: string;
  /** Not counted: no stranger behind it (only on Cloudflare's side of the door). */
  exempt: boolean;
}

const LOCAL = new Set(["unknown", "127.0.0.1", "0:0:0:0::/64"]);

/** The address the trusted proxies say the client has; "unknown" when the header cannot say. */
export function forwardedClient(source: ForwardedAddress, header: string | undefined): string {
  if (header === undefined) return "unknown";
  if (source.header === "x-real-ip") return clientAddress(header);
  const hops = header.split(",").map((h) => h.trim());
  if (hops.length < source.trustedProxies) return "unknown";
  return clientAddress(hops[hops.length - source.trustedProxies]);
}

export function doorClient(c: Context<AppEnv>): DoorClient {
  const home = homeOf(settingsFor(c.env));
  if (home?.kind === "cloudflare") {
    const key = clientAddress(c.req.header("cf-connecting-ip"));
    return { key, exempt: LOCAL.has(key) };
  }
  return { key: proxiedClient(c) ?? "unknown", exempt: false };
}

/** In the cluster: the client's address as the trusted proxies wrote it, or undefined when no trusted proxy named one. */
export function proxiedClient(c: Context<AppEnv>): string | undefined {
  const home = homeOf(settingsFor(c.env));
  const source = home?.kind === "cluster" ? home.clientAddress : undefined;
  const key = source ? forwardedClient(source, c.req.header(source.header)) : "unknown";
  return key === "unknown" ? undefined : key;
}
