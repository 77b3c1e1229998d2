import type { Ledger } from "./ledger/ledger.ts";

/** The Worker's bindings: the ledger plus the settings as vars and secrets. */
export interface WorkerEnv {
  LEDGER: DurableObjectNamespace<Ledger>;
  [setting: string]: unknown;
}
