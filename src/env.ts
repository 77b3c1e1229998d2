import type { Ledger } from "./durable/ledger.ts";

/** The Worker's bindings: the ledger plus the settings as vars and secrets. */
export interface WorkerEnv {
  LEDGER: DurableObjectNamespace<Ledger>;
  [setting: string]: unknown;
}
