import type { FactsKV } from "./store/kv-facts.ts";

/** The Worker's bindings: the facts KV namespace plus the settings as vars and secrets. */
export interface WorkerEnv {
  FACTS: FactsKV;
  [setting: string]: unknown;
}
