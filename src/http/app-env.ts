import type { Settings } from "../config/settings.ts";
import type { WorkerEnv } from "../durable/ledger-for.ts";

/** What every route's context carries: the bindings, and the settings once they were found valid. */
export type AppEnv = { Bindings: WorkerEnv; Variables: { settings: Settings } };
