// /healthz/deep's word on the sweep: when the last one completed, what drives
// it in this home (the cron trigger on Cloudflare, the ledger's alarm in the
// cluster) and how often, and where the alarm stands. Late (not ok) when no
// sweep completed for the period and SWEEP_SLACK_SECONDS besides: what the
// alert ArcReaperNoSweep fires on. Pure.
import { SWEEP_SLACK_SECONDS, type SweepDriver } from "../config/home.ts";

export interface SweepState {
  driver: SweepDriver;
  /** When the last sweep completed (its pass's clock, ms), or null before the first. */
  lastAt: number | null;
  /** When the ledger's alarm is set for (ms), or null. */
  alarmAt: number | null;
  now: number;
}

export function sweepCheck(s: SweepState): { name: string; ok: boolean; detail: string } {
  const { driver } = s;
  const by =
    driver.drivenBy === "cron"
      ? "driven by the cron trigger every minute (Cloudflare)"
      : `driven by the ledger's alarm every ${driver.everySeconds} s (in the cluster; ${s.alarmAt === null ? "no alarm is set" : `the alarm is set for ${new Date(s.alarmAt).toISOString()}`})`;
  if (s.lastAt === null) return { name: "sweep", ok: true, detail: `no sweep has completed yet; sweeps are ${by}` };
  // A completion stamped in the future (the clock stepped back since) is read as now.
  const ageSeconds = Math.max(0, Math.round((s.now - s.lastAt) / 1000));
  const late = ageSeconds > driver.everySeconds + SWEEP_SLACK_SECONDS;
  const when = `the last sweep completed at ${new Date(s.lastAt).toISOString()} (${ageSeconds} s ago)`;
  return {
    name: "sweep",
    ok: !late,
    detail: late ? `sweeps have stopped: ${when}, over ${driver.everySeconds + SWEEP_SLACK_SECONDS} s; sweeps are ${by}` : `${when}; sweeps are ${by}`,
  };
}
