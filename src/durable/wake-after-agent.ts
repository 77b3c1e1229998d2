import { errorText } from "../model/error-text.ts";
import type { LedgerRoot } from "./ledger-root.ts";

/** A cluster's agent view is whole again: what was held for want of it is judged now, by the alarm. */
export async function wakeAfterAgent(root: LedgerRoot, cluster: string): Promise<void> {
  try {
    const store = root.store(root.settings());
    if (store.release("agent", Date.now(), cluster) > 0) await root.rearm(store);
  } catch (e) {
    root.log({ msg: "waking runners after the agent's snapshot failed", error: errorText(e) });
  }
}
