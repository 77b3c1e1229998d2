import type { Ledger } from "./ledger.ts";

/** The Worker's bindings: the ledger plus the settings as vars and secrets. */
export interface WorkerEnv {
  LEDGER: DurableObjectNamespace<Ledger>;
  [setting: string]: unknown;
}

/** The one ledger, by name (LEDGER_NAME, "ledger" unless set). */
export function ledgerFor(env: WorkerEnv, name: string): DurableObjectStub<Ledger> {
  return env.LEDGER.get(env.LEDGER.idFromName(name));
}

/** The ledger's name straight from the env, for answers given before the settings are known to be valid. */
export function rawLedgerName(env: WorkerEnv): string {
  const name = env.LEDGER_NAME;
  return typeof name === "string" && /^[a-z0-9][-a-z0-9]{0,62}$/.test(name) ? name : "ledger";
}

type LedgerStub = DurableObjectStub<Ledger>;
type AdminStub = Awaited<ReturnType<LedgerStub["admin"]>>;

/** Calls on the ledger's admin RpcTarget; its stub is disposed after (an undisposed stub keeps the object busy). */
export async function withAdmin<T>(ledger: LedgerStub, call: (admin: AdminStub) => Promise<T>): Promise<T> {
  const admin = await ledger.admin();
  try {
    return await call(admin);
  } finally {
    admin[Symbol.dispose]();
  }
}
