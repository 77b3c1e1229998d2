// The Worker entry: HTTP routes and the scheduled sweep, a few lines each.
import { settingsFor } from "./config/settings-for.ts";
import type { Settings } from "./config/settings.ts";
import type { WorkerEnv } from "./env.ts";
import { newGithubCache } from "./github/github-client.ts";
import { createApp } from "./http/app.ts";
import { logLine } from "./log.ts";
import { runSweep, type IsolateState } from "./reaper/run-sweep.ts";
import { newSweepMemory } from "./reaper/sweep.ts";

const app = createApp();
// Installation tokens, installation look-ups and what earlier sweeps saw live as
// long as the isolate, per settings (a token of one App is useless to another).
const isolateStates = new WeakMap<Settings, IsolateState>();

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    const result = settingsFor(env);
    if (!result.ok) {
      logLine({ msg: "sweep skipped: arc-reaper is misconfigured", errors: result.errors });
      return;
    }
    const settings = result.settings;
    let state = isolateStates.get(settings);
    if (!state) isolateStates.set(settings, (state = { github: newGithubCache(), sweep: newSweepMemory() }));
    // The cron's own time is the sweep's now: all ages are measured from it.
    ctx.waitUntil(
      runSweep(env.FACTS, settings, state, controller.scheduledTime).catch((e: unknown) =>
        logLine({ msg: "sweep failed", error: e instanceof Error ? e.message : String(e) }),
      ),
    );
  },
} satisfies ExportedHandler<WorkerEnv>;
