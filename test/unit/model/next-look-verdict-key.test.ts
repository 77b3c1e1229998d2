import { describe, expect, it } from "vitest";
import { backoffMs, dueAtOf, lookAt, NEVER, nextLookOf, WITH_SWEEP } from "../../../src/model/next-look.ts";
import { verdictKey } from "../../../src/model/verdict.ts";

describe("next look (plain Node)", () => {
  it("stores a time of its own as due_at, and nothing for the next sweep or never", () => {
    expect(dueAtOf(lookAt(1_700_000_000_000))).toBe(1_700_000_000_000);
    expect(dueAtOf(lookAt(0))).toBe(0);
    expect(dueAtOf(WITH_SWEEP)).toBeNull();
    expect(dueAtOf(NEVER)).toBeNull();
  });

  it("reads a stored due_at back: a number is a time of its own, null the next sweep", () => {
    expect(nextLookOf(1_700_000_000_000)).toEqual({ at: 1_700_000_000_000 });
    expect(nextLookOf(0)).toEqual({ at: 0 });
    expect(nextLookOf(null)).toEqual({ withSweep: true });
  });

  it("backs off not at all before the first failed ask", () => {
    expect(backoffMs(0)).toBe(0);
    expect(backoffMs(-3)).toBe(0);
    expect(backoffMs(1)).toBe(60_000);
    expect(backoffMs(1_000)).toBe(3_600_000);
  });
});

describe("verdictKey (plain Node)", () => {
  it("takes the ages out of the reason so that only a changed decision changes it", () => {
    expect(verdictKey({ verdict: "keep", reason: "job running for 120s of 3600s" })).toBe("keep: job running for Ns of Ns");
    expect(verdictKey({ verdict: "keep", reason: "job running for 121s of 3600s" })).toBe(
      verdictKey({ verdict: "keep", reason: "job running for 7s of 3600s" }),
    );
    expect(verdictKey({ verdict: "wait", reason: "job running for 7s" })).not.toBe(verdictKey({ verdict: "keep", reason: "job running for 7s" }));
  });

  it("leaves numbers that are not whole-word ages alone", () => {
    expect(verdictKey({ verdict: "delete", reason: "run 12345 completed, job 9 done" })).toBe("delete: run 12345 completed, job 9 done");
    expect(verdictKey({ verdict: "keep", reason: "pod x12s and 5sec" })).toBe("keep: pod x12s and 5sec");
  });
});
