import { describe, expect, it } from "vitest";
import { SlidingWindow } from "../../../src/model/window.ts";

describe("SlidingWindow (plain Node)", () => {
  it("counts only the last 60 s and says when a slot frees", () => {
    const w = new SlidingWindow([1_000, 30_000], 2, 40_000);
    expect(w.left(40_000)).toBe(0);
    expect(w.freeAt(40_000)).toBe(61_000);
    expect(w.left(61_001)).toBe(1);
  });

  it("drops a time exactly 60 s old, keeps one a millisecond younger, and sorts what it keeps", () => {
    const w = new SlidingWindow([70_000, 40_000, 10_000, 10_001], 3, 70_000);
    expect(w.toJSON()).toEqual([10_001, 40_000, 70_000]);
    expect(w.left(70_000)).toBe(0);
    expect(w.left(70_001)).toBe(1);
    // Full at 70 000: the oldest that counts (10 001) leaves the window at 70 001.
    expect(w.freeAt(70_000)).toBe(70_001);
    // At 70 001 one fits again: now.
    expect(w.freeAt(70_001)).toBe(70_001);
  });

  it("with room left says now, and with more than the limit waits for the one that makes room", () => {
    const w = new SlidingWindow([], 2, 0);
    expect(w.freeAt(5_000)).toBe(5_000);
    w.take(5_000, 3);
    expect(w.left(5_000)).toBe(0);
    // Three at 5 000, limit 2: room comes when all three leave, at 65 000.
    expect(w.freeAt(5_000)).toBe(65_000);
    expect(w.toJSON()).toEqual([5_000, 5_000, 5_000]);
  });

  it("freeAt counts only the times still inside the window: old ones kept by take() do not hold a slot", () => {
    const w = new SlidingWindow([50_000], 2, 50_000);
    w.take(0); // a time already outside the window at 70 000
    expect(w.freeAt(70_000)).toBe(70_000);
  });
});
