import { logLine } from "../log.ts";
import { oncePerEnv } from "./once-per-env.ts";
import { readSettings, type SettingsResult } from "./settings.ts";

/** The settings, validated once per isolate and env; settings that work but should change (old names) are logged then. */
export const settingsFor: (env: object) => SettingsResult = oncePerEnv(readSettings, (result) => {
  if (result.ok && result.settings.warnings.length > 0) logLine({ msg: "settings: change these", warnings: result.settings.warnings });
});
