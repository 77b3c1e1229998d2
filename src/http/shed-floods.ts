// Floods are shed per client address before any work: the Workers rate limiting
// binding (FRONT_DOOR, `[[ratelimits]]` in wrangler.toml) counts each address's
// requests per period in the Cloudflare location that serves them; over the
// limit, the answer is 429 without reading the body, checking a signature or
// calling the ledger. GitHub's deliveries come from many addresses, each far
// below the limit; an agent reconnects far below it too, so GET /agent is shed
// alike (before its token is checked). A shed delivery is counted as "shed";
// a shed GET /agent only answers 429 (the agent logs it and backs off).
import type { Context, Next } from "hono";
import { rawLedgerName } from "../ledger/ledger-for.ts";
import type { AppEnv } from "./app-env.ts";
import { clientAddress } from "./client-address.ts";
import { countAtDoor } from "./door-tally.ts";

interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

const LOCAL = new Set(["unknown", "127.0.0.1", "0:0:0:0::/64"]);

const isLimiter = (v: unknown): v is RateLimitBinding => typeof v === "object" && v !== null && typeof (v as { limit?: unknown }).limit === "function";

export async function shedFloods(c: Context<AppEnv>, next: Next): Promise<Response | void> {
  const limiter = c.env.FRONT_DOOR;
  // Cloudflare always sets CF-Connecting-IP, never to a loopback address: without one, or with
  // loopback (wrangler dev, local tools, the bench), there is no stranger to count.
  const client = clientAddress(c.req.header("cf-connecting-ip"));
  if (isLimiter(limiter) && !LOCAL.has(client)) {
    const { success } = await limiter.limit({ key: client });
    if (!success) {
      if (c.req.path === "/webhook") countAtDoor(c, rawLedgerName(c.env), c.req.header("x-github-event") ?? "", "shed");
      return c.json({ error: "too many requests from this address: slow down" }, 429, { "retry-after": "10" });
    }
  }
  await next();
}
