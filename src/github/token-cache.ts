// Installation tokens are the one thing an isolate keeps: a cache, per App,
// that costs one mint when it is lost. Everything else lives in the ledger.
import type { Settings } from "../config/settings.ts";
import type { GithubCache } from "./installation-and-rate-memory.ts";

const caches = new Map<string, GithubCache["tokens"]>();

export function tokenCacheFor(settings: Pick<Settings, "githubApiUrl" | "appId">): GithubCache["tokens"] {
  const key = `${settings.githubApiUrl}#${settings.appId}`;
  let tokens = caches.get(key);
  if (!tokens) {
    tokens = new Map();
    caches.set(key, tokens);
  }
  return tokens;
}
