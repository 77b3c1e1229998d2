// The sweep clock's families in /metrics (src/metrics/arc-reaper-metrics.ts): the last sweep's age by the
// clock at the scrape, and the period, labelled with the home and what drives the sweep there.
import { describe, expect, it } from "vitest";
import { sweepDriver } from "../../../src/config/home.ts";
import type { LedgerSnapshot } from "../../../src/ledger/queries.ts";
import type { LastSweep } from "../../../src/ledger/memory-table.ts";
import { arcReaperFamilies } from "../../../src/metrics/arc-reaper-metrics.ts";

const NOW = Date.parse("2026-12-07T10:00:00Z");
const snapshot = (lastSweep: LastSweep | null): LedgerSnapshot => ({
  runners: { running: 0, finished: 0, failed: 0, stuck: 0, reaped: 0, gone: 0 },
  counters: [],
  lastSweep,
  paused: null,
  alarmAt: null,
});
const sweptAt = (at: number) => ({ at: new Date(at).toISOString(), durationMs: 1, errors: {}, githubCalls: 0 }) as unknown as LastSweep;

function samples(s: LedgerSnapshot, driver = sweepDriver({ kind: "cloudflare" }), now = NOW) {
  const families = arcReaperFamilies({ snapshot: s, agents: null, sweep: { driver, now } });
  const of = (name: string) => families.find((f) => f.name === name)?.samples;
  return { age: of("arc_reaper_last_sweep_age_seconds"), every: of("arc_reaper_sweep_every_seconds") };
}

describe("the sweep clock's metrics", () => {
  it("say how long ago the last sweep completed and how often one is due, and what drives it", () => {
    expect(samples(snapshot(sweptAt(NOW - 90_500)))).toEqual({
      age: [{ labels: { home: "cloudflare", driven_by: "cron" }, value: 90.5 }],
      every: [{ labels: { home: "cloudflare", driven_by: "cron" }, value: 60 }],
    });
    expect(samples(snapshot(sweptAt(NOW - 1_000)), sweepDriver({ kind: "cluster", sweepEverySeconds: 300 }))).toEqual({
      age: [{ labels: { home: "cluster", driven_by: "alarm" }, value: 1 }],
      every: [{ labels: { home: "cluster", driven_by: "alarm" }, value: 300 }],
    });
  });

  it("have no age before the first sweep, and read a completion in the future as now", () => {
    expect(samples(snapshot(null)).age).toEqual([]);
    expect(samples(snapshot(sweptAt(NOW + 86_400_000))).age).toEqual([{ labels: { home: "cloudflare", driven_by: "cron" }, value: 0 }]);
  });
});
