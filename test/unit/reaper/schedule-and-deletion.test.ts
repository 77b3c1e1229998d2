import { describe, expect, it } from "vitest";
import type { DeletionWatch, TrackedRunner } from "../../../src/model/runner.ts";
import { checkDeletion } from "../../../src/reaper/check-deletion.ts";
import { scheduleFromFacts } from "../../../src/reaper/schedule-facts.ts";
import { policy } from "../support/fakes.ts";

const T0 = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const facts = (o: Partial<TrackedRunner> = {}): TrackedRunner => ({
  runner: "r-1",
  repo: "o/r",
  runId: 7,
  runAttempt: 1,
  jobId: 70,
  startedAt: iso(T0 - 900_000),
  ...o,
});

describe("scheduleFromFacts (plain Node): the next look of facts no look judged yet, in ms", () => {
  it("a completion: at the grace end, even in the past", () => {
    expect(scheduleFromFacts(facts({ jobCompleted: { at: iso(T0 - 600_000), conclusion: "success" } }), T0, policy)).toEqual({
      next: { at: T0 - 300_000 },
      reason: expect.stringMatching(/^due now: /),
    });
  });
  it("running: at the recheck or the bound, whichever comes first", () => {
    expect(scheduleFromFacts(facts(), T0, policy).next).toEqual({ at: T0 - 900_000 + 3_600_000 });
    expect(scheduleFromFacts(facts(), T0, { ...policy, recheckSeconds: undefined }).next).toEqual({ at: T0 - 900_000 + 432_000_000 });
  });
  it("no start time: with the sweep", () => {
    expect(scheduleFromFacts(facts({ startedAt: undefined }), T0, policy).next).toEqual({ withSweep: true });
  });
});

describe("checkDeletion (plain Node)", () => {
  const w: DeletionWatch = {
    rowId: 1,
    name: "r-1",
    cluster: "default",
    namespace: "arc-a",
    uid: "u-1",
    repo: "o/r",
    jobId: 70,
    deletedAt: T0 - 120_000,
    dueAt: T0,
    reason: "job done",
  };
  it("went when missing or replaced; stuck when still there; unknown when it cannot tell", () => {
    expect(checkDeletion(w, { kind: "missing" }, T0, 600)).toEqual({ kind: "went", code: "Went", reason: "went 120s after our delete" });
    expect(checkDeletion(w, { kind: "found", runner: { name: "r-1", namespace: "arc-a", uid: "u-2" } }, T0, 600)).toMatchObject({ kind: "went", code: "Went" });
    expect(checkDeletion(w, { kind: "found", runner: { name: "r-1", namespace: "arc-a", uid: "u-1" } }, T0, 600)).toMatchObject({
      kind: "stuck",
      code: "Stuck",
      dueAt: T0 + 600_000,
      newly: true,
    });
    expect(checkDeletion(w, { kind: "unknown", why: "HTTP 503" }, T0, 600)).toEqual({
      kind: "unknown",
      code: "CannotTell",
      reason: "cannot tell whether it went: HTTP 503",
      dueAt: T0 + 600_000,
    });
  });

  it("says in the stuck reason how long ago, where, since when it is Terminating and what GitHub says; once stuck it is not newly so", () => {
    const runner = { name: "r-1", namespace: "arc-a", uid: "u-1", deletionTimestamp: iso(T0 - 110_000) };
    expect(checkDeletion(w, { kind: "found", runner }, T0, 600, "job 70 in_progress")).toEqual({
      kind: "stuck",
      code: "Stuck",
      reason: `stuck: deleted 120s ago and still in arc-a (Terminating since ${iso(T0 - 110_000)}), held by ARC's finalizer; GitHub says job 70 in_progress; never deleted again`,
      dueAt: T0 + 600_000,
      newly: true,
    });
    expect(checkDeletion({ ...w, stuckAt: T0 - 60_000 }, { kind: "found", runner: { name: "r-1", namespace: "arc-a", uid: "u-1" } }, T0, 600)).toEqual({
      kind: "stuck",
      code: "Stuck",
      reason: "stuck: deleted 120s ago and still in arc-a, held by ARC's finalizer; never deleted again",
      dueAt: T0 + 600_000,
      newly: false,
    });
  });
});
