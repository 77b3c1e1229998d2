// One reconcile step on plain Node, against a hand-built context: what it
// deletes (only the very object, once, within the cap, never in dry run or
// paused), what it asks GitHub, how it backs off, and the next look it answers.
import { describe, expect, it } from "vitest";
import type { DeleteContext, DeleteOutcome } from "../../../src/cluster/ephemeral-runners.ts";
import { GithubBudgetExhausted, GithubRateLimited } from "../../../src/github/call-budget.ts";
import type { Fact } from "../../../src/model/facts.ts";
import type { ClusterRunner, RunnerRecord, UnseenRunner } from "../../../src/model/runner.ts";
import type { ClusterView } from "../../../src/model/view.ts";
import { SlidingWindow } from "../../../src/model/window.ts";
import { reconcile, type ReconcileContext, type ReconcileInput } from "../../../src/reaper/reconcile.ts";
import { busyRunner, policy, REPO } from "../support/fakes.ts";
import { stubGithub } from "../support/stub-github.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

const busy = (over: Partial<ClusterRunner> = {}): ClusterRunner => busyRunner(NOW, over);
const found = (over: Partial<ClusterRunner> = {}): ClusterView => ({ kind: "found", runner: busy(over) });

const row = (over: Partial<RunnerRecord> = {}): RunnerRecord => ({
  id: 1,
  runner: "r-1",
  repo: REPO,
  runId: 7,
  runAttempt: 1,
  jobId: 70,
  startedAt: iso(NOW - 3_600_000),
  state: "running",
  reason: "stored reason",
  dueAt: null,
  story: [],
  ...over,
});
const done = (agoS: number) => ({ jobCompleted: { at: iso(NOW - agoS * 1000), conclusion: "success" } });

function context(over: Partial<ReconcileContext> = {}) {
  const deletes: { runner: ClusterRunner; context: DeleteContext }[] = [];
  const learned: Fact[][] = [];
  let outcome: DeleteOutcome = { kind: "deleted" };
  const ctx: ReconcileContext = {
    now: NOW,
    clock: () => NOW + 5,
    policy,
    dryRun: false,
    paused: false,
    github: stubGithub().github,
    githubFreeAt: () => NOW + 42_000,
    deletions: new SlidingWindow([], 10, NOW),
    deleteRunner: async (runner, c) => {
      deletes.push({ runner, context: c });
      return outcome;
    },
    deleteErrorKind: () => "cluster",
    learn: (facts) => {
      learned.push(facts);
      return undefined;
    },
    reapedUids: new Set(),
    ...over,
  };
  return { ctx, deletes, learned, failWith: (o: DeleteOutcome) => (outcome = o) };
}

const step = (item: Partial<ReconcileInput>, ctx: ReconcileContext) => reconcile({ name: "r-1", view: found(), ...item }, ctx);

describe("reconcile: a tracked row and its object", () => {
  it("gone from the cluster: closed gone, never looked at again, nothing deleted", async () => {
    const { ctx, deletes } = context();
    const r = await step({ record: row(done(900)), view: { kind: "missing" } }, ctx);
    expect(r).toMatchObject({
      close: "gone",
      next: { never: true },
      failures: 0,
      verdict: { code: "Gone", verdict: "gone" },
    });
    expect(deletes).toEqual([]);
  });

  it("a view older than the facts: kept (an error of the view's kind), looked at again in 30 s, not a failed ask", async () => {
    const { ctx } = context();
    const r = await step({ record: row(done(900)), view: { kind: "unknown", why: "the view is older", stale: true }, viewErrorKind: "agent" }, ctx);
    expect(r).toMatchObject({
      verdict: { code: "CannotJudge", verdict: "keep", error: true },
      errorKind: "agent",
      next: { at: NOW + 30_000 },
      failures: 0,
    });
    expect(r.close).toBeUndefined();
  });

  it("a place that could not be read: a failed ask, backed off 1 minute, then 2 (counted once per due look)", async () => {
    const { ctx, deletes } = context();
    const view: ClusterView = { kind: "unknown", why: "arc-a: 503" };
    const first = await step({ record: row(done(900)), view }, ctx);
    expect(first).toMatchObject({
      verdict: { code: "CannotJudge", verdict: "keep", error: true },
      errorKind: "cluster",
      failures: 1,
      next: { at: NOW + 60_000 },
    });
    expect(first.heldFor).toBeUndefined();
    // Seen again before its back-off ends (a sweep): the count and the time stand.
    const early = await step({ record: row({ ...done(900), failures: 1, dueAt: NOW + 60_000 }), view }, ctx);
    expect(early).toMatchObject({ failures: 1, next: { at: NOW + 60_000 } });
    // Due again: the count grows and the back-off doubles.
    const again = await step({ record: row({ ...done(900), failures: 1, dueAt: NOW }), view }, ctx);
    expect(again).toMatchObject({ failures: 2, next: { at: NOW + 120_000 } });
    expect(deletes).toEqual([]);
  });

  it("an agent away: held for the agent, with the sweep (its return lifts the hold)", async () => {
    const { ctx } = context();
    const r = await step({ record: row(done(900)), view: { kind: "unknown", why: "agent away", agent: true }, viewErrorKind: "agent" }, ctx);
    expect(r).toMatchObject({ heldFor: "agent", errorKind: "agent", failures: 1, next: { withSweep: true } });
  });

  it("completed within the grace: waits until the grace ends", async () => {
    const { ctx, deletes } = context();
    const r = await step({ record: row(done(100)) }, ctx);
    expect(r).toMatchObject({ verdict: { code: "InGrace", verdict: "wait" }, next: { at: NOW + 200_000 }, failures: 0 });
    expect(deletes).toEqual([]);
  });

  it("completed past the grace: deletes exactly the object seen on the job (its uid), once, stamped at the real clock", async () => {
    const { ctx, deletes } = context();
    const r = await step({ record: row(done(900)) }, ctx);
    // The DELETE carries the judge's reason, whatever its words.
    expect(r.verdict).toMatchObject({ code: "JobCompleted", verdict: "delete" });
    expect(deletes).toEqual([{ runner: busy(), context: { runId: 7, reason: r.verdict.reason } }]);
    expect(r).toMatchObject({
      close: "reaped",
      deleted: true,
      next: { never: true },
      failures: 0,
      identity: { uid: "u-1", namespace: "arc-a", cluster: "default" },
    });
    expect([...ctx.reapedUids]).toEqual(["u-1"]);
    expect(ctx.deletions.toJSON()).toEqual([NOW + 5]);
  });

  it("a second row naming an object this pass deleted: closed reaped without a second DELETE", async () => {
    const { ctx, deletes } = context();
    ctx.reapedUids.add("u-1");
    const r = await step({ record: row(done(900)) }, ctx);
    expect(r).toMatchObject({ close: "reaped", next: { never: true } });
    expect(r.deleted).toBeUndefined();
    expect(deletes).toEqual([]);
    expect(ctx.deletions.toJSON()).toEqual([]);
  });

  it("dry run: kept, nothing deleted, no window used", async () => {
    const { ctx, deletes } = context({ dryRun: true });
    const r = await step({ record: row(done(900)) }, ctx);
    expect(r).toMatchObject({
      verdict: { code: "DryRun", verdict: "keep" },
      next: { withSweep: true },
    });
    expect(r.heldFor).toBeUndefined();
    expect(r.close).toBeUndefined();
    expect(deletes).toEqual([]);
    expect(ctx.deletions.toJSON()).toEqual([]);
  });

  it("paused: held for the pause, nothing deleted", async () => {
    const { ctx, deletes } = context({ paused: true });
    const r = await step({ record: row(done(900)) }, ctx);
    expect(r).toMatchObject({
      verdict: { code: "Paused", verdict: "keep" },
      heldFor: "paused",
      next: { withSweep: true },
    });
    expect(deletes).toEqual([]);
  });

  it("the cap reached: held for the cap until the window frees (at least a second on)", async () => {
    const full = context({ deletions: new SlidingWindow([NOW - 30_000], 1, NOW) });
    const r = await step({ record: row(done(900)) }, full.ctx);
    expect(r).toMatchObject({
      verdict: { code: "Cap", verdict: "keep" },
      heldFor: "cap",
      next: { at: NOW + 30_000 },
    });
    expect(full.deletes).toEqual([]);
    // A window that frees at the pass's own time still waits a second.
    const edge = context({ deletions: new SlidingWindow([NOW - 59_999], 1, NOW), clock: () => NOW });
    expect((await step({ record: row(done(900)) }, edge.ctx)).next).toEqual({ at: NOW + 1000 });
  });

  it("the window counts the clock at the delete: a stamp 60 s before it no longer counts", async () => {
    const { ctx, deletes } = context({ deletions: new SlidingWindow([NOW - 59_000], 1, NOW), clock: () => NOW + 1000 });
    const r = await step({ record: row(done(900)) }, ctx);
    expect(r.close).toBe("reaped");
    expect(deletes).toHaveLength(1);
  });

  it("the object already gone at the delete (404 or another uid): closed gone", async () => {
    const { ctx, failWith } = context();
    failWith({ kind: "gone" });
    const r = await step({ record: row(done(900)) }, ctx);
    expect(r).toMatchObject({ close: "gone", verdict: { code: "Gone", verdict: "gone" }, next: { never: true } });
    expect(r.deleted).toBeUndefined();
    expect(ctx.reapedUids.size).toBe(0);
  });

  it("a delete that failed: kept as an error of the cluster's kind, retried after the back-off", async () => {
    const { ctx, failWith } = context();
    failWith({ kind: "failed", status: 500, why: "HTTP 500" });
    const r = await step({ record: row(done(900)) }, ctx);
    expect(r).toMatchObject({
      verdict: { code: "DeleteFailed", verdict: "keep", error: true },
      errorKind: "cluster",
      failures: 1,
      next: { at: NOW + 60_000 },
    });
    expect(r.heldFor).toBeUndefined();
    expect(r.close).toBeUndefined();
  });

  it("a delete that failed is not sent again before its back-off ends; at its end it is", async () => {
    const failedRow = row({
      ...done(900),
      failures: 1,
      dueAt: NOW + 30_000,
      verdictKey: "keep/DeleteFailed",
      reason: "delete failed, retried later: HTTP 500",
    });
    const early = context();
    const kept = await step({ record: failedRow }, early.ctx);
    expect(kept).toMatchObject({
      verdict: { code: "BackingOff", verdict: "keep", reason: "delete failed, retried later: HTTP 500" },
      failures: 1,
      next: { at: NOW + 30_000 },
    });
    expect(early.deletes).toHaveLength(0);
    expect(early.ctx.deletions.left(NOW)).toBe(10);

    const due = context();
    const r = await step({ record: { ...failedRow, dueAt: NOW } }, due.ctx);
    expect(r).toMatchObject({ close: "reaped", deleted: true });
    expect(due.deletes).toHaveLength(1);
  });

  it("a delete the agent could not carry out: held for the agent", async () => {
    const { ctx, failWith } = context({ deleteErrorKind: () => "agent" });
    failWith({ kind: "failed", status: null, why: "agent away" });
    const r = await step({ record: row(done(900)) }, ctx);
    expect(r).toMatchObject({ verdict: { code: "DeleteFailed" }, errorKind: "agent", heldFor: "agent", failures: 1, next: { withSweep: true } });
  });

  it("an idle object of the row's name is never deleted: the facts close gone, the object stays", async () => {
    const { ctx, deletes } = context();
    const r = await step({ record: row({ ...done(900), uid: "u-old" }), view: found({ uid: "u-new", workflowRunId: undefined }) }, ctx);
    expect(r.close).toBe("gone");
    expect(r.verdict.code).toBe("Replaced");
    expect(r.identity).toBeUndefined();
    expect(deletes).toEqual([]);
  });

  it("identity: the row's own uid and place win over the object's", async () => {
    const { ctx } = context();
    const r = await step({ record: row({ ...done(100), uid: "u-1", namespace: "ns-row", cluster: "c-row" }) }, ctx);
    expect(r.identity).toEqual({ uid: "u-1", namespace: "ns-row", cluster: "c-row" });
    const other = await step({ record: row(done(100)), view: found({ workflowRunId: 8 }) }, ctx);
    expect(other.identity).toBeUndefined();
  });
});

describe("reconcile: asking GitHub", () => {
  const overBound = () => row({ startedAt: iso(NOW - 500_000_000) });

  it("past the bound, GitHub says in_progress: deletes that object, the ask recorded", async () => {
    const gh = stubGithub({ job: { status: "in_progress", conclusion: null, completedAt: null } });
    const { ctx, deletes } = context({ github: gh.github });
    const r = await step({ record: overBound() }, ctx);
    expect(gh.calls).toEqual(["installationFor octo/repo", "job 70"]);
    expect(r).toMatchObject({ asked: true, close: "reaped", deleted: true, verdict: { code: "OverBound", verdict: "delete", cause: "over-bound" } });
    expect(deletes.map((d) => d.runner.uid)).toEqual(["u-1"]);
  });

  it("past the bound, GitHub says completed: its completion is learned and judged (grace)", async () => {
    const gh = stubGithub({ job: { status: "completed", conclusion: "failure", completedAt: iso(NOW - 60_000) } });
    const { ctx, deletes, learned } = context({ github: gh.github });
    const r = await step({ record: overBound() }, ctx);
    expect(learned).toHaveLength(1);
    expect(r).toMatchObject({ asked: true, verdict: { code: "InGrace", verdict: "wait" }, next: { at: NOW + 240_000 } });
    expect(deletes).toEqual([]);
  });

  it("GitHub cannot be built (no App key): kept, a github error, backed off", async () => {
    const { ctx } = context({ github: new Error("no private key") });
    const r = await step({ record: overBound() }, ctx);
    expect(r).toMatchObject({
      verdict: { code: "GithubError", verdict: "keep", error: true },
      errorKind: "github",
      failures: 1,
      next: { at: NOW + 60_000 },
    });
    expect(r.asked).toBeUndefined();
  });

  it("the budget spent: held for the budget until GitHub may be asked, not an error", async () => {
    const gh = stubGithub({ throws: new GithubBudgetExhausted("the budget of 5 GitHub calls is spent") });
    const { ctx } = context({ github: gh.github });
    const r = await step({ record: overBound() }, ctx);
    expect(r).toMatchObject({
      verdict: { code: "Budget", verdict: "keep" },
      heldFor: "budget",
      failures: 0,
      next: { at: NOW + 42_000 },
    });
    expect(r.verdict.error).toBeUndefined();
  });

  it("the budget spent with the window already free: a second on", async () => {
    const gh = stubGithub({ throws: new GithubBudgetExhausted("spent") });
    const { ctx } = context({ github: gh.github, githubFreeAt: () => NOW - 5 });
    expect((await step({ record: overBound() }, ctx)).next).toEqual({ at: NOW + 1000 });
  });

  it("rate limited: held for the budget a window on", async () => {
    const gh = stubGithub({ throws: new GithubRateLimited("rate limited") });
    const { ctx } = context({ github: gh.github });
    const r = await step({ record: overBound() }, ctx);
    expect(r).toMatchObject({ heldFor: "budget", next: { at: NOW + 60_000 }, verdict: { code: "Budget", verdict: "keep" } });
  });

  it("GitHub errs: kept as a github error, backed off", async () => {
    const gh = stubGithub({ throws: new Error("HTTP 502") });
    const { ctx, deletes } = context({ github: gh.github });
    const r = await step({ record: overBound() }, ctx);
    expect(r).toMatchObject({
      verdict: { code: "GithubError", verdict: "keep", error: true },
      errorKind: "github",
      failures: 1,
      next: { at: NOW + 60_000 },
    });
    expect(r.asked).toBeUndefined();
    expect(deletes).toEqual([]);
  });

  it("a recheck that errs counts as done: next recheck an interval on, the ask recorded", async () => {
    const gh = stubGithub({ throws: new Error("HTTP 404") });
    const { ctx } = context({ github: gh.github });
    // Started 2 h ago, recheck every hour, never checked: due.
    const r = await step({ record: row({ startedAt: iso(NOW - 7_200_000) }) }, ctx);
    expect(r).toMatchObject({ asked: true, errorKind: "github", failures: 1, verdict: { code: "GithubError", verdict: "keep", error: true } });
    expect(r.next).toEqual({ at: NOW + 3_600_000 });
  });

  it("a row backing off after a failed ask is not asked again before its time: its reason and count stand", async () => {
    const gh = stubGithub({ job: { status: "in_progress", conclusion: null, completedAt: null } });
    const { ctx, deletes } = context({ github: gh.github });
    const stored = "GitHub could not be read, kept: HTTP 502";
    const r = await step({ record: { ...overBound(), failures: 2, dueAt: NOW + 90_000, reason: stored } }, ctx);
    expect(gh.calls).toEqual([]);
    // The row's own words stand: what the admin page showed of the failed ask is what it still shows.
    expect(r).toMatchObject({ verdict: { code: "BackingOff", verdict: "keep", reason: stored }, failures: 2, next: { at: NOW + 90_000 } });
    expect(deletes).toEqual([]);
    // Its time come: asked.
    await step({ record: { ...overBound(), failures: 2, dueAt: NOW } }, ctx);
    expect(gh.calls).toEqual(["installationFor octo/repo", "job 70"]);
  });
});

describe("reconcile: the back-off holds asks only", () => {
  it("a completed job whose earlier ask failed is deleted at once, its back-off notwithstanding", async () => {
    const { ctx, deletes } = context();
    const r = await step({ record: row({ ...done(900), failures: 2, dueAt: NOW + 60_000 }) }, ctx);
    expect(r).toMatchObject({ close: "reaped", deleted: true, failures: 0, verdict: { code: "JobCompleted" } });
    expect(deletes.map((d) => d.runner.uid)).toEqual(["u-1"]);
  });

  it("a row with no failed ask, due later, is asked when the judge asks", async () => {
    const gh = stubGithub({ job: { status: "in_progress" } });
    const { ctx } = context({ github: gh.github });
    await step({ record: row({ startedAt: iso(NOW - 500_000_000), failures: 0, dueAt: NOW + 90_000 }) }, ctx);
    expect(gh.calls).toEqual(["installationFor octo/repo", "job 70"]);
  });
});

describe("reconcile: a busy runner no webhook told us about", () => {
  const unseen = (over: Partial<UnseenRunner> = {}): UnseenRunner => ({
    name: "r-1",
    uid: "u-1",
    cluster: "default",
    namespace: "arc-a",
    runId: 7,
    repo: REPO,
    firstSeen: NOW - 600_000,
    dueAt: null,
    reason: null,
    ...over,
  });

  it("left the cluster: ended", async () => {
    const { ctx } = context();
    const r = await step({ unseen: unseen(), view: { kind: "missing" } }, ctx);
    expect(r).toMatchObject({
      close: "gone",
      next: { never: true },
      verdict: { code: "Gone", verdict: "gone" },
    });
  });

  it("unreadable: a failed ask; stale: looked at in 30 s", async () => {
    const { ctx } = context();
    const failed = await step({ unseen: unseen(), view: { kind: "unknown", why: "503" } }, ctx);
    expect(failed).toMatchObject({
      verdict: { code: "CannotJudge", verdict: "keep", error: true },
      errorKind: "cluster",
      failures: 1,
      next: { at: NOW + 60_000 },
    });
    const stale = await step({ unseen: unseen(), view: { kind: "unknown", why: "old", stale: true } }, ctx);
    expect(stale).toMatchObject({ verdict: { code: "CannotJudge" }, failures: 0, next: { at: NOW + 30_000 } });
  });

  it("no longer busy on its run (idle, or another run): ended, never deleted", async () => {
    const { ctx, deletes } = context();
    const idle = await step({ unseen: unseen(), view: found({ workflowRunId: undefined }) }, ctx);
    expect(idle).toMatchObject({ close: "gone", verdict: { code: "Gone", verdict: "gone" } });
    const moved = await step({ unseen: unseen(), view: found({ workflowRunId: 8 }) }, ctx);
    expect(moved).toMatchObject({ close: "gone", verdict: { code: "Gone", verdict: "gone" } });
    expect(deletes).toEqual([]);
  });

  it("within the wait for its webhook: kept until 3 minutes after first seen, GitHub not asked", async () => {
    const gh = stubGithub();
    const { ctx } = context({ github: gh.github });
    const r = await step({ unseen: unseen({ firstSeen: NOW - 60_000 }) }, ctx);
    expect(r).toMatchObject({
      verdict: { code: "AwaitingWebhook", verdict: "keep" },
      next: { at: NOW + 120_000 },
    });
    expect(gh.calls).toEqual([]);
  });

  it("GitHub could not place it: kept, asked again after 10 minutes", async () => {
    const gh = stubGithub({ run: { status: "in_progress" }, runnerJob: undefined });
    const { ctx, deletes } = context({ github: gh.github });
    const r = await step({ unseen: unseen() }, ctx);
    expect(gh.calls).toEqual(["installationFor octo/repo", "run 7", `runnerJob 7 r-1 >=${NOW - 600_060_000}`]);
    expect(r).toMatchObject({
      asked: true,
      failures: 1,
      next: { at: NOW + 600_000 },
      verdict: { code: "NotPlaced", verdict: "keep" },
    });
    expect(deletes).toEqual([]);
    // Seen by the next sweep before then: not asked; its reason stands (what the admin page shows of it).
    const later = await step({ unseen: unseen({ dueAt: NOW + 600_000, failures: 1, reason: r.verdict.reason }) }, ctx);
    expect(later).toMatchObject({ failures: 1, next: { at: NOW + 600_000 }, verdict: { code: "BackingOff", verdict: "keep", reason: r.verdict.reason } });
    expect(gh.calls).toHaveLength(3);
  });

  it("an unseen row is asked when its time has come, when it has no time, or when it has no reason yet", async () => {
    for (const over of [
      { dueAt: NOW, reason: "GitHub lists no job", failures: 1 },
      { dueAt: null, reason: "GitHub lists no job" },
      { dueAt: NOW + 5000, reason: null },
    ]) {
      const gh = stubGithub({ run: { status: "in_progress" }, runnerJob: undefined });
      const { ctx } = context({ github: gh.github });
      await step({ unseen: unseen(over) }, ctx);
      expect(gh.calls).toHaveLength(3);
    }
  });

  it("a row due later with a reason but no failure: kept until then without a back-off count", async () => {
    const gh = stubGithub();
    const { ctx } = context({ github: gh.github });
    const r = await step({ unseen: unseen({ dueAt: NOW + 5000, reason: "wait" }) }, ctx);
    expect(r).toMatchObject({ failures: 0, next: { at: NOW + 5000 }, verdict: { code: "BackingOff", verdict: "keep", reason: "wait" } });
    expect(gh.calls).toEqual([]);
  });
});
