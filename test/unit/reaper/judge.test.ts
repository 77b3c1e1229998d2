// The decision table of docs/design.md, row by row, against the pure judge.
import { describe, expect, it } from "vitest";
import { judge, type JudgeInput } from "../../../src/reaper/judge.ts";
import type { ClusterView } from "../../../src/model/view.ts";
import type { GithubWord } from "../../../src/model/verdict.ts";
import type { TrackedRunner } from "../../../src/model/runner.ts";

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

describe("the decision table", () => {
  it("no facts, no status.workflowRunId: keep, idle", () => {
    expect(at({ cluster: runner({ workflowRunId: undefined }) })).toEqual({ code: "Idle", verdict: "keep", reason: "idle: no job recorded for this runner" });
  });

  it("deletionTimestamp: keep, already being deleted (even with a finished job)", () => {
    const v = at({
      tracked: tracked({ jobCompleted: { at: ago(900), conclusion: "cancelled" } }),
      cluster: runner({ deletionTimestamp: "2026-11-30T11:59:00Z" }),
    });
    expect(v).toEqual({ code: "BeingDeleted", verdict: "keep", reason: "already being deleted since 2026-11-30T11:59:00Z" });
  });

  it("status.workflowRunId differs from the facts' run: keep, moved on", () => {
    const v = at({ tracked: tracked({ jobCompleted: { at: ago(900), conclusion: "success" } }), cluster: runner({ workflowRunId: 11 }) });
    expect(v).toEqual({ code: "MovedOn", verdict: "keep", reason: "runner moved on: it works on run 11, the facts are about run 10" });
  });

  it("job completed less than the grace ago: wait until the grace ends", () => {
    const v = at({ tracked: tracked({ jobCompleted: { at: ago(120), conclusion: "cancelled" } }) });
    expect(v).toEqual({
      code: "InGrace",
      verdict: "wait",
      reason: "job 100 in o/r is cancelled, completed 120s ago; grace 300s",
      dueAt: Date.parse(ago(-180)),
    });
  });

  it("job completed at least the grace ago: delete", () => {
    expect(at({ tracked: tracked({ jobCompleted: { at: ago(300), conclusion: "cancelled" } }) })).toEqual({
      code: "JobCompleted",
      verdict: "delete",
      reason: "job 100 in o/r is cancelled, completed 300s ago",
      cause: "job-completed",
    });
  });

  it("run completed at least the grace ago: delete, whatever the conclusion", () => {
    expect(at({ tracked: tracked({ runCompleted: { at: ago(400), conclusion: "timed_out", attempt: 1 } }) })).toEqual({
      code: "RunCompleted",
      verdict: "delete",
      reason: "run 10 in o/r is timed_out, completed 400s ago",
      cause: "run-completed",
    });
  });

  it("the earliest evidence decides when both the job and the run completed", () => {
    const v = at({
      tracked: tracked({ jobCompleted: { at: ago(100), conclusion: "success" }, runCompleted: { at: ago(350), conclusion: "cancelled", attempt: 1 } }),
    });
    expect(v.verdict).toBe("delete");
    expect(v.reason).toBe("run 10 in o/r is cancelled, completed 350s ago");
  });

  it("a re-run: judged by the later attempt's facts (its job still running: keep)", () => {
    // A fold of the facts only attaches a run completion of the job's attempt or later; attempt 2's job has none.
    const v = at({ tracked: tracked({ runAttempt: 2, startedAt: ago(60) }) });
    expect(v.verdict).toBe("keep");
    expect(v.reason).toBe("job 100 in o/r is in_progress for 60s, within the bound of 432000s");
  });

  it("job running within the bound: keep, due at the bound", () => {
    expect(at({ tracked: tracked({ startedAt: ago(3600) }) })).toEqual({
      code: "Running",
      verdict: "keep",
      reason: "job 100 in o/r is in_progress for 3600s, within the bound of 432000s",
      dueAt: Date.parse(ago(3600 - 432_000)),
    });
  });

  it("job running past the bound, GitHub not asked yet: keep and ask", () => {
    expect(at({ tracked: tracked({ startedAt: ago(432_001) }) })).toEqual({
      code: "OverBoundAsk",
      subject: "job 100 in o/r is in_progress for 432001s, over the bound of 432000s",
      verdict: "keep",
      reason: "job 100 in o/r is in_progress for 432001s, over the bound of 432000s: asking GitHub",
      askGithub: true,
    });
  });

  it("past the bound, GitHub confirms still running: delete", () => {
    const github: GithubWord = { kind: "job", status: "in_progress", conclusion: null, completedAt: null };
    expect(at({ tracked: tracked({ startedAt: ago(500_000) }), github })).toEqual({
      code: "OverBound",
      verdict: "delete",
      reason: "job 100 has been in_progress for 500000s, over the bound of 432000s",
      cause: "over-bound",
    });
  });

  it("past the bound, GitHub says completed: judged by its completed_at against the grace", () => {
    const done: GithubWord = { kind: "job", status: "completed", conclusion: "failure", completedAt: ago(1000) };
    expect(at({ tracked: tracked({ startedAt: ago(500_000) }), github: done }).verdict).toBe("delete");
    const recent: GithubWord = { kind: "job", status: "completed", conclusion: "failure", completedAt: ago(10) };
    expect(at({ tracked: tracked({ startedAt: ago(500_000) }), github: recent }).verdict).toBe("wait");
  });

  it("GitHub unreachable or token refused: keep, counted as an error", () => {
    const github: GithubWord = { kind: "error", why: "minting a token: GitHub answered 403" };
    expect(at({ tracked: tracked({ startedAt: ago(500_000) }), github })).toEqual({
      code: "GithubError",
      verdict: "keep",
      reason: "job 100 is past the bound but GitHub could not confirm: minting a token: GitHub answered 403",
      error: true,
    });
  });

  it("runner gone from the cluster: close the facts as gone", () => {
    expect(at({ tracked: tracked(), cluster: { kind: "missing" } })).toEqual({
      code: "Gone",
      verdict: "gone",
      reason: "runner arc-x-1 is no longer in the cluster",
    });
  });

  it("cluster unreadable: keep, error, never delete", () => {
    const v = at({
      tracked: tracked({ jobCompleted: { at: ago(900), conclusion: "cancelled" } }),
      cluster: { kind: "unknown", why: "listing ephemeralrunners in arc-runners: HTTP 500" },
    });
    expect(v).toEqual({ code: "CannotJudge", verdict: "keep", reason: "cannot judge: listing ephemeralrunners in arc-runners: HTTP 500", error: true });
  });

  it("no facts but status.workflowRunId: keep and ask GitHub", () => {
    expect(at({})).toEqual({
      code: "UnknownBusy",
      subject: "runner works on run 10 in o/r and no webhook told us about it",
      verdict: "keep",
      reason: "runner works on run 10 in o/r and no webhook told us about it: asking GitHub",
      askGithub: true,
    });
  });

  it("a runner with facts whose status has no workflowRunId yet is judged by the facts", () => {
    expect(at({ tracked: tracked({ jobCompleted: { at: ago(301), conclusion: "cancelled" } }), cluster: runner({ workflowRunId: undefined }) }).verdict).toBe(
      "delete",
    );
  });
});

describe("identity: facts condemn only the object that took the job (rows 3 and 4)", () => {
  const finished = { jobCompleted: { at: ago(900), conclusion: "success" } };

  it("row 3: the cluster's runner has another uid than the job's runner: gone, never delete", () => {
    const v = at({ tracked: tracked({ ...finished, uid: "u-old" }), cluster: runner({ uid: "u-new" }) });
    expect(v).toEqual({
      code: "Replaced",
      verdict: "gone",
      reason: "runner arc-x-1 was replaced: the job's runner had uid u-old, the cluster's has uid u-new",
    });
  });

  it("row 3: the same uid is the job's runner: judged by the facts", () => {
    expect(at({ tracked: tracked({ ...finished, uid: "u-1" }), cluster: runner({ uid: "u-1" }) }).verdict).toBe("delete");
  });

  it("row 4: a runner created more than 60 s after the job started is not that job's runner: gone, never delete", () => {
    const v = at({ tracked: tracked({ ...finished, startedAt: ago(1200) }), cluster: runner({ createdAt: ago(1200 - 61) }) });
    expect(v.verdict).toBe("gone");
    expect(v.reason).toBe(
      `runner arc-x-1 was created at ${ago(1139)}, after job 100 started at ${ago(1200)}: a new runner of the same name, the job's runner is gone`,
    );
  });

  it("row 4: an idle runner (no workflowRunId) that reuses the name is not condemned either", () => {
    const v = at({ tracked: tracked({ ...finished, startedAt: ago(1200) }), cluster: runner({ workflowRunId: undefined, createdAt: ago(30) }) });
    expect(v.verdict).toBe("gone");
  });

  it("row 4: within the 60 s clock skew, or created before the job started, it is the job's runner", () => {
    expect(at({ tracked: tracked({ ...finished, startedAt: ago(1200) }), cluster: runner({ createdAt: ago(1200 - 60) }) }).verdict).toBe("delete");
    expect(at({ tracked: tracked({ ...finished, startedAt: ago(1200) }), cluster: runner({ createdAt: ago(1205) }) }).verdict).toBe("delete");
  });

  it("rows 3 and 4 come before the facts: a replaced runner is never waited on or asked about", () => {
    const v = at({ tracked: tracked({ uid: "u-old", startedAt: ago(500_000) }), cluster: runner({ uid: "u-new" }) });
    expect(v.verdict).toBe("gone");
    expect(v.askGithub).toBeUndefined();
  });
});

describe("lost completions: the recheck (row 10)", () => {
  const recheck = { ...policy, recheckSeconds: 3600 };

  it("running past the recheck interval, never re-read: keep and re-read the job from GitHub", () => {
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(3601) }) })).toEqual({
      code: "Recheck",
      subject: "job 100 in o/r is in_progress for 3601s with no completion heard",
      verdict: "keep",
      reason: "job 100 in o/r is in_progress for 3601s with no completion heard: asking GitHub",
      askGithub: true,
      recheck: true,
    });
  });

  it("re-read within the interval: keep, due at the next recheck (not at the bound)", () => {
    const checkedAt = NOW - 600_000;
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(7200), checkedAt }) })).toEqual({
      code: "Running",
      verdict: "keep",
      reason: "job 100 in o/r is in_progress for 7200s, within the bound of 432000s",
      dueAt: checkedAt + 3_600_000,
    });
  });

  it("within the first interval: keep, due at the first recheck", () => {
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(600) }) }).dueAt).toBe(Date.parse(ago(600 - 3600)));
  });

  it("a re-read that finds the job completed: judged by GitHub's completed_at against the grace", () => {
    const done = (s: number): GithubWord => ({ kind: "job", status: "completed", conclusion: "cancelled", completedAt: ago(s) });
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(7200) }), github: done(400) })).toEqual({
      code: "JobCompleted",
      verdict: "delete",
      reason: "job 100 in o/r is cancelled, completed 400s ago",
      cause: "job-completed",
    });
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(7200) }), github: done(100) }).verdict).toBe("wait");
  });

  it("a re-read that finds the job still running keeps it (within the bound it is never deleted)", () => {
    const github: GithubWord = { kind: "job", status: "in_progress", conclusion: null, completedAt: null };
    const v = at({ policy: recheck, tracked: tracked({ startedAt: ago(7200), checkedAt: NOW }), github });
    expect(v.verdict).toBe("keep");
    expect(v.dueAt).toBe(Date.parse(ago(-3600)));
  });

  it("a re-read GitHub refused: keep, counted as an error", () => {
    const github: GithubWord = { kind: "error", why: "GitHub answered 502" };
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(7200) }), github })).toEqual({
      code: "GithubError",
      verdict: "keep",
      reason: "job 100 in o/r could not be re-read from GitHub: GitHub answered 502",
      error: true,
    });
  });

  it("without a recheck interval a running job within the bound is never asked about", () => {
    const v = at({ tracked: tracked({ startedAt: ago(7200) }) });
    expect(v.askGithub).toBeUndefined();
    expect(v.dueAt).toBe(Date.parse(ago(7200 - 432_000)));
  });
});

describe("the edges of the table", () => {
  const recheck = { ...policy, recheckSeconds: 3600 };

  it("no facts and no object: idle, never gone (nothing to close)", () => {
    expect(at({ cluster: { kind: "missing" } })).toEqual({ code: "Idle", verdict: "keep", reason: "idle: no job recorded for this runner" });
  });

  it("gone with the view's own words when it has them", () => {
    expect(at({ tracked: tracked(), cluster: { kind: "missing", why: "only an idle object of its name" } })).toEqual({
      code: "Gone",
      verdict: "gone",
      reason: "only an idle object of its name",
    });
  });

  it("a completion stamped in the future (clock skew): 0 s ago, waiting the whole grace", () => {
    expect(at({ tracked: tracked({ jobCompleted: { at: ago(-5), conclusion: "success" } }) })).toEqual({
      code: "InGrace",
      verdict: "wait",
      reason: "job 100 in o/r is success, completed 0s ago; grace 300s",
      dueAt: NOW + 305_000,
    });
  });

  it("exactly at the bound: still within it (due then); a second past: ask", () => {
    expect(at({ tracked: tracked({ startedAt: ago(432_000) }) })).toEqual({
      code: "Running",
      verdict: "keep",
      reason: "job 100 in o/r is in_progress for 432000s, within the bound of 432000s",
      dueAt: NOW,
    });
    expect(at({ tracked: tracked({ startedAt: ago(432_001) }) }).askGithub).toBe(true);
  });

  it("exactly at the recheck: asked; a re-read before the first recheck does not move it earlier", () => {
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(3600) }) })).toMatchObject({ askGithub: true, recheck: true });
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(600), checkedAt: NOW - 700_000 }) }).dueAt).toBe(NOW + 3_000_000);
  });

  it("a re-read that says completed without a time is not a completion; without a recheck GitHub's word within the bound is not used", () => {
    const odd: GithubWord = { kind: "job", status: "completed", conclusion: "success", completedAt: null };
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(7200), checkedAt: NOW }), github: odd })).toMatchObject({
      verdict: "keep",
      dueAt: NOW + 3_600_000,
    });
    const done: GithubWord = { kind: "job", status: "completed", conclusion: null, completedAt: ago(900) };
    expect(at({ tracked: tracked({ startedAt: ago(7200) }), github: done }).verdict).toBe("keep");
    expect(at({ policy: recheck, tracked: tracked({ startedAt: ago(7200) }), github: done })).toEqual({
      code: "JobCompleted",
      verdict: "delete",
      reason: "job 100 in o/r is completed, completed 900s ago",
      cause: "job-completed",
    });
  });

  it("past the bound, GitHub says completed without a conclusion or time", () => {
    const noConclusion: GithubWord = { kind: "job", status: "completed", conclusion: null, completedAt: ago(900) };
    expect(at({ tracked: tracked({ startedAt: ago(500_000) }), github: noConclusion })).toMatchObject({
      verdict: "delete",
      reason: "job 100 in o/r is completed, completed 900s ago",
    });
    const noTime: GithubWord = { kind: "job", status: "completed", conclusion: "success", completedAt: null };
    expect(at({ tracked: tracked({ startedAt: ago(500_000) }), github: noTime })).toEqual({
      code: "OverBound",
      verdict: "delete",
      reason: "job 100 has been completed for 500000s, over the bound of 432000s",
      cause: "over-bound",
    });
  });

  it("a job without a start time: kept, an error", () => {
    expect(at({ tracked: tracked({ startedAt: undefined }) })).toEqual({
      code: "NoStartTime",
      verdict: "keep",
      reason: "job 100 has no start time recorded",
      error: true,
    });
  });

  it("a run's completion names a later attempt only when it is later", () => {
    const same = at({ tracked: tracked({ runAttempt: 2, runCompleted: { at: ago(900), conclusion: "success", attempt: 2 } }) });
    expect(same.reason).toBe("run 10 in o/r is success, completed 900s ago");
    const later = at({ tracked: tracked({ runAttempt: 1, runCompleted: { at: ago(900), conclusion: "success", attempt: 2 } }) });
    expect(later.reason).toBe("run 10 (attempt 2) in o/r is success, completed 900s ago");
  });

  it("row 4 at exactly 60 s of skew: still the job's runner; no creation time: the job's runner", () => {
    const started = ago(600);
    const v = at({ tracked: tracked({ startedAt: started, jobCompleted: { at: ago(400), conclusion: "success" } }), cluster: runner({ createdAt: ago(540) }) });
    expect(v.verdict).toBe("delete");
    const none = at({ tracked: tracked({ jobCompleted: { at: ago(400), conclusion: "success" } }), cluster: runner({ createdAt: undefined }) });
    expect(none.verdict).toBe("delete");
  });

  it("a busy runner without facts names its repository, or says it is unknown", () => {
    expect(at({ cluster: runner({ jobRepositoryName: undefined }) }).reason).toBe(
      "runner works on run 10 in an unknown repository and no webhook told us about it: asking GitHub",
    );
  });
});
