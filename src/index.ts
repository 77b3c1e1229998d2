// The Worker entry: HTTP routes and the scheduled sweep, a few lines each.
import { settingsFor } from "./config/settings-for.ts";
import type { WorkerEnv } from "./env.ts";
import { newGithubCache } from "./github/github-client.ts";
import { createApp } from "./http/app.ts";
import { logLine } from "./log.ts";
import { runSweep } from "./reaper/run-sweep.ts";

const app = createApp();
// Installation tokens and installation look-ups live as long as the isolate.
const githubCache = newGithubCache();

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    const settings = settingsFor(env);
    if (!settings.ok) {
      logLine({ msg: "sweep skipped: arc-reaper is misconfigured", errors: settings.errors });
      return;
    }
    ctx.waitUntil(
      runSweep(env.FACTS, settings.settings, githubCache).catch((e: unknown) =>
        logLine({ msg: "sweep failed", error: e instanceof Error ? e.message : String(e) }),
      ),
    );
  },
} satisfies ExportedHandler<WorkerEnv>;
