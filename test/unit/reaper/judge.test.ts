// The decision table of docs/design.md, row by row, against the pure judge.
import { describe, expect, it } from "vitest";
import { judge, type JudgeInput } from "../../../src/reaper/judge.ts";
import type { ClusterView } from "../../../src/model/view.ts";
import type { GithubWord } from "../../../src/model/verdict.ts";
import type { TrackedRunner } from "../../../src/model/runner.ts";
import { decision } from "../support/decision.ts";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const policy = { graceSeconds: 300, maxJobSeconds: 432_000 };
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const runner = (over: Partial<Extract<ClusterView, { kind: "found" }>["runner"]> = {}): ClusterView => ({
  kind: "found",
  runner: { namespace: "arc-runners", name: "arc-x-1", uid: "u-1", workflowRunId: 10, jobRepositoryName: "o/r", ...over },
});
const tracked = (over: Partial<TrackedRunner> = {}): TrackedRunner => ({
  runner: "arc-x-1",
  repo: "o/r",
  runId: 10,
  runAttempt: 1,
  jobId: 100,
  startedAt: ago(600),
  installationId: 7,
  ...over,
});
const at = (input: Partial<JudgeInput>) => judge({ cluster: runner(), now: NOW, policy, ...input });
/** The decision without its words (pinned once per code in test/unit/model/verdict-wording.test.ts). */
const decide = (input: Partial<JudgeInput>) => decision(at(input));

describe("the decision table", () => {
  it("no facts, no status.workflowRunId: keep, idle", () => {
    expect(decide({ cluster: runner({ workflowRunId: undefined }) })).toEqual({ code: "Idle", verdict: "keep" });
  });

  it("deletionTimestamp: keep, already being deleted (even with a finished job)", () => {
    const v = decide({
      tracked: tracked({ jobCompleted: { at: ago(900), conclusion: "cancelled" } }),
      cluster: runner({ deletionTimestamp: "2026-11-30T11:59:00Z" }),
    });
    expect(v).toEqual({ code: "BeingDeleted", verdict: "keep" });
  });

  it("status.workflowRunId differs from the facts' run: keep, moved on", () => {
    const v = decide({ tracked: tracked({ jobCompleted: { at: ago(900), conclusion: "success" } }), cluster: runner({ workflowRunId: 11 }) });
    expect(v).toEqual({ code: "MovedOn", verdict: "keep", about: "run 11" });
  });

  it("job completed less than the grace ago: wait until the grace ends", () => {
    const v = decide({ tracked: tracked({ jobCompleted: { at: ago(120), conclusion: "cancelled" } }) });
    expect(v).toEqual({ code: "InGrace", verdict: "wait", dueAt: Date.parse(ago(-180)) });
  });

  it("job completed at least the grace ago: delete", () => {
    expect(decide({ tracked: tracked({ jobCompleted: { at: ago(300), conclusion: "cancelled" } }) })).toEqual({
      code: "JobCompleted",
      verdict: "delete",
      cause: "job-completed",
    });
  });

  it("run completed at least the grace ago: delete, whatever the conclusion", () => {
    expect(decide({ tracked: tracked({ runCompleted: { at: ago(400), conclusion: "timed_out", attempt: 1 } }) })).toEqual({
      code: "RunCompleted",
      verdict: "delete",
      cause: "run-completed",
    });
  });

  it("the earliest evidence decides when both the job and the run completed", () => {
    const v = decide({
      tracked: tracked({ jobCompleted: { at: ago(100), conclusion: "success" }, runCompleted: { at: ago(350), conclusion: "cancelled", attempt: 1 } }),
    });
    expect(v).toEqual({ code: "RunCompleted", verdict: "delete", cause: "run-completed" });
    // The job's completion, had it been earlier, would have decided it.
    const jobFirst = decide({
      tracked: tracked({ jobCompleted: { at: ago(350), conclusion: "success" }, runCompleted: { at: ago(100), conclusion: "cancelled", attempt: 1 } }),
    });
    expect(jobFirst).toEqual({ code: "JobCompleted", verdict: "delete", cause: "job-completed" });
  });

  it("a re-run: judged by the later attempt's facts (its job still running: keep)", () => {
    // A fold of the facts only attaches a run completion of the job's attempt or later; attempt 2's job has none.
    const v = decide({ tracked: tracked({ runAttempt: 2, startedAt: ago(60) }) });
    expect(v).toEqual({ code: "Running", verdict: "keep", dueAt: Date.parse(ago(60 - 432_000)) });
  });

  it("job running within the bound: keep, due at the bound", () => {
    expect(decide({ tracked: tracked({ startedAt: ago(3600) }) })).toEqual({ code: "Running", verdict: "keep", dueAt: Date.parse(ago(3600 - 432_000)) });
  });

  it("job running past the bound, GitHub not asked yet: keep and ask", () => {
    expect(decide({ tracked: tracked({ startedAt: ago(432_001) }) })).toEqual({ code: "OverBoundAsk", verdict: "keep", askGithub: true });
  });

  it("past the bound, GitHub confirms still running: delete", () => {
    const github: GithubWord = { kind: "job", status: "in_progress", conclusion: null, completedAt: null };
    expect(decide({ tracked: tracked({ startedAt: ago(500_000) }), github })).toEqual({ code: "OverBound", verdict: "delete", cause: "over-bound" });
  });

  it("past the bound, GitHub says completed: judged by its completed_at against the grace", () => {
    const done: GithubWord = { kind: "job", status: "completed", conclusion: "failure", completedAt: ago(1000) };
    expect(decide({ tracked: tracked({ startedAt: ago(500_000) }), github: done })).toEqual({
      code: "JobCompleted",
      verdict: "delete",
      cause: "job-completed",
    });
    const recent: GithubWord = { kind: "job", status: "completed", conclusion: "failure", completedAt: ago(10) };
    expect(decide({ tracked: tracked({ startedAt: ago(500_000) }), github: recent })).toEqual({ code: "InGrace", verdict: "wait", dueAt: NOW + 290_000 });
  });

  it("GitHub unreachable or token refused: keep, counted as an error", () => {
    const github: GithubWord = { kind: "error", why: "minting a token: GitHub answered 403" };
    expect(decide({ tracked: tracked({ startedAt: ago(500_000) }), github })).toEqual({ code: "GithubError", verdict: "keep", error: true });
  });

  it("runner gone from the cluster: close the facts as gone", () => {
    expect(decide({ tracked: tracked(), cluster: { kind: "missing" } })).toEqual({ code: "Gone", verdict: "gone" });
  });

  it("cluster unreadable: keep, error, never delete", () => {
    const v = decide({
      tracked: tracked({ jobCompleted: { at: ago(900), conclusion: "cancelled" } }),
      cluster: { kind: "unknown", why: "listing ephemeralrunners in arc-runners: HTTP 500" },
    });
    expect(v).toEqual({ code: "CannotJudge", verdict: "keep", error: true });
  });

  it("no facts but status.workflowRunId: keep and ask GitHub", () => {
    expect(decide({})).toEqual({ code: "UnknownBusy", verdict: "keep", askGithub: true });
  });

  it("a runner with facts whose status has no workflowRunId yet is judged by the facts", () => {
    expect(at({ tracked: tracked({ jobCompleted: { at: ago(301), conclusion: "cancelled" } }), cluster: runner({ workflowRunId: undefined }) }).code).toBe(
      "JobCompleted",
    );
  });
});

describe("identity: facts condemn only the object that took the job (rows 3 and 4)", () => {
  const finished = { jobCompleted: { at: ago(900), conclusion: "success" } };

  it("row 3: the cluster's runner has another uid than the job's runner: gone, never delete", () => {
    const v = decide({ tracked: tracked({ ...finished, uid: "u-old" }), cluster: runner({ uid: "u-new" }) });
    expect(v).toEqual({ code: "Replaced", verdict: "gone" });
  });

  it("row 3: the same uid is the job's runner: judged by the facts", () => {
    expect(at({ tracked: tracked({ ...finished, uid: "u-1" }), cluster: runner({ uid: "u-1" }) }).code).toBe("JobCompleted");
  });

  it("row 4: a runner created more than 60 s after the job started is not that job's runner: gone, never delete", () => {
    const v = decide({ tracked: tracked({ ...finished, startedAt: ago(1200) }), cluster: runner({ createdAt: ago(1200 - 61) }) });
    expect(v).toEqual({ code: "Replaced", verdict: "gone" });
  });

  it("row 4: an idle runner (no workflowRunId) that reuses the name is not condemned either", () => {
    const v = decide({ tracked: tracked({ ...finished, startedAt: ago(1200) }), cluster: runner({ workflowRunId: undefined, createdAt: ago(30) }) });
    expect(v).toEqual({ code: "Replaced", verdict: "gone" });
  });

  it("row 4: within the 60 s clock skew, or created before the job started, it is the job's runner", () => {
    expect(at({ tracked: tracked({ ...finished, startedAt: ago(1200) }), cluster: runner({ createdAt: ago(1200 - 60) }) }).code).toBe("JobCompleted");
    expect(at({ tracked: tracked({ ...finished, startedAt: ago(1200) }), cluster: runner({ createdAt: ago(1205) }) }).code).toBe("JobCompleted");
  });

  it("rows 3 and 4 come before the facts: a replaced runner is never waited on or asked about", () => {
    const v = decide({ tracked: tracked({ uid: "u-old", startedAt: ago(500_000) }), cluster: runner({ uid: "u-new" }) });
    expect(v).toEqual({ code: "Replaced", verdict: "gone" });
  });
});

describe("lost completions: the recheck (row 10)", () => {
  const recheck = { ...policy, recheckSeconds: 3600 };

  it("running past the recheck interval, never re-read: keep and re-read the job from GitHub", () => {
    expect(decide({ policy: recheck, tracked: tracked({ startedAt: ago(3601) }) })).toEqual({
      code: "Recheck",
      verdict: "keep",
      askGithub: true,
      recheck: true,
    });
  });

  it("re-read within the interval: keep, due at the next recheck (not at the bound)", () => {
    const checkedAt = NOW - 600_000;
    expect(decide({ policy: recheck, tracked: tracked({ startedAt: ago(7200), checkedAt }) })).toEqual({
      code: "Running",
      verdict: "keep",
      dueAt: checkedAt + 3_600_000,
    });
  });

  it("within the first interval: keep, due at the first recheck", () => {
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(600) }) }).dueAt).toBe(Date.parse(ago(600 - 3600)));
  });

  it("a re-read that finds the job completed: judged by GitHub's completed_at against the grace", () => {
    const done = (s: number): GithubWord => ({ kind: "job", status: "completed", conclusion: "cancelled", completedAt: ago(s) });
    expect(decide({ policy: recheck, tracked: tracked({ startedAt: ago(7200) }), github: done(400) })).toEqual({
      code: "JobCompleted",
      verdict: "delete",
      cause: "job-completed",
    });
    expect(decide({ policy: recheck, tracked: tracked({ startedAt: ago(7200) }), github: done(100) })).toEqual({
      code: "InGrace",
      verdict: "wait",
      dueAt: NOW + 200_000,
    });
  });

  it("a re-read that finds the job still running keeps it (within the bound it is never deleted)", () => {
    const github: GithubWord = { kind: "job", status: "in_progress", conclusion: null, completedAt: null };
    const v = decide({ policy: recheck, tracked: tracked({ startedAt: ago(7200), checkedAt: NOW }), github });
    expect(v).toEqual({ code: "Running", verdict: "keep", dueAt: Date.parse(ago(-3600)) });
  });

  it("a re-read GitHub refused: keep, counted as an error", () => {
    const github: GithubWord = { kind: "error", why: "GitHub answered 502" };
    expect(decide({ policy: recheck, tracked: tracked({ startedAt: ago(7200) }), github })).toEqual({ code: "GithubError", verdict: "keep", error: true });
  });

  it("without a recheck interval a running job within the bound is never asked about", () => {
    const v = decide({ tracked: tracked({ startedAt: ago(7200) }) });
    expect(v).toEqual({ code: "Running", verdict: "keep", dueAt: Date.parse(ago(7200 - 432_000)) });
  });
});

describe("the edges of the table", () => {
  const recheck = { ...policy, recheckSeconds: 3600 };

  it("no facts and no object: idle, never gone (nothing to close)", () => {
    expect(decide({ cluster: { kind: "missing" } })).toEqual({ code: "Idle", verdict: "keep" });
  });

  it("gone with the view's own words when it has them", () => {
    // The words are the point: an operator reads why the view took the runner for gone.
    expect(at({ tracked: tracked(), cluster: { kind: "missing", why: "only an idle object of its name" } })).toEqual({
      code: "Gone",
      verdict: "gone",
      reason: "only an idle object of its name",
    });
  });

  it("a completion stamped in the future (clock skew): 0 s ago, waiting the whole grace", () => {
    expect(decide({ tracked: tracked({ jobCompleted: { at: ago(-5), conclusion: "success" } }) })).toEqual({
      code: "InGrace",
      verdict: "wait",
      dueAt: NOW + 305_000,
    });
  });

  it("exactly at the bound: still within it (due then); a second past: ask", () => {
    expect(decide({ tracked: tracked({ startedAt: ago(432_000) }) })).toEqual({ code: "Running", verdict: "keep", dueAt: NOW });
    expect(decide({ tracked: tracked({ startedAt: ago(432_001) }) })).toEqual({ code: "OverBoundAsk", verdict: "keep", askGithub: true });
  });

  it("exactly at the recheck: asked; a re-read before the first recheck does not move it earlier", () => {
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(3600) }) })).toMatchObject({ code: "Recheck", askGithub: true, recheck: true });
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(600), checkedAt: NOW - 700_000 }) }).dueAt).toBe(NOW + 3_000_000);
  });

  it("a re-read that says completed without a time is not a completion; without a recheck GitHub's word within the bound is not used", () => {
    const odd: GithubWord = { kind: "job", status: "completed", conclusion: "success", completedAt: null };
    expect(decide({ policy: recheck, tracked: tracked({ startedAt: ago(7200), checkedAt: NOW }), github: odd })).toEqual({
      code: "Running",
      verdict: "keep",
      dueAt: NOW + 3_600_000,
    });
    const done: GithubWord = { kind: "job", status: "completed", conclusion: null, completedAt: ago(900) };
    expect(decide({ tracked: tracked({ startedAt: ago(7200) }), github: done })).toMatchObject({ code: "Running", verdict: "keep" });
    expect(decide({ policy: recheck, tracked: tracked({ startedAt: ago(7200) }), github: done })).toEqual({
      code: "JobCompleted",
      verdict: "delete",
      cause: "job-completed",
    });
  });

  it("past the bound, GitHub says completed without a conclusion or time", () => {
    const noConclusion: GithubWord = { kind: "job", status: "completed", conclusion: null, completedAt: ago(900) };
    expect(decide({ tracked: tracked({ startedAt: ago(500_000) }), github: noConclusion })).toEqual({
      code: "JobCompleted",
      verdict: "delete",
      cause: "job-completed",
    });
    const noTime: GithubWord = { kind: "job", status: "completed", conclusion: "success", completedAt: null };
    expect(decide({ tracked: tracked({ startedAt: ago(500_000) }), github: noTime })).toEqual({ code: "OverBound", verdict: "delete", cause: "over-bound" });
  });

  it("a job without a start time: kept, an error", () => {
    expect(decide({ tracked: tracked({ startedAt: undefined }) })).toEqual({ code: "NoStartTime", verdict: "keep", error: true });
  });

  it("a run's completion names a later attempt only when it is later", () => {
    // The words are the point: which attempt ended is said only in them (the code is RunCompleted either way).
    const same = at({ tracked: tracked({ runAttempt: 2, runCompleted: { at: ago(900), conclusion: "success", attempt: 2 } }) });
    expect(same.reason).toBe("run 10 in o/r is success, completed 900s ago");
    const later = at({ tracked: tracked({ runAttempt: 1, runCompleted: { at: ago(900), conclusion: "success", attempt: 2 } }) });
    expect(later.reason).toBe("run 10 (attempt 2) in o/r is success, completed 900s ago");
  });

  it("row 4 at exactly 60 s of skew: still the job's runner; no creation time: the job's runner", () => {
    const started = ago(600);
    const v = at({ tracked: tracked({ startedAt: started, jobCompleted: { at: ago(400), conclusion: "success" } }), cluster: runner({ createdAt: ago(540) }) });
    expect(v.code).toBe("JobCompleted");
    const none = at({ tracked: tracked({ jobCompleted: { at: ago(400), conclusion: "success" } }), cluster: runner({ createdAt: undefined }) });
    expect(none.code).toBe("JobCompleted");
  });

  it("a busy runner without facts names its repository, or says it is unknown", () => {
    // The words are the point: the repository to look in is said only in them.
    expect(at({ cluster: runner({ jobRepositoryName: undefined }) }).reason).toBe(
      "runner works on run 10 in an unknown repository and no webhook told us about it: asking GitHub",
    );
  });
});
