import { describe, expect, it } from "vitest";
import { elapsed } from "../../../src/model/elapsed.ts";

describe("elapsed", () => {
  it("lets through the first time, and again once the period has passed", () => {
    expect(elapsed(undefined, 1_000, 60_000)).toBe(true);
    expect(elapsed(1_000, 1_000, 60_000)).toBe(false);
    expect(elapsed(1_000, 60_999, 60_000)).toBe(false);
    expect(elapsed(1_000, 61_000, 60_000)).toBe(true);
  });

  it("counts a time taken in the future (the clock stepped back since) as passed", () => {
    expect(elapsed(5_000, 4_999, 60_000)).toBe(true);
  });
});
