// The Worker entry: HTTP routes and the scheduled sweep, a few lines each.
import { settingsFor } from "./config/settings-for.ts";
import type { Settings } from "./config/settings.ts";
import type { WorkerEnv } from "./env.ts";
import { newGithubCache, type GithubCache } from "./github/github-client.ts";
import { createApp } from "./http/app.ts";
import { logLine } from "./log.ts";
import { runSweep } from "./reaper/run-sweep.ts";

const app = createApp();
// Installation tokens and installation look-ups live as long as the isolate,
// per settings (a token of one App or GitHub host is useless to another).
const githubCaches = new WeakMap<Settings, GithubCache>();

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    const result = settingsFor(env);
    if (!result.ok) {
      logLine({ msg: "sweep skipped: arc-reaper is misconfigured", errors: result.errors });
      return;
    }
    const settings = result.settings;
    let cache = githubCaches.get(settings);
    if (!cache) githubCaches.set(settings, (cache = newGithubCache()));
    // The cron's own time is the sweep's now: all ages are measured from it.
    ctx.waitUntil(
      runSweep(env.FACTS, settings, cache, controller.scheduledTime).catch((e: unknown) =>
        logLine({ msg: "sweep failed", error: e instanceof Error ? e.message : String(e) }),
      ),
    );
  },
} satisfies ExportedHandler<WorkerEnv>;
