// The agent's reconnect and retry back-off (src/agent/backoff.ts): doubling from
// the base, capped, each delay jittered into [half, whole] of its ceiling.
import { describe, expect, it, vi } from "vitest";
import { Backoff, DEFAULT_BACKOFF, sleep } from "../../../src/agent/backoff.ts";

describe("Backoff", () => {
  it("doubles from 1 s to the 30 s cap by default, at the ceiling when the jitter draws 1", () => {
    const b = new Backoff(DEFAULT_BACKOFF, () => 1);
    expect(Array.from({ length: 8 }, () => b.next())).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it("never waits less than half the ceiling (jitter 0) and starts over after reset", () => {
    const b = new Backoff({ baseMs: 1000, capMs: 30_000 }, () => 0);
    expect([b.next(), b.next(), b.next()]).toEqual([500, 1000, 2000]);
    b.reset();
    expect(b.next()).toBe(500);
  });

  it("spreads delays between half and whole of the ceiling", () => {
    const b = new Backoff({ baseMs: 1000, capMs: 1000 });
    const seen = Array.from({ length: 200 }, () => b.next());
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(500);
    expect(Math.max(...seen)).toBeLessThanOrEqual(1000);
    expect(new Set(seen).size).toBeGreaterThan(20);
  });

  it("stays at the cap after many failures (no overflow)", () => {
    const b = new Backoff(DEFAULT_BACKOFF, () => 1);
    for (let i = 0; i < 2000; i++) b.next();
    expect(b.next()).toBe(30_000);
  });
});

describe("sleep", () => {
  it("ends early when its signal aborts, and leaves no timer behind", async () => {
    vi.useFakeTimers();
    try {
      const stop = new AbortController();
      let ended = false;
      const slept = sleep(10_000, stop.signal).then(() => (ended = true));
      await vi.advanceTimersByTimeAsync(20);
      expect(ended).toBe(false); // still asleep on the fake clock's 20 ms
      stop.abort();
      await slept;
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("ends when its time is up", async () => {
    vi.useFakeTimers();
    try {
      let ended = false;
      const slept = sleep(10_000, new AbortController().signal).then(() => (ended = true));
      await vi.advanceTimersByTimeAsync(9_999);
      expect(ended).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await slept;
      expect(ended).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
