import type { WorkerEnv } from "../env.ts";

/** The one ledger, by name (LEDGER_NAME, "ledger" unless set). */
export function ledgerFor(env: WorkerEnv, name: string): DurableObjectStub<import("./ledger.ts").Ledger> {
  return env.LEDGER.get(env.LEDGER.idFromName(name));
}

/** The ledger's name straight from the env, for answers given before the settings are known to be valid. */
export function rawLedgerName(env: WorkerEnv): string {
  const name = env.LEDGER_NAME;
  return typeof name === "string" && /^[a-z0-9][-a-z0-9]{0,62}$/.test(name) ? name : "ledger";
}
