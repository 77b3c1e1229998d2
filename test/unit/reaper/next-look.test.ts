// nextLook on plain Node: the one answer to "when is this runner looked at
// again?", one case at a time, in ms since the epoch.
import { describe, expect, it } from "vitest";
import type { RunnerRecord } from "../../../src/model/runner.ts";
import { nextLook } from "../../../src/reaper/next-look.ts";
import { policy, REPO } from "../support/fakes.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const STARTED = NOW - 900_000;

const row = (over: Partial<RunnerRecord> = {}): RunnerRecord => ({
  id: 1,
  runner: "r-1",
  repo: REPO,
  runId: 7,
  runAttempt: 1,
  jobId: 70,
  startedAt: iso(STARTED),
  state: "running",
  reason: "stored reason",
  dueAt: null,
  story: [],
  ...over,
});

describe("nextLook (plain Node): when a runner is looked at again", () => {
  it("closed: never", () => {
    expect(nextLook({ kind: "closed" })).toEqual({ never: true });
  });

  it("judged: the judge's own time; none: with the sweep", () => {
    expect(nextLook({ kind: "judged", verdict: { dueAt: NOW + 300_000 } })).toEqual({ at: NOW + 300_000 });
    expect(nextLook({ kind: "judged", verdict: { dueAt: 0 } })).toEqual({ at: 0 });
    expect(nextLook({ kind: "judged", verdict: {} })).toEqual({ withSweep: true });
  });

  it("delete-failed: a Failed runner's DELETE sent again 1, 2, 4 ... 60 minutes after its failures", () => {
    expect(nextLook({ kind: "delete-failed", failures: 1, now: NOW })).toEqual({ at: NOW + 60_000 });
    expect(nextLook({ kind: "delete-failed", failures: 3, now: NOW })).toEqual({ at: NOW + 240_000 });
    expect(nextLook({ kind: "delete-failed", failures: 40, now: NOW })).toEqual({ at: NOW + 3_600_000 });
  });

  it("deletion-watch: a deletion we made is looked at again when it would count as stuck", () => {
    expect(nextLook({ kind: "deletion-watch", now: NOW, stuckSeconds: 600 })).toEqual({ at: NOW + 600_000 });
    expect(nextLook({ kind: "deletion-watch", now: NOW, stuckSeconds: 0 })).toEqual({ at: NOW });
  });

  it("stale-view: 30 s after now", () => {
    expect(nextLook({ kind: "stale-view", now: NOW })).toEqual({ at: NOW + 30_000 });
  });

  it("awaiting-webhook: 3 minutes after the runner was first seen busy, whatever now is", () => {
    expect(nextLook({ kind: "awaiting-webhook", firstSeen: NOW - 60_000 })).toEqual({ at: NOW + 120_000 });
  });

  it("backing-off: the stored look stands", () => {
    expect(nextLook({ kind: "backing-off", stored: { at: NOW + 240_000 } })).toEqual({ at: NOW + 240_000 });
    expect(nextLook({ kind: "backing-off", stored: { withSweep: true } })).toEqual({ withSweep: true });
  });

  it("failed: 1 minute after the first, doubling to 1 hour; never sooner than the step's own time", () => {
    expect(nextLook({ kind: "failed", failures: 1, now: NOW })).toEqual({ at: NOW + 60_000 });
    expect(nextLook({ kind: "failed", failures: 3, now: NOW })).toEqual({ at: NOW + 240_000 });
    expect(nextLook({ kind: "failed", failures: 9, now: NOW })).toEqual({ at: NOW + 3_600_000 });
    expect(nextLook({ kind: "failed", failures: 1, now: NOW, at: NOW + 600_000 })).toEqual({ at: NOW + 600_000 });
    expect(nextLook({ kind: "failed", failures: 2, now: NOW, at: NOW + 10_000 })).toEqual({ at: NOW + 120_000 });
  });

  it("failed, held for the agent: no back-off (its return lifts the hold): the step's own time, else with the sweep", () => {
    expect(nextLook({ kind: "failed", failures: 4, now: NOW, heldFor: "agent" })).toEqual({ withSweep: true });
    expect(nextLook({ kind: "failed", failures: 4, now: NOW, at: NOW + 5_000, heldFor: "agent" })).toEqual({ at: NOW + 5_000 });
    expect(nextLook({ kind: "failed", failures: 1, now: NOW, heldFor: "cap" })).toEqual({ at: NOW + 60_000 });
  });

  it("budget: when GitHub may be asked again, at least 1 s after now", () => {
    expect(nextLook({ kind: "budget", until: NOW + 42_000, now: NOW })).toEqual({ at: NOW + 42_000 });
    expect(nextLook({ kind: "budget", until: NOW - 5_000, now: NOW })).toEqual({ at: NOW + 1000 });
  });

  it("cap: when the window frees a delete, at least 1 s after now", () => {
    expect(nextLook({ kind: "cap", freeAt: NOW + 30_000, now: NOW })).toEqual({ at: NOW + 30_000 });
    expect(nextLook({ kind: "cap", freeAt: NOW + 500, now: NOW })).toEqual({ at: NOW + 1000 });
  });

  it("dry-run and paused: with the sweep (no time of their own)", () => {
    expect(nextLook({ kind: "dry-run" })).toEqual({ withSweep: true });
    expect(nextLook({ kind: "paused" })).toEqual({ withSweep: true });
  });

  it("facts: a completion's grace end (the earliest completion; possibly past), else the next recheck or the bound, else with the sweep", () => {
    const completed = row({ jobCompleted: { at: iso(NOW - 600_000), conclusion: "success" } });
    expect(nextLook({ kind: "facts", record: completed, policy })).toEqual({ at: NOW - 600_000 + 300_000 });
    const both = row({
      jobCompleted: { at: iso(NOW - 60_000), conclusion: "success" },
      runCompleted: { at: iso(NOW - 120_000), conclusion: "failure", attempt: 1 },
    });
    expect(nextLook({ kind: "facts", record: both, policy })).toEqual({ at: NOW - 120_000 + 300_000 });
    expect(nextLook({ kind: "facts", record: row(), policy })).toEqual({ at: STARTED + 3_600_000 });
    expect(nextLook({ kind: "facts", record: row({ checkedAt: NOW }), policy })).toEqual({ at: NOW + 3_600_000 });
    expect(nextLook({ kind: "facts", record: row(), policy: { ...policy, recheckSeconds: undefined } })).toEqual({ at: STARTED + 432_000_000 });
    expect(nextLook({ kind: "facts", record: row({ startedAt: undefined }), policy })).toEqual({ withSweep: true });
  });

  it("rechecked: the next recheck after this read when the facts set the stored time; any other stored time stands", () => {
    const set = row({ dueAt: STARTED + 3_600_000 });
    expect(nextLook({ kind: "rechecked", before: set, after: { ...set, checkedAt: NOW }, policy })).toEqual({ at: NOW + 3_600_000 });
    const held = row({ dueAt: NOW + 42_000, heldFor: "budget" });
    expect(nextLook({ kind: "rechecked", before: held, after: { ...held, checkedAt: NOW }, policy })).toEqual({ at: NOW + 42_000 });
    const withSweep = row({ dueAt: null });
    expect(nextLook({ kind: "rechecked", before: withSweep, after: { ...withSweep, checkedAt: NOW }, policy })).toEqual({ withSweep: true });
  });

  it("released: a lifted hold is due now", () => {
    expect(nextLook({ kind: "released", now: NOW })).toEqual({ at: NOW });
  });
});
