// Polling for a condition instead of sleeping and hoping an ordering happened.

/** Resolves with the first truthy value `probe` gives, polling every `everyMs`; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, o: { timeoutMs?: number; everyMs?: number } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (o.timeoutMs ?? 5000);
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`waited ${o.timeoutMs ?? 5000} ms for ${what}`);
    await sleep(o.everyMs ?? 20);
  }
}

/** A plain wait, for when time itself must pass (a delay to run out, a window to slide). */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));
