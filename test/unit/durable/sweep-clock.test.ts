// The in-cluster sweep clock (src/durable/sweep-clock.ts): the next sweep is a
// period after the last one's start, and a start in the future (the wall clock
// stepped back since it was written) is read as now: rewritten, logged once.
import { describe, expect, it } from "vitest";
import { alarmTime, nextSweepAt, sweepEveryMs, sweepRanAt } from "../../../src/durable/sweep-clock.ts";
import { MemoryTable } from "../../../src/ledger/memory-table.ts";
import { migrate } from "../../../src/ledger/schema.ts";
import { nodeSql } from "../support/node-sql.ts";

const T0 = Date.parse("2026-12-07T10:00:00Z");
const MINUTE = 60_000;
const DAY = 86_400_000;

function memory(): MemoryTable {
  const { sql } = nodeSql();
  migrate(sql);
  return new MemoryTable(sql);
}

function lines(): { log: (line: Record<string, unknown>) => void; logged: Record<string, unknown>[] } {
  const logged: Record<string, unknown>[] = [];
  return { log: (line) => void logged.push(line), logged };
}

describe("the sweep clock", () => {
  it("runs in the cluster only, with its period", () => {
    expect(sweepEveryMs({ kind: "cluster", sweepEverySeconds: 90 })).toBe(90_000);
    expect(sweepEveryMs({ kind: "cloudflare" })).toBeUndefined();
    expect(sweepEveryMs(undefined)).toBeUndefined();
  });

  it("is due now before the first sweep, and a period after the last one's start", () => {
    const m = memory();
    const { log, logged } = lines();
    expect(nextSweepAt(m, MINUTE, T0, log)).toBe(T0);
    m.set("sweep-ran-at", T0 - 10_000);
    expect(nextSweepAt(m, MINUTE, T0, log)).toBe(T0 + 50_000);
    m.set("sweep-ran-at", T0);
    expect(nextSweepAt(m, MINUTE, T0, log)).toBe(T0 + MINUTE); // a start at now is not in the future
    expect(logged).toEqual([]);
  });

  it("reads a start in the future as now: the next sweep is a period from now, not from the stamp; logged once", () => {
    const m = memory();
    const { log, logged } = lines();
    m.set("sweep-ran-at", T0 + DAY); // written before the clock stepped back a day
    expect(nextSweepAt(m, MINUTE, T0, log)).toBe(T0 + MINUTE);
    expect(m.get("sweep-ran-at")).toBe(T0);
    expect(nextSweepAt(m, MINUTE, T0 + 1_000, log)).toBe(T0 + MINUTE);
    expect(sweepRanAt(m, T0 + 2_000, log)).toBe(T0);
    expect(logged).toEqual([
      {
        msg: "sweep clock: the last sweep's start is in the future (the clock stepped back): read as now",
        reason: "SweepStampInFuture",
        ranAt: new Date(T0 + DAY).toISOString(),
        now: new Date(T0).toISOString(),
      },
    ]);
  });

  it("sets the alarm at the earlier of the earliest due row and the next sweep", () => {
    expect(alarmTime(null, undefined)).toBeNull();
    expect(alarmTime(T0, undefined)).toBe(T0);
    expect(alarmTime(null, T0)).toBe(T0);
    expect(alarmTime(T0 + 1, T0)).toBe(T0);
    expect(alarmTime(T0, T0 + 1)).toBe(T0);
  });
});
