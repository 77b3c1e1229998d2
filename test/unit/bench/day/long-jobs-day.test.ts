// The synthetic day's second fleet (issue 25): a quarter of the runs are builds
// of 2 to 6 hours; the first fleet's trace is the one table 4 always had.
import { describe, expect, it } from "vitest";
import { DEFAULT_DAY, generateDay, LONG_JOBS_DAY } from "../../../../bench/day/trace.ts";

// Generating a day of 20,000 jobs takes seconds on a loaded machine.
const SLOW = { timeout: 60_000 };

describe("the long-jobs day", () => {
  it("has about a quarter of its jobs in runs of 2-6 h builds, every job of such a run in that range", SLOW, () => {
    const trace = generateDay(LONG_JOBS_DAY);
    expect(trace.jobs).toHaveLength(20_000);
    const hours = (j: (typeof trace.jobs)[number]) => (j.completedAt - j.startedAt) / 3_600_000;
    // A cancelled job ends early: judge the runs by their jobs that ran to the end.
    const long = trace.jobs.filter((j) => j.stuck !== "cancelled" && hours(j) >= 2);
    expect(long.length / trace.jobs.length).toBeGreaterThan(0.2);
    expect(long.length / trace.jobs.length).toBeLessThan(0.3);
    expect(Math.max(...long.map(hours))).toBeLessThanOrEqual(6);
    expect(trace.peakRunning).toBeLessThanOrEqual(LONG_JOBS_DAY.maxRunners);
  });

  it("leaves the short-jobs day as it was (its random stream is unchanged)", SLOW, () => {
    const trace = generateDay(DEFAULT_DAY);
    expect([trace.runs.length, trace.deliveries.length, trace.peakRunning]).toEqual([8_409, 85_227, 416]);
  });
});
