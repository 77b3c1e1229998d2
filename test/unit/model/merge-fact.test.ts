// Folding facts into a runner's record (src/model/merge-fact.ts), and the
// delay after the grace (src/ledger/close-delay.ts): pure, so the unit project (and
// Stryker) holds them, not only the workers tests.
import { describe, expect, it } from "vitest";
import { delayAfterGraceMs } from "../../../src/ledger/close-delay.ts";
import { mergeJobFact, mergeRunCompletion } from "../../../src/model/merge-fact.ts";
import type { JobCompleted, JobStarted, RunCompleted } from "../../../src/model/facts.ts";
import { isOpen, withStory, type RunnerRecord } from "../../../src/model/runner.ts";

const NOW = "2026-12-03T07:00:00.000Z";
const started: JobStarted = {
  type: "job-started",
  runner: "arc-runners-abcde-m1",
  repo: "octo-org/octo-repo",
  runId: 7,
  runAttempt: 2,
  jobId: 70,
  startedAt: "2026-12-03T06:00:00Z",
  installationId: 4242,
  source: "guid-1",
  names: { workflow: "CI", job: "build" },
};
const completed: JobCompleted = {
  ...started,
  type: "job-completed",
  completedAt: "2026-12-03T06:30:00Z",
  conclusion: "cancelled",
  source: "guid-2",
  names: { job: "build (final)", branch: "main" },
};
const run = (o: Partial<RunCompleted> = {}): RunCompleted => ({
  type: "run-completed",
  repo: started.repo,
  runId: 7,
  runAttempt: 2,
  updatedAt: "2026-12-03T06:40:00Z",
  conclusion: "failure",
  source: "guid-3",
  ...o,
});

describe("mergeJobFact", () => {
  it("a job's start makes a running record with its story; the same fact again changes nothing", () => {
    const r = mergeJobFact(undefined, started, undefined, NOW);
    expect(r).toMatchObject({ runner: started.runner, repo: started.repo, runId: 7, runAttempt: 2, jobId: 70, state: "running", reason: "", dueAt: null });
    expect(r.startedAt).toBe(started.startedAt);
    expect(r.installationId).toBe(4242);
    expect(r.names).toEqual({ workflow: "CI", job: "build" });
    expect(r.story).toEqual([
      { at: NOW, what: "job 70 of run 7 (attempt 2) in octo-org/octo-repo started on arc-runners-abcde-m1 at 2026-12-03T06:00:00Z", source: "guid-1" },
    ]);
    expect(mergeJobFact(r, started, undefined, "later")).toBe(r);
  });

  it("the completion finishes it, in either order, and its names have the last word", () => {
    const a = mergeJobFact(mergeJobFact(undefined, started, undefined, NOW), completed, undefined, NOW);
    const b = mergeJobFact(mergeJobFact(undefined, completed, undefined, NOW), started, undefined, NOW);
    for (const r of [a, b]) {
      expect(r.state).toBe("finished");
      expect(r.jobCompleted).toEqual({ at: completed.completedAt, conclusion: "cancelled" });
      expect(r.names).toEqual({ workflow: "CI", job: "build (final)", branch: "main" });
      expect(r.startedAt).toBe(started.startedAt);
    }
    expect(a.story.map((s) => s.what)).toEqual([
      expect.stringContaining("started on"),
      "job 70 of run 7 (attempt 2) in octo-org/octo-repo is cancelled, completed at 2026-12-03T06:30:00Z",
    ]);
    // A second completion keeps the first.
    const again = mergeJobFact(a, { ...completed, completedAt: "2026-12-03T06:50:00Z", conclusion: "success", names: undefined }, undefined, NOW);
    expect(again.jobCompleted).toEqual(a.jobCompleted);
  });

  it("names only: a change of names alone is a new record without a story entry", () => {
    const r = mergeJobFact(undefined, started, undefined, NOW);
    const renamed = mergeJobFact(r, { ...started, names: { branch: "dev" } }, undefined, NOW);
    expect(renamed).not.toBe(r);
    expect(renamed.names).toEqual({ workflow: "CI", job: "build", branch: "dev" });
    expect(renamed.story).toHaveLength(1);
    // A start's names only fill in: the ones known stay.
    expect(mergeJobFact(r, { ...started, names: { job: "other" } }, undefined, NOW)).toBe(r);
  });

  it("a covering run finishes the record; a closed record takes nothing", () => {
    const r = mergeJobFact(undefined, started, run({ names: { workflow: "Release" } }), NOW);
    expect(r.state).toBe("finished");
    expect(r.runCompleted).toEqual({ at: "2026-12-03T06:40:00Z", conclusion: "failure", attempt: 2 });
    expect(r.names?.workflow).toBe("CI");
    for (const state of ["reaped", "gone", "stuck"] as const) {
      const closed: RunnerRecord = { ...r, state };
      expect(mergeJobFact(closed, completed, undefined, NOW)).toBe(closed);
    }
  });
});

describe("mergeRunCompletion", () => {
  const open = mergeJobFact(undefined, started, undefined, NOW);

  it("this attempt's or a later one's completion finishes the job, and says which", () => {
    const same = mergeRunCompletion(open, run(), NOW);
    expect(same).toMatchObject({ state: "finished", runCompleted: { at: "2026-12-03T06:40:00Z", conclusion: "failure", attempt: 2 } });
    expect(same.story.at(-1)).toEqual({ at: NOW, what: "run 7 in octo-org/octo-repo is failure, completed at 2026-12-03T06:40:00Z", source: "guid-3" });
    const later = mergeRunCompletion(open, run({ runAttempt: 3 }), NOW);
    expect(later.story.at(-1)?.what).toBe("run 7 (a later attempt, 3) in octo-org/octo-repo is failure, completed at 2026-12-03T06:40:00Z");
    expect(mergeRunCompletion(same, run(), "later")).toBe(same);
  });

  it("an earlier attempt, a job of unknown attempt, or a closed record are left as they are", () => {
    expect(mergeRunCompletion(open, run({ runAttempt: 1 }), NOW)).toBe(open);
    const unknown = { ...open, runAttempt: 0 };
    expect(mergeRunCompletion(unknown, run(), NOW)).toBe(unknown);
    const gone: RunnerRecord = { ...open, state: "gone" };
    expect(mergeRunCompletion(gone, run(), NOW)).toBe(gone);
  });

  it("keeps the lowest completed attempt, and of one attempt the earliest completion", () => {
    const at3 = mergeRunCompletion(open, run({ runAttempt: 3, updatedAt: "2026-12-03T06:50:00Z" }), NOW);
    const at2 = mergeRunCompletion(at3, run({ runAttempt: 2, updatedAt: "2026-12-03T06:45:00Z" }), NOW);
    expect(at2.runCompleted).toEqual({ at: "2026-12-03T06:45:00Z", conclusion: "failure", attempt: 2 });
    const earlier = mergeRunCompletion(at2, run({ updatedAt: "2026-12-03T06:41:00Z" }), NOW);
    expect(earlier.runCompleted?.at).toBe("2026-12-03T06:41:00Z");
    expect(mergeRunCompletion(earlier, run({ updatedAt: "2026-12-03T06:59:00Z" }), NOW)).toBe(earlier);
    expect(mergeRunCompletion(earlier, run({ runAttempt: 4 }), NOW)).toBe(earlier);
  });

  it("names from the run fill in only; names alone change no story", () => {
    const named = mergeRunCompletion(mergeRunCompletion(open, run(), NOW), run({ names: { branch: "main", workflow: "Other" } }), NOW);
    expect(named.names).toEqual({ workflow: "CI", job: "build", branch: "main" });
    expect(named.story).toHaveLength(2);
  });
});

describe("runner records", () => {
  it("a story keeps its last 40 entries; running and finished are open", () => {
    let r: RunnerRecord = mergeJobFact(undefined, started, undefined, NOW);
    for (let i = 0; i < 45; i++) r = withStory(r, { at: String(i), what: `entry ${i}`, source: "test" });
    expect(r.story).toHaveLength(40);
    expect(r.story[0]?.what).toBe("entry 5");
    expect(["running", "finished", "reaped", "gone", "stuck"].map((s) => isOpen(s as RunnerRecord["state"]))).toEqual([true, true, false, false, false]);
  });
});

describe("delayAfterGraceMs", () => {
  const policy = { graceSeconds: 300, maxJobSeconds: 3600 };
  const at = (iso: string) => Date.parse(iso);
  it("from the grace's end after the completion, or from the bound after the start when over it; never below 0", () => {
    expect(delayAfterGraceMs({ cause: "job", completedAt: "2026-12-03T06:00:00Z", startedAt: null, closedAt: at("2026-12-03T06:05:10Z") }, policy)).toBe(
      10_000,
    );
    expect(
      delayAfterGraceMs(
        { cause: "over-bound", completedAt: "2026-12-03T06:00:00Z", startedAt: "2026-12-03T05:00:00Z", closedAt: at("2026-12-03T06:00:20Z") },
        policy,
      ),
    ).toBe(20_000);
    expect(delayAfterGraceMs({ cause: "job", completedAt: "2026-12-03T06:00:00Z", startedAt: null, closedAt: at("2026-12-03T06:01:00Z") }, policy)).toBe(0);
  });
  it("undefined when the moment is unknown", () => {
    expect(delayAfterGraceMs({ cause: "job", completedAt: null, startedAt: "2026-12-03T05:00:00Z", closedAt: 0 }, policy)).toBeUndefined();
    expect(delayAfterGraceMs({ cause: "over-bound", completedAt: "2026-12-03T06:00:00Z", startedAt: undefined, closedAt: 0 }, policy)).toBeUndefined();
    expect(delayAfterGraceMs({ cause: "job", completedAt: "not a time", startedAt: null, closedAt: 0 }, policy)).toBeUndefined();
  });
});
