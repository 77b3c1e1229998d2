// In the cluster there are no Cron Triggers: the ledger's own alarm drives the
// sweep. The one alarm stays at the earliest of the earliest due time and the
// next sweep (the last sweep's start plus REAPER_SWEEP_EVERY_SECONDS); when it
// fires, the alarm's pass runs and then, if its time has come, a sweep. A
// sweep's start is kept in the ledger, so the clock survives a restart, and a
// sweep due while the process was down runs as soon as the alarm fires again.
// The start is wall-clock time: after the clock steps back, a start in the
// future is read as now (logged once: it is rewritten as now), so the next
// sweep is due at min(start, now) + the period, never when real time passes
// the old stamp. On Cloudflare (no ARC_REAPER_HOME) the clock is off and the
// cron sweeps; the same reading keeps a future stamp from skipping its sweeps.
import type { Home } from "../config/home.ts";
import type { MemoryTable } from "../ledger/memory-table.ts";

/** The sweep period in ms when the ledger drives its own sweeps (in the cluster), else undefined. */
export function sweepEveryMs(home: Home | undefined): number | undefined {
  return home?.kind === "cluster" ? home.sweepEverySeconds * 1000 : undefined;
}

/**
 * When the last sweep started, as the sweep clock reads it at `now`: a stamp in the future (the clock stepped
 * back since it was written) is read as now, logged with the code SweepStampInFuture and rewritten as now, so
 * it is logged once.
 */
export function sweepRanAt(memory: MemoryTable, now: number, log: (line: Record<string, unknown>) => void): number | undefined {
  const ranAt = memory.get("sweep-ran-at");
  if (ranAt === undefined || ranAt <= now) return ranAt;
  log({
    msg: "sweep clock: the last sweep's start is in the future (the clock stepped back): read as now",
    reason: "SweepStampInFuture",
    ranAt: new Date(ranAt).toISOString(),
    now: new Date(now).toISOString(),
  });
  memory.set("sweep-ran-at", now);
  return now;
}

/** When the next sweep is due: the last one's start (never later than now) plus the period (now, before the first). */
export function nextSweepAt(memory: MemoryTable, everyMs: number, now: number, log: (line: Record<string, unknown>) => void): number {
  const ranAt = sweepRanAt(memory, now, log);
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
