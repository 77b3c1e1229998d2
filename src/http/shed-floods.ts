// Floods are shed per client address before any work: the Workers rate limiting
// binding (FRONT_DOOR, `[[ratelimits]]` in wrangler.toml; in the cluster, the
// server's own limiter, src/server/front-door-limiter.ts) counts each address's
// requests per period in the Cloudflare location that serves them; over the
// limit, the answer is 429 without reading the body, checking a signature or
// calling the ledger. GitHub's deliveries come from many addresses, each far
// below the limit; an agent reconnects far below it too, so GET /agent is shed
// alike (before its token is checked). A shed delivery is counted as "shed";
// a shed GET /agent only answers 429 (the agent logs it and backs off).
// The kubelet's probe (GET /healthz with no address the proxies wrote) is never
// shed: a flood in the shared bucket must not take the one replica off its
// Service. It is cheap (the settings, no body, no ledger call after the first).
import type { Context, Next } from "hono";
import { rawLedgerName } from "../durable/ledger-for.ts";
import type { AppEnv } from "./app-env.ts";
import { countAtDoor } from "./door-tally.ts";
import { type DoorClient, doorClient } from "./request-client.ts";

interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

const isLimiter = (v: unknown): v is RateLimitBinding => typeof v === "object" && v !== null && typeof (v as { limit?: unknown }).limit === "function";

/** GET /healthz from a client no proxy named: the kubelet's probe (or a caller inside the cluster the NetworkPolicy let in). */
function isProbe(c: Context<AppEnv>, client: DoorClient): boolean {
  return client.key === "unknown" && c.req.method === "GET" && c.req.path === "/healthz";
}

export async function shedFloods(c: Context<AppEnv>, next: Next): Promise<Response | void> {
  const limiter = c.env.FRONT_DOOR;
  // Who counts, and who is exempt (no stranger behind it): request-client.ts.
  const client = doorClient(c);
  if (isLimiter(limiter) && !client.exempt && !isProbe(c, client)) {
    const { success } = await limiter.limit({ key: client.key });
    if (!success) {
      if (c.req.path === "/webhook") countAtDoor(c, rawLedgerName(c.env), c.req.header("x-github-event") ?? "", "shed");
      return c.json({ error: "too many requests from this address: slow down" }, 429, { "retry-after": "10" });
    }
  }
  await next();
}
