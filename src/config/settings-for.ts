import { logLine } from "../log.ts";
import { readSettings, type SettingsResult } from "./settings.ts";

// Validated once per isolate: Workers hand the same env object to every
// request of an isolate, so a WeakMap keyed by it caches without going stale
// when a test (or a redeploy) brings a different env.
const cache = new WeakMap<object, SettingsResult>();

export function settingsFor(env: object): SettingsResult {
  let result = cache.get(env);
  if (!result) {
    result = readSettings(env as Record<string, unknown>);
    cache.set(env, result);
    // Once per isolate and env: settings that work but should change (old names).
    if (result.ok && result.settings.warnings.length > 0) logLine({ msg: "settings: change these", warnings: result.settings.warnings });
  }
  return result;
}
