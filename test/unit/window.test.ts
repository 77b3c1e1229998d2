import { describe, expect, it } from "vitest";
import { SlidingWindow } from "../../src/model/window.ts";

describe("SlidingWindow (plain Node)", () => {
  it("counts only the last 60 s and says when a slot frees", () => {
    const w = new SlidingWindow([1_000, 30_000], 2, 40_000);
    expect(w.left(40_000)).toBe(0);
    expect(w.freeAt(40_000)).toBe(61_000);
    expect(w.left(61_001)).toBe(1);
  });
});
