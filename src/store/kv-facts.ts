import { factKey, isFact, type Fact } from "./facts.ts";
import { isSweepSummary, type SweepSummary } from "./sweep-summary.ts";

/** The narrow slice of Workers KV that arc-reaper uses; tests can stand in for it. */
export type FactsKV = Pick<KVNamespace, "put" | "list">;

export interface KvCounter {
  lists: number;
  puts: number;
  gets: number;
}

export const newKvCounter = (): KvCounter => ({ lists: 0, puts: 0, gets: 0 });

// KV caps metadata at 1,024 bytes; a fact larger than that is a bug, not data to truncate.
const MAX_METADATA_BYTES = 1024;
// Workers KV requires an expirationTtl of at least 60 seconds.
const MIN_TTL_SECONDS = 60;

export async function writeFact(kv: FactsKV, fact: Fact, ttlSeconds: number, counter?: KvCounter): Promise<void> {
  const size = new TextEncoder().encode(JSON.stringify(fact)).length;
  if (size > MAX_METADATA_BYTES) {
    throw new Error(`arc-reaper store: fact ${factKey(fact)} is ${size} bytes, over KV's ${MAX_METADATA_BYTES}-byte metadata limit`);
  }
  if (counter) counter.puts++;
  // The value stays empty: the metadata is the record, so a list returns it.
  await kv.put(factKey(fact), "", {
    metadata: fact,
    expirationTtl: Math.max(MIN_TTL_SECONDS, Math.ceil(ttlSeconds)),
  });
}

/** Reads every fact in one list pass (1,000 keys per call), without gets. */
export async function listFacts(kv: FactsKV, counter?: KvCounter): Promise<Fact[]> {
  return (await listRecords(kv, counter)).facts;
}

/** The facts and the last sweep's summary, from the same list pass. */
export async function listRecords(kv: FactsKV, counter?: KvCounter): Promise<{ facts: Fact[]; lastSweep?: SweepSummary }> {
  const facts: Fact[] = [];
  let lastSweep: SweepSummary | undefined;
  let cursor: string | undefined;
  do {
    if (counter) counter.lists++;
    const page: KVNamespaceListResult<unknown, string> = await kv.list(cursor ? { cursor } : {});
    for (const key of page.keys) {
      if (isFact(key.metadata)) facts.push(key.metadata);
      else if (isSweepSummary(key.metadata)) lastSweep = key.metadata;
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return { facts, lastSweep };
}
