// The in-cluster server's FRONT_DOOR: what the Workers rate limiting binding
// does on Cloudflare (`[[ratelimits]]` in wrangler.toml), done by the server
// itself. workerd has no such binding; the generated config
// (scripts/server/workerd-config.ts) makes this module an internal extension
// and FRONT_DOOR a wrapped binding of it, with wrangler.toml's limit and period
// as inner bindings, so src/http/shed-floods.ts calls the same `limit({ key })`
// in both homes. One process serves the one ledger (one replica), so a count
// in this isolate's memory is the whole count: a window per address, at most
// `limit` requests in each `period` seconds, like Cloudflare's per location.
// No imports: the build strips the types and embeds the text as it is.

interface LimiterEnv {
  limit: number;
  period: number;
}

interface Window {
  start: number;
  count: number;
}

/** Bounds memory under a flood from many addresses: past it, windows that ended are dropped first. */
const MAX_TRACKED = 100_000;

export default function frontDoor(env: LimiterEnv): { limit(options: { key: string }): Promise<{ success: boolean }> } {
  const limit = Number(env.limit);
  const periodMs = Number(env.period) * 1000;
  if (!(limit > 0) || !(periodMs > 0)) throw new Error(`FRONT_DOOR needs a positive limit and period, got ${String(env.limit)} and ${String(env.period)}`);
  const windows = new Map<string, Window>();
  const forgetEnded = (now: number): void => {
    for (const [key, w] of windows) if (now - w.start >= periodMs) windows.delete(key);
  };
  return {
    async limit({ key }: { key: string }): Promise<{ success: boolean }> {
      const now = Date.now();
      const start = now - (now % periodMs);
      let w = windows.get(key);
      if (w === undefined || w.start !== start) {
        if (windows.size >= MAX_TRACKED) forgetEnded(now);
        // Still full: that many addresses within one period is itself a flood; start counting afresh.
        if (windows.size >= MAX_TRACKED) windows.clear();
        w = { start, count: 0 };
        windows.set(key, w);
      }
      w.count++;
      return { success: w.count <= limit };
    },
  };
}
