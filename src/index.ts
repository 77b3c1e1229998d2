// The Worker entry: HTTP routes and the scheduled sweep, a few lines each.
import type { WorkerEnv } from "./env.ts";
import { createApp } from "./http/app.ts";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<WorkerEnv>;
