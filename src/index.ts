// The Worker entry: HTTP routes, the scheduled sweep and the ledger class, a few lines each.
import { settingsFor } from "./config/settings-for.ts";
import type { WorkerEnv } from "./durable/ledger-for.ts";
import { createApp } from "./http/app.ts";
import { ledgerFor } from "./durable/ledger-for.ts";
import { logLine } from "./log.ts";
import { errorText } from "./model/error-text.ts";

export { Ledger } from "./durable/ledger.ts";
export { Drain } from "./http/drain-entrypoint.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    const result = settingsFor(env);
    if (!result.ok) {
      logLine({ msg: "sweep skipped: arc-reaper is misconfigured", errors: result.errors });
      return;
    }
    // The cron's own time is the sweep's now: all ages are measured from it.
    ctx.waitUntil(
      ledgerFor(env, result.settings.ledgerName)
        .sweep(controller.scheduledTime)
        .then(() => undefined)
        .catch((e: unknown) => logLine({ msg: "sweep failed", error: errorText(e) })),
    );
  },
} satisfies ExportedHandler<WorkerEnv>;
