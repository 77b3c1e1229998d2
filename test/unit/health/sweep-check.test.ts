// /healthz/deep's sweep check (src/health/sweep-check.ts): when the last sweep completed, what drives it in
// each home, and late (not ok) past the period and SWEEP_SLACK_SECONDS, the alert ArcReaperNoSweep's threshold.
import { describe, expect, it } from "vitest";
import { SWEEP_SLACK_SECONDS, sweepDriver } from "../../../src/config/home.ts";
import { sweepCheck } from "../../../src/health/sweep-check.ts";

const NOW = Date.parse("2026-12-07T10:00:00Z");
const cron = sweepDriver({ kind: "cloudflare" });
const alarm = sweepDriver({ kind: "cluster", sweepEverySeconds: 600 });

describe("the deep health's sweep check", () => {
  it("names what drives the sweep in each home", () => {
    expect(cron).toEqual({ home: "cloudflare", drivenBy: "cron", everySeconds: 60 });
    expect(alarm).toEqual({ home: "cluster", drivenBy: "alarm", everySeconds: 600 });
    expect(sweepCheck({ driver: cron, lastAt: null, alarmAt: null, now: NOW })).toEqual({
      name: "sweep",
      ok: true,
      detail: "no sweep has completed yet; sweeps are driven by the cron trigger every minute (Cloudflare)",
    });
    expect(sweepCheck({ driver: alarm, lastAt: NOW - 30_000, alarmAt: NOW + 570_000, now: NOW })).toEqual({
      name: "sweep",
      ok: true,
      detail:
        "the last sweep completed at 2026-12-07T09:59:30.000Z (30 s ago); sweeps are driven by the ledger's alarm every 600 s (in the cluster; the alarm is set for 2026-12-07T10:09:30.000Z)",
    });
  });

  it("is late past the period and the slack, in either home", () => {
    const at = (driver: typeof cron, ageSeconds: number, alarmAt: number | null = null) =>
      sweepCheck({ driver, lastAt: NOW - ageSeconds * 1000, alarmAt, now: NOW });
    expect(at(cron, 60 + SWEEP_SLACK_SECONDS).ok).toBe(true);
    expect(at(cron, 60 + SWEEP_SLACK_SECONDS + 1)).toEqual({
      name: "sweep",
      ok: false,
      detail:
        "sweeps have stopped: the last sweep completed at 2026-12-07T09:54:59.000Z (301 s ago), over 300 s; sweeps are driven by the cron trigger every minute (Cloudflare)",
    });
    expect(at(alarm, 600 + SWEEP_SLACK_SECONDS).ok).toBe(true);
    expect(at(alarm, 600 + SWEEP_SLACK_SECONDS + 1, null).detail).toMatch(/^sweeps have stopped: .*over 840 s; .*no alarm is set\)$/);
  });

  it("reads a completion in the future (the clock stepped back) as now", () => {
    expect(sweepCheck({ driver: cron, lastAt: NOW + 86_400_000, alarmAt: null, now: NOW })).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/\(0 s ago\)/),
    });
  });
});
