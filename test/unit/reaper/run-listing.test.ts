// Rechecks answered by the repository's runs in progress (issue 25): what a
// listing says of a tracked job, which rows it moves, and how the judge takes it.
import { describe, expect, it } from "vitest";
import type { RunnerRecord } from "../../../src/model/runner.ts";
import { judge } from "../../../src/reaper/judge.ts";
import { listedWord, rowsStillRunning } from "../../../src/reaper/run-listing.ts";
import { decision } from "../support/decision.ts";
import { policy } from "../support/fakes.ts";

const NOW = Date.parse("2026-11-02T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const RECHECK_MS = (policy.recheckSeconds ?? 0) * 1000;

function row(over: Partial<RunnerRecord> = {}): RunnerRecord {
  return {
    id: 1,
    runner: "arc-runners-x7k2p-runner-aaaaa",
    repo: "octo-org/api",
    runId: 700,
    runAttempt: 1,
    jobId: 9001,
    startedAt: iso(NOW - 3 * 3_600_000),
    state: "running",
    reason: "",
    dueAt: NOW,
    story: [],
    ...over,
  };
}
const found = { kind: "found" as const, runner: { namespace: "arc", name: "arc-runners-x7k2p-runner-aaaaa", uid: "u1", workflowRunId: 700 } };

describe("listedWord: a listing's word on one job", () => {
  it("a run listed at the job's attempt answers 'its run is running'", () => {
    expect(listedWord(row(), new Map([[700, 1]]))).toEqual({ kind: "run-running", runId: 700, runAttempt: 1 });
  });

  it("says nothing of a run not listed, of another attempt, or of a job whose attempt is unknown: the job is read", () => {
    expect(listedWord(row(), new Map([[701, 1]]))).toBeUndefined();
    // A re-run in progress: this attempt ended, but the listing says not when.
    expect(listedWord(row(), new Map([[700, 2]]))).toBeUndefined();
    expect(listedWord(row({ runAttempt: 0 }), new Map([[700, 0]]))).toBeUndefined();
  });
});

describe("rowsStillRunning: the rows a listing counts as rechecked", () => {
  it("moves running rows of a listed run's attempt; never one with a completion heard, one asked in the pass, or an older attempt", () => {
    const running = new Map([[700, 2]]);
    const rows = [
      row({ id: 1, runAttempt: 2 }),
      row({ id: 2, runAttempt: 2, jobCompleted: { at: iso(NOW - 60_000), conclusion: "success" } }),
      row({ id: 3, runAttempt: 2, runCompleted: { at: iso(NOW - 60_000), conclusion: "success", attempt: 2 } }),
      row({ id: 4, runAttempt: 2 }),
      row({ id: 5, runAttempt: 1 }),
      row({ id: 6, runAttempt: 2, startedAt: undefined }),
    ];
    expect(rowsStillRunning(rows, running, new Set([4])).map((r) => r.id)).toEqual([1]);
  });

  it("leaving due rows due (read): a row due for its recheck is not put off; one not due yet is moved", () => {
    const running = new Map([[700, 1]]);
    const rows = [
      row({ id: 1, checkedAt: NOW - RECHECK_MS }), // due right now
      row({ id: 2, checkedAt: NOW - RECHECK_MS + 1 }), // due a millisecond from now
      row({ id: 3, startedAt: iso(NOW - RECHECK_MS - 1) }), // never checked, past its first recheck
      row({ id: 4, startedAt: iso(NOW - 60_000) }), // started a minute ago
    ];
    expect(rowsStillRunning(rows, running, new Set(), { policy, now: NOW }).map((r) => r.id)).toEqual([2, 4]);
    expect(rowsStillRunning(rows, running, new Set()).map((r) => r.id)).toEqual([1, 2, 3, 4]);
  });
});

describe("the judge on a run listed in progress (row 10)", () => {
  const word = { kind: "run-running" as const, runId: 700, runAttempt: 1 };

  it("keeps a job due for a recheck and moves its next recheck an interval on, never deletes", () => {
    const v = judge({ tracked: { ...row(), checkedAt: NOW }, cluster: found, github: word, now: NOW, policy });
    expect(decision(v)).toEqual({ code: "Running", verdict: "keep", dueAt: NOW + RECHECK_MS });
    expect(RECHECK_MS).toBeGreaterThan(0);
  });

  it("past the bound, the run's word is not the job's: the job is asked for", () => {
    const old = row({ startedAt: iso(NOW - (policy.maxJobSeconds + 60) * 1000) });
    const v = judge({ tracked: { ...old, checkedAt: NOW }, cluster: found, github: word, now: NOW, policy });
    expect(decision(v)).toEqual({ code: "OverBoundAsk", verdict: "keep", askGithub: true });
  });

  it("a word about another run or attempt is no answer: kept, counted as an error", () => {
    const v = judge({ tracked: { ...row({ runAttempt: 2 }), checkedAt: NOW }, cluster: found, github: word, now: NOW, policy });
    expect(decision(v)).toEqual({ code: "GithubError", verdict: "keep", error: true });
  });

  it("a completion heard still decides: the listing never hides positive evidence", () => {
    const done = row({ jobCompleted: { at: iso(NOW - 600_000), conclusion: "success" } });
    expect(judge({ tracked: done, cluster: found, github: word, now: NOW, policy }).code).toBe("JobCompleted");
  });
});
