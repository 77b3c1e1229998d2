// In the cluster there are no Cron Triggers: the ledger's own alarm drives the
// sweep. The one alarm stays at the earliest of the earliest due time and the
// next sweep (the last sweep's start plus REAPER_SWEEP_EVERY_SECONDS); when it
// fires, the alarm's pass runs and then, if its time has come, a sweep. A
// sweep's start is kept in the ledger, so the clock survives a restart, and a
// sweep due while the process was down runs as soon as the alarm fires again.
// On Cloudflare (no ARC_REAPER_HOME) the clock is off and the cron sweeps.
import type { Home } from "../config/home.ts";
import type { MemoryTable } from "../ledger/memory-table.ts";

/** The sweep period in ms when the ledger drives its own sweeps (in the cluster), else undefined. */
export function sweepEveryMs(home: Home | undefined): number | undefined {
  return home?.kind === "cluster" ? home.sweepEverySeconds * 1000 : undefined;
}

/** When the next sweep is due: the last one's start plus the period (now, before the first). */
export function nextSweepAt(memory: MemoryTable, everyMs: number, now: number): number {
  const ranAt = memory.get("sweep-ran-at");
  return ranAt === undefined ? now : ranAt + everyMs;
}

/** The alarm's time: the earliest due row or the next sweep, whichever comes first (null: neither). */
export function alarmTime(nextDue: number | null, sweepAt: number | undefined): number | null {
  if (sweepAt === undefined) return nextDue;
  return nextDue === null ? sweepAt : Math.min(nextDue, sweepAt);
}

/** In the cluster the alarm is also the sweep's clock: a ledger woken with none set starts it. */
export async function startSweepClock(storage: DurableObjectStorage, everyMs: number | undefined): Promise<void> {
  if (everyMs !== undefined && (await storage.getAlarm()) === null) await storage.setAlarm(Date.now());
}
