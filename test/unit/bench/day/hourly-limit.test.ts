// The bench's model of GitHub's hourly limit (bench/day/hourly-limit.ts): a 304 is a request made, not one counted.
import { describe, expect, it } from "vitest";
import { GithubCalls } from "../../../../bench/day/hourly-limit.ts";

describe("the day's GitHub calls", () => {
  it("counts a 304 as a request made, not against the hour's limit", () => {
    const calls = new GithubCalls(2);
    expect(calls.take(0, "attempt jobs read")).toBe(true);
    expect(calls.take(1, "attempt jobs read", true)).toBe(true);
    expect(calls.take(2, "attempt jobs read", true)).toBe(true);
    expect(calls.take(3, "run read")).toBe(true);
    expect(calls.take(4, "run read")).toBe(false); // the hour's 2 counted are spent
    expect(calls.byHour).toEqual([2]);
    expect(calls.requestsByHour).toEqual([4]);
    expect(calls.byKind).toEqual({ "attempt jobs read": 3, "run read": 1 });
    expect(calls.notModifiedByKind).toEqual({ "attempt jobs read": 2 });
    expect(calls.refused).toBe(1);
  });
});
