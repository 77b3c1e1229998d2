// The one way to read the settings, for the Worker and the ledger alike: read
// and validated once per env object (Workers hand the same env to every request
// of an isolate; a Durable Object keeps its own), and again only when the test
// ledger's overrides change. A WeakMap keyed by the env, so a test (or a
// redeploy) that brings another env never sees a stale answer. A cache, not
// state: a new isolate reads again.
import { logLine } from "../log.ts";
import { readSettings, type SettingsResult } from "./settings.ts";

const cache = new WeakMap<object, Map<string, SettingsResult>>();

/**
 * The settings of `env`, with `overrides` (JSON of settings laid over the env's: only the test ledger has any).
 * Settings that work but should change (old names) are logged on the first read, unless `quiet` (the ledger:
 * the Worker logged them).
 */
export function settingsFor(env: object, opts: { overrides?: string; quiet?: boolean } = {}): SettingsResult {
  const overrides = opts.overrides ?? "";
  let byOverrides = cache.get(env);
  if (!byOverrides) {
    byOverrides = new Map();
    cache.set(env, byOverrides);
  }
  const known = byOverrides.get(overrides);
  if (known) return known;
  const vars = overrides ? (JSON.parse(overrides) as Record<string, string>) : {};
  const result = readSettings({ ...(env as Record<string, unknown>), ...vars });
  byOverrides.set(overrides, result);
  if (!opts.quiet && result.ok && result.settings.warnings.length > 0) logLine({ msg: "settings: change these", warnings: result.settings.warnings });
  return result;
}
