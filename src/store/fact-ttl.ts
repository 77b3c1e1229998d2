import type { Settings } from "../config/settings.ts";

/**
 * Facts expire on their own: a job can be judged up to the bound after it
 * started, and two more days keep the admin listing's history and let a
 * closed fact outlive the job facts it closes.
 */
export function factTtlSeconds(settings: Pick<Settings, "maxJobSeconds">): number {
  return settings.maxJobSeconds + 2 * 86_400;
}
