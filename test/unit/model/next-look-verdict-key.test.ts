import { describe, expect, it } from "vitest";
import { backoffMs, dueAtOf, lookAt, NEVER, nextLookOf, WITH_SWEEP } from "../../../src/model/next-look.ts";
import { codeOfKey, isNewDecision, verdictKey, type Verdict } from "../../../src/model/verdict.ts";

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
  it("is the decision's kind and code: the words and ages of its reason never change it", () => {
    expect(verdictKey({ verdict: "keep", code: "Running" })).toBe("keep/Running");
    const running = (reason: string) => verdictKey({ verdict: "keep", code: "Running", reason } as Verdict);
    expect(running("job 9 in octo/repo is in_progress for 121s, within the bound of 3600s")).toBe(
      running("job 9 in octo/repo started 7s ago with no completion heard, within the bound of 3600s; its run 12 is among octo/repo's in-progress runs"),
    );
  });

  it("keeps apart what were two decisions: another kind, another code, another run a moved-on runner works on", () => {
    expect(verdictKey({ verdict: "wait", code: "InGrace" })).not.toBe(verdictKey({ verdict: "keep", code: "InGrace" }));
    expect(verdictKey({ verdict: "keep", code: "Running" })).not.toBe(verdictKey({ verdict: "keep", code: "Recheck" }));
    expect(verdictKey({ verdict: "keep", code: "MovedOn", about: "run 11" })).toBe("keep/MovedOn/run 11");
    expect(verdictKey({ verdict: "keep", code: "MovedOn", about: "run 11" })).not.toBe(verdictKey({ verdict: "keep", code: "MovedOn", about: "run 12" }));
  });
});

describe("isNewDecision (plain Node)", () => {
  const running: Verdict = { verdict: "keep", code: "Running", reason: "job 9 is in_progress for 60s" };

  it("a row never judged is a new decision; the same key is not; another is", () => {
    expect(isNewDecision(undefined, running)).toBe(true);
    expect(isNewDecision("keep/Running", running)).toBe(false);
    expect(isNewDecision("keep/Recheck", running)).toBe(true);
    expect(isNewDecision("keep/MovedOn/run 11", { ...running, code: "MovedOn", about: "run 12" })).toBe(true);
  });

  it("a key stored before keys were codes: the same kind is the same decision, another kind a new one", () => {
    expect(isNewDecision("keep: job 9 in octo/repo is in_progress for Ns, within the bound of Ns", running)).toBe(false);
    expect(isNewDecision("wait: job 9 completed (success); grace Ns", running)).toBe(true);
    expect(isNewDecision("delete: job 9 completed", { verdict: "delete", code: "JobCompleted" })).toBe(false);
    expect(isNewDecision("gone: runner r-1 is no longer in the cluster", { verdict: "keep", code: "Idle" })).toBe(true);
    // Only those four kinds and a colon and a space make a legacy key.
    expect(isNewDecision("keep:Running", running)).toBe(true);
    expect(isNewDecision("keeps: x", running)).toBe(true);
    expect(isNewDecision("x keep: y", running)).toBe(true);
  });
});

describe("codeOfKey (plain Node)", () => {
  it("reads the code back from a key, with or without its about", () => {
    expect(codeOfKey(verdictKey({ verdict: "keep", code: "Running" }))).toBe("Running");
    expect(codeOfKey(verdictKey({ verdict: "keep", code: "MovedOn", about: "run 11" }))).toBe("MovedOn");
    expect(codeOfKey(verdictKey({ verdict: "delete", code: "JobCompleted" }))).toBe("JobCompleted");
  });

  it("a row never judged, a key stored before keys were codes, or a word that is no code: none", () => {
    expect(codeOfKey(undefined)).toBeUndefined();
    expect(codeOfKey("keep: job 9 in octo/Running is in_progress for Ns")).toBeUndefined();
    expect(codeOfKey("keep/NoSuchCode")).toBeUndefined();
    expect(codeOfKey("keeps/Running")).toBeUndefined();
    expect(codeOfKey("keep/Running extra")).toBeUndefined();
  });
});
