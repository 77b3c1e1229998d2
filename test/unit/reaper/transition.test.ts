// What one reconcile result does to the rows (src/reaper/transition.ts), on plain Node: every
// branch the ledger used to choose in storeRecord/storeUnseen, with the shapes the fakes use.
import { describe, expect, it } from "vitest";
import { lookAt, NEVER, WITH_SWEEP } from "../../../src/model/next-look.ts";
import type { RunnerRecord, UnseenRunner } from "../../../src/model/runner.ts";
import { verdictKey, type Verdict } from "../../../src/model/verdict.ts";
import type { Result } from "../../../src/reaper/reconcile.ts";
import { transition, type TransitionContext } from "../../../src/reaper/transition.ts";
import { busyRunner, REPO } from "../support/fakes.ts";

const NOW = Date.parse("2026-12-03T10:00:00Z");
const ctx: TransitionContext = { now: NOW, by: "sweep", historyDays: 3, stuckSeconds: 600 };

const running: Verdict = { code: "Running", verdict: "keep", reason: "job 11 in octo/repo is in_progress for 60s, within the bound of 432000s" };
const completed: Verdict = { code: "JobCompleted", verdict: "delete", reason: "job 11 completed (success); grace over", cause: "job-completed" };

const row = (over: Partial<RunnerRecord> = {}): RunnerRecord => ({
  id: 4,
  runner: "r-1",
  repo: REPO,
  runId: 7,
  runAttempt: 1,
  jobId: 11,
  installationId: 99,
  startedAt: "2026-12-03T09:59:00Z",
  state: "running",
  verdict: "keep",
  reason: running.reason,
  verdictKey: verdictKey(running),
  decidedAt: NOW - 60_000,
  dueAt: NOW + 60_000,
  uid: "u-1",
  namespace: "arc-a",
  cluster: "default",
  story: [{ at: "2026-12-03T09:59:00.000Z", what: "job started", source: "guid-1" }],
  ...over,
});

const AWAITING = "runner works on run 7 in octo/repo and no webhook told us about it, waiting 180s for its webhook";

const unseenRow = (over: Partial<UnseenRunner> = {}): UnseenRunner => ({
  name: "r-1",
  uid: "u-1",
  cluster: "default",
  namespace: "arc-a",
  runId: 7,
  repo: REPO,
  firstSeen: NOW - 60_000,
  dueAt: NOW + 120_000,
  reason: AWAITING,
  verdictKey: "keep/AwaitingWebhook",
  ...over,
});

const result = (over: Partial<Result> = {}): Result => ({
  name: "r-1",
  record: row(),
  view: { kind: "found", runner: busyRunner(NOW) },
  verdict: running,
  next: lookAt(NOW + 60_000),
  failures: 0,
  ...over,
});

describe("transition: a close", () => {
  it("reaped by our own delete: the row closes with its story, prune time and cause, its object is watched, and the deletion is counted", () => {
    const t = transition(result({ verdict: completed, close: "reaped", deleted: true, next: NEVER, failures: 0, heldFor: undefined }), ctx);
    const next = t.row!.next;
    expect(t.row!.changed).toBe(true);
    expect(t.row!.closing).toBe(true);
    expect(next).toMatchObject({
      state: "reaped",
      verdict: "delete",
      reason: completed.reason,
      verdictKey: verdictKey(completed),
      cause: "job-completed",
      decidedAt: NOW,
      dueAt: null,
      pruneAt: NOW + 3 * 86_400_000,
      failures: 0,
    });
    expect(next.heldFor).toBeUndefined();
    expect(next.story.at(-1)).toEqual({ at: "2026-12-03T10:00:00.000Z", what: `reaped: ${completed.reason}`, source: "sweep", code: "JobCompleted" });
    expect(next.story).toHaveLength(2);
    expect(t.watch).toEqual({
      rowId: 4,
      name: "r-1",
      cluster: "default",
      namespace: "arc-a",
      uid: "u-1",
      repo: REPO,
      jobId: 11,
      installationId: 99,
      deletedAt: NOW,
      dueAt: NOW + 600_000,
      reason: completed.reason,
    });
    expect(t.counters).toEqual([
      { name: "arc_reaper_closed_runners", labels: { state: "reaped" } },
      { name: "arc_reaper_deletions_total", labels: { cause: "job-completed" } },
      { name: "arc_reaper_cluster_deletions_total", labels: { cluster: "default" } },
    ]);
    expect(t.line).toMatchObject({ msg: "decision", by: "sweep", verdict: "deleted", code: "JobCompleted", runner: "r-1", job: 11, run: 7 });
  });

  it("reaped by a delete another row sent (or of an object not seen, or a row never stored): nothing to watch", () => {
    expect(transition(result({ verdict: completed, close: "reaped", deleted: false, next: NEVER }), ctx).watch).toBeUndefined();
    expect(transition(result({ verdict: completed, close: "reaped", deleted: true, next: NEVER, view: { kind: "missing" } }), ctx).watch).toBeUndefined();
    expect(transition(result({ verdict: completed, close: "reaped", deleted: true, next: NEVER, record: row({ id: undefined }) }), ctx).watch).toBeUndefined();
  });

  it("the watch of an object of no named cluster is in the default cluster; a delete of no cause is counted as unknown", () => {
    const t = transition(
      result({
        verdict: { ...completed, cause: undefined },
        close: "reaped",
        deleted: true,
        next: NEVER,
        record: row({ cluster: undefined }),
        view: { kind: "found", runner: busyRunner(NOW, { cluster: undefined }) },
      }),
      ctx,
    );
    expect(t.watch?.cluster).toBe("default");
    expect(t.counters).toContainEqual({ name: "arc_reaper_deletions_total", labels: { cause: "unknown" } });
    expect(t.counters).toContainEqual({ name: "arc_reaper_cluster_deletions_total", labels: { cluster: "unknown" } });
  });

  it("gone: closed with no cause, no watch and no deletion counted; a line only when the decision is new", () => {
    const gone: Verdict = { code: "Gone", verdict: "gone", reason: "runner r-1 is no longer in the cluster", cause: "job-completed" };
    const t = transition(result({ verdict: gone, close: "gone", deleted: true, next: NEVER, view: { kind: "missing" } }), ctx);
    expect(t.row!.next).toMatchObject({ state: "gone", verdict: "gone", cause: undefined, pruneAt: NOW + 3 * 86_400_000, dueAt: null });
    expect(t.row!.next.story.at(-1)?.what).toBe(`gone: ${gone.reason}`);
    expect(t.watch).toBeUndefined();
    expect(t.counters).toEqual([{ name: "arc_reaper_closed_runners", labels: { state: "gone" } }]);
    expect(t.line).toMatchObject({ verdict: "gone", code: "Gone" });
    const again = transition(result({ record: row({ verdictKey: verdictKey(gone) }), verdict: gone, close: "gone", next: NEVER }), ctx);
    expect(again.row!.changed).toBe(true);
    expect(again.line).toBeUndefined();
  });

  it("a close is written and reaped is a line even when nothing but the state moves", () => {
    const gone: Verdict = { code: "Gone", verdict: "gone", reason: "runner r-1 is no longer in the cluster" };
    const still = row({ verdictKey: verdictKey(gone), dueAt: null, failures: 0 });
    expect(transition(result({ record: still, verdict: gone, close: "gone", next: NEVER }), ctx).row).toMatchObject({ changed: true, closing: true });
    const reaped = transition(result({ record: row({ verdictKey: verdictKey(completed) }), verdict: completed, close: "reaped", next: NEVER }), ctx);
    expect(reaped.line?.verdict).toBe("deleted");
  });

  it("gone is never watched, though the object is seen and a delete was sent", () => {
    const gone: Verdict = { code: "Gone", verdict: "gone", reason: "runner r-1 was already gone from arc-a (404)" };
    expect(transition(result({ verdict: gone, close: "gone", deleted: true, next: NEVER }), ctx).watch).toBeUndefined();
  });

  it("a close ends the unseen row the result also names", () => {
    const t = transition(result({ verdict: completed, close: "reaped", next: NEVER, unseen: unseenRow() }), ctx);
    expect(t.endUnseen).toEqual({ name: "r-1", uid: "u-1" });
    expect(t.putUnseen).toBeUndefined();
  });
});

describe("transition: an open row", () => {
  it("the same decision again: no story entry, no new decidedAt, no line, and an unchanged row is not written", () => {
    const t = transition(result(), ctx);
    expect(t.row).toEqual({ next: { ...row(), failures: 0 }, changed: false, closing: false, newDecision: false });
    expect(t.line).toBeUndefined();
    expect(t.counters).toEqual([]);
    expect(t).not.toHaveProperty("watch");
    expect(t).not.toHaveProperty("putUnseen");
    expect(t.endUnseen).toBeUndefined();
  });

  it("the same decision with only its ages changed is the same key", () => {
    const older: Verdict = { ...running, reason: running.reason.replace("60s", "3000s") };
    const t = transition(result({ verdict: older }), ctx);
    expect(t.row!.next.story).toHaveLength(1);
    expect(t.row!.next.reason).toBe(older.reason);
    expect(t.row!.changed).toBe(false);
  });

  it("a new decision: a story entry and decidedAt, the row written, a line", () => {
    const grace: Verdict = { code: "InGrace", verdict: "wait", reason: "job 11 completed (success); grace 300s" };
    const t = transition(result({ verdict: grace, next: lookAt(NOW + 300_000) }), ctx);
    expect(t.row!.next).toMatchObject({
      state: "running",
      verdict: "wait",
      reason: grace.reason,
      verdictKey: verdictKey(grace),
      decidedAt: NOW,
      dueAt: NOW + 300_000,
    });
    expect(t.row!.next.story.at(-1)).toEqual({ at: "2026-12-03T10:00:00.000Z", what: `wait: ${grace.reason}`, source: "sweep", code: "InGrace" });
    expect(t.row!.changed).toBe(true);
    expect(t.row!.closing).toBe(false);
    expect(t.line).toMatchObject({ verdict: "wait", code: "InGrace", reason: grace.reason, by: "sweep" });
  });

  it("a back-off repeats the row's last decision: its key stands, no story entry, no line", () => {
    const err: Verdict = { code: "GithubError", verdict: "keep", reason: "GitHub could not be read, kept: 502", error: true };
    const backingOff: Verdict = { code: "BackingOff", verdict: "keep", reason: err.reason };
    const t = transition(result({ record: row({ verdictKey: verdictKey(err), reason: err.reason, failures: 1 }), verdict: backingOff, failures: 1 }), ctx);
    expect(t.row).toMatchObject({ changed: false, newDecision: false, next: { verdictKey: "keep/GithubError" } });
    expect(t.row!.next.story).toHaveLength(1);
    expect(t.line).toBeUndefined();
    // A row never judged that backs off (no key to stand) takes the back-off's own.
    expect(transition(result({ record: row({ verdictKey: undefined }), verdict: backingOff }), ctx).row).toMatchObject({
      newDecision: true,
      next: { verdictKey: "keep/BackingOff" },
    });
  });

  it("a key stored before keys were codes: the same kind is rewritten as the same decision, another kind is a new one", () => {
    const legacy = row({ verdictKey: "keep: job 11 in octo/repo is in_progress for Ns, within the bound of Ns" });
    const same = transition(result({ record: legacy }), ctx);
    expect(same.row).toMatchObject({ changed: true, newDecision: false, next: { verdictKey: "keep/Running", decidedAt: NOW - 60_000 } });
    expect(same.row!.next.story).toHaveLength(1);
    expect(same.line).toBeUndefined();
    const grace: Verdict = { code: "InGrace", verdict: "wait", reason: "job 11 completed (success); grace 300s" };
    const other = transition(result({ record: legacy, verdict: grace }), ctx);
    expect(other.row).toMatchObject({ changed: true, newDecision: true, next: { verdictKey: "wait/InGrace", decidedAt: NOW } });
    expect(other.row!.next.story).toHaveLength(2);
    expect(other.line?.code).toBe("InGrace");
  });

  it("a row never judged is a new decision", () => {
    const t = transition(result({ record: row({ verdictKey: undefined }) }), ctx);
    expect(t.row!.next.decidedAt).toBe(NOW);
    expect(t.row!.changed).toBe(true);
    expect(t.line).toBeDefined();
  });

  it("asked: checkedAt is now, and the row is written", () => {
    const t = transition(result({ asked: true }), ctx);
    expect(t.row!.next.checkedAt).toBe(NOW);
    expect(t.row!.changed).toBe(true);
    expect(t.line).toBeUndefined();
    expect(transition(result({ record: row({ checkedAt: 5 }) }), ctx).row!.next.checkedAt).toBe(5);
  });

  it("identity: filled from the object seen doing the job, never over the row's own", () => {
    const bare = row({ uid: undefined, namespace: undefined, cluster: undefined });
    const t = transition(result({ record: bare, identity: { uid: "u-9", namespace: "arc-b", cluster: "east" } }), ctx);
    expect(t.row!.next).toMatchObject({ uid: "u-9", namespace: "arc-b", cluster: "east" });
    expect(t.row!.changed).toBe(true);
    const kept = transition(result({ identity: { uid: "u-9", namespace: "arc-b", cluster: "east" } }), ctx);
    expect(kept.row!.next).toMatchObject({ uid: "u-1", namespace: "arc-a", cluster: "default" });
    expect(kept.row!.changed).toBe(false);
    for (const [field, value] of [
      ["uid", "u-9"],
      ["namespace", "arc-b"],
      ["cluster", "east"],
    ] as const) {
      const one = transition(result({ record: row({ [field]: undefined }), identity: { uid: "u-9", namespace: "arc-b", cluster: "east" } }), ctx);
      expect(one.row!.next[field]).toBe(value);
      expect(one.row!.changed).toBe(true);
    }
  });

  it("identity: a row of none and a result of none stay without one", () => {
    const t = transition(result({ record: row({ uid: undefined, namespace: undefined, cluster: undefined }), view: { kind: "missing" } }), ctx);
    expect(t.row!.next).toMatchObject({ uid: undefined, namespace: undefined, cluster: undefined });
    expect(t.row!.changed).toBe(false);
  });

  it("each stored field that moves is a write: the due time, the hold, the failures (absent is none)", () => {
    expect(transition(result({ next: WITH_SWEEP }), ctx).row).toMatchObject({ changed: true, next: { dueAt: null } });
    expect(transition(result({ heldFor: "budget" }), ctx).row).toMatchObject({ changed: true, next: { heldFor: "budget" } });
    expect(transition(result({ failures: 2 }), ctx).row).toMatchObject({ changed: true, next: { failures: 2 } });
    expect(transition(result({ record: row({ failures: 2 }), failures: 0 }), ctx).row!.changed).toBe(true);
    expect(transition(result({ record: row({ failures: undefined }), failures: 0 }), ctx).row!.changed).toBe(false);
    expect(transition(result({ record: row({ state: "finished" }) }), ctx).row).toMatchObject({ changed: false, closing: false, next: { state: "finished" } });
  });

  it("an error: a line every time, counted by kind and cluster; a capped delete counted as held back", () => {
    const err: Verdict = { code: "GithubError", verdict: "keep", reason: "GitHub could not be read, kept: 502", error: true };
    const t = transition(result({ record: row({ verdictKey: verdictKey(err) }), verdict: err, errorKind: "github" }), ctx);
    expect(t.line).toMatchObject({ error: "github", code: "GithubError" });
    expect(t.counters).toEqual([
      { name: "arc_reaper_errors_total", labels: { kind: "github" } },
      { name: "arc_reaper_cluster_errors_total", labels: { cluster: "default", kind: "github" } },
    ]);
    const agent = transition(result({ verdict: { ...err, code: "CannotJudge" }, errorKind: "agent", record: row({ cluster: "east" }) }), ctx);
    expect(agent.counters).toContainEqual({ name: "arc_reaper_cluster_errors_total", labels: { cluster: "east", kind: "agent" } });
    expect(agent.line?.error).toBe("agent");
    expect(transition(result({ verdict: { ...err } }), ctx).line?.error).toBe("github");
    const cap: Verdict = { code: "Cap", verdict: "keep", reason: "deletion cap of 5 in 60s reached, held back: job 11 completed" };
    const capped = transition(result({ verdict: cap, heldFor: "cap" }), ctx);
    expect(capped.counters).toEqual([{ name: "arc_reaper_deletions_held_back_total" }]);
    expect(capped.line?.heldFor).toBe("cap");
  });

  it("a row that now accounts for an unseen runner ends its unseen row", () => {
    expect(transition(result({ unseen: unseenRow() }), ctx).endUnseen).toEqual({ name: "r-1", uid: "u-1" });
  });
});

describe("transition: an unseen row", () => {
  const unseenResult = (unseen: UnseenRunner, over: Partial<Result> = {}): Result =>
    result({
      record: undefined,
      unseen,
      verdict: { code: "AwaitingWebhook", verdict: "keep", reason: AWAITING },
      next: lookAt(NOW + 120_000),
      ...over,
    });

  it("first judged: stored with its verdict's reason, due time, failures and hold, and a line", () => {
    const t = transition(unseenResult(unseenRow({ reason: null, dueAt: null }), { heldFor: "agent", failures: 1 }), ctx);
    expect(t.putUnseen).toEqual({ ...unseenRow(), heldFor: "agent", failures: 1 });
    expect(t.line).toMatchObject({ runner: "r-1", namespace: "arc-a", repository: REPO, run: 7, job: null, verdict: "keep", code: "AwaitingWebhook" });
    expect(t.row).toBeUndefined();
    expect(t.endUnseen).toBeUndefined();
  });

  it("the same again: nothing written, no line; a moved due time or a new count is written without a line", () => {
    expect(transition(unseenResult(unseenRow()), ctx)).toEqual({ counters: [] });
    const later = transition(unseenResult(unseenRow(), { next: lookAt(NOW + 180_000) }), ctx);
    expect(later.putUnseen?.dueAt).toBe(NOW + 180_000);
    expect(later.line).toBeUndefined();
    expect(transition(unseenResult(unseenRow(), { failures: 1 }), ctx).putUnseen?.failures).toBe(1);
    expect(transition(unseenResult(unseenRow({ failures: 1 }), { failures: 0 }), ctx).putUnseen?.failures).toBe(0);
    expect(transition(unseenResult(unseenRow({ failures: undefined }), { failures: 0 }), ctx).putUnseen).toBeUndefined();
    expect(transition(unseenResult(unseenRow(), { heldFor: "budget" }), ctx).putUnseen?.heldFor).toBe("budget");
  });

  it("a new reason: written; a line only when its decision is new, or an error", () => {
    const aged = transition(
      unseenResult(unseenRow(), { verdict: { code: "AwaitingWebhook", verdict: "keep", reason: AWAITING.replace("180s", "120s") } }),
      ctx,
    );
    expect(aged.putUnseen).toBeDefined();
    expect(aged.line).toBeUndefined();
    const notPlaced: Verdict = { code: "NotPlaced", verdict: "keep", reason: "GitHub names no job of run 7 for runner r-1" };
    const t = transition(unseenResult(unseenRow(), { verdict: notPlaced, asked: true }), ctx);
    expect(t.putUnseen?.reason).toBe(notPlaced.reason);
    expect(t.line?.code).toBe("NotPlaced");
    const err: Verdict = { code: "GithubError", verdict: "keep", reason: AWAITING, error: true };
    const e = transition(unseenResult(unseenRow(), { verdict: err, errorKind: "github" }), ctx);
    expect(e.line?.error).toBe("github");
    expect(e.counters).toContainEqual({ name: "arc_reaper_cluster_errors_total", labels: { cluster: "default", kind: "github" } });
  });

  it("its key: a back-off keeps the last one; a row judged before keys were kept takes one as the same decision", () => {
    const backingOff: Verdict = { code: "BackingOff", verdict: "keep", reason: "GitHub names no job of run 7 for runner r-1" };
    const judged = unseenRow({ reason: backingOff.reason, verdictKey: "keep/NotPlaced", failures: 1 });
    expect(transition(unseenResult(judged, { verdict: backingOff, failures: 1 }), ctx)).toEqual({ counters: [] });
    const old = transition(unseenResult(unseenRow({ verdictKey: undefined })), ctx);
    expect(old.putUnseen?.verdictKey).toBe("keep/AwaitingWebhook");
    expect(old.line).toBeUndefined();
    const oldOther = transition(unseenResult(unseenRow({ verdictKey: undefined }), { verdict: { code: "NotPlaced", verdict: "keep", reason: "x" } }), ctx);
    expect(oldOther.putUnseen?.verdictKey).toBe("keep/NotPlaced");
    expect(oldOther.line).toBeUndefined();
    const fresh = transition(unseenResult(unseenRow({ reason: null, verdictKey: undefined }), { verdict: backingOff }), ctx);
    expect(fresh.putUnseen?.verdictKey).toBe("keep/BackingOff");
    expect(fresh.line).toBeDefined();
  });

  it("an error again, nothing else moved: nothing written, but a line every time", () => {
    const err: Verdict = { code: "GithubError", verdict: "keep", reason: "cannot ask GitHub: no key", error: true };
    const t = transition(unseenResult(unseenRow({ reason: err.reason, verdictKey: "keep/GithubError" }), { verdict: err, errorKind: "github" }), ctx);
    expect(t).not.toHaveProperty("putUnseen");
    expect(t.line?.error).toBe("github");
  });

  it("a close ends it: a line when it had been judged, none for one never judged", () => {
    const gone: Verdict = { code: "Gone", verdict: "gone", reason: "runner r-1 left the cluster before any webhook named it" };
    const t = transition(unseenResult(unseenRow(), { verdict: gone, close: "gone", next: NEVER, view: { kind: "missing" } }), ctx);
    expect(t.endUnseen).toEqual({ name: "r-1", uid: "u-1" });
    expect(t.putUnseen).toBeUndefined();
    expect(t.line).toMatchObject({ verdict: "gone", namespace: null, repository: null, run: null });
    expect(transition(unseenResult(unseenRow({ reason: null }), { verdict: gone, close: "gone", next: NEVER }), ctx).line).toBeUndefined();
  });

  it("the per-cluster counters name the unseen row's cluster when nothing else does", () => {
    const err: Verdict = { code: "CannotJudge", verdict: "keep", reason: "cannot judge: arc-a unreadable", error: true };
    const t = transition(unseenResult(unseenRow({ cluster: "west" }), { verdict: err, view: { kind: "unknown", why: "arc-a unreadable" } }), ctx);
    expect(t.counters).toContainEqual({ name: "arc_reaper_cluster_errors_total", labels: { cluster: "west", kind: "github" } });
    const none = transition(unseenResult(unseenRow({ cluster: undefined }), { verdict: err, view: { kind: "unknown", why: "x" } }), ctx);
    expect(none.counters).toContainEqual({ name: "arc_reaper_cluster_errors_total", labels: { cluster: "unknown", kind: "github" } });
  });
});

describe("transition: the decision line", () => {
  it("names the object's cluster unless it is the default, and the row's place before the object's", () => {
    const east = busyRunner(NOW, { cluster: "east", namespace: "arc-e", workflowRunId: 8, jobRepositoryName: "octo/other" });
    const t = transition(result({ record: row({ verdictKey: undefined, namespace: "arc-a" }), view: { kind: "found", runner: east } }), ctx);
    expect(t.line).toMatchObject({ cluster: "east", namespace: "arc-e", repository: REPO, run: 7, job: 11 });
    expect(transition(result({ record: row({ verdictKey: undefined }) }), ctx).line?.cluster).toBeUndefined();
    const noRow = transition(
      result({
        record: undefined,
        unseen: unseenRow({ reason: null }),
        view: { kind: "found", runner: east },
        verdict: { ...running, code: "AwaitingWebhook" },
      }),
      ctx,
    );
    expect(noRow.line).toMatchObject({ namespace: "arc-e", repository: "octo/other", run: 8, job: null });
    const missing = transition(result({ record: row({ verdictKey: undefined }), view: { kind: "missing" } }), ctx);
    expect(missing.line).toMatchObject({ namespace: "arc-a", repository: REPO, run: 7 });
    expect(missing.line?.cluster).toBeUndefined();
    expect(missing.line?.error).toBeUndefined();
    expect(missing.line?.heldFor).toBeUndefined();
  });

  it("the per-cluster counters name the object's cluster when neither the row nor the identity does", () => {
    const err: Verdict = { code: "DeleteFailed", verdict: "keep", reason: "delete failed, retried later: 500", error: true };
    const east = busyRunner(NOW, { cluster: "east" });
    const t = transition(result({ record: row({ cluster: undefined }), verdict: err, errorKind: "cluster", view: { kind: "found", runner: east } }), ctx);
    expect(t.counters).toContainEqual({ name: "arc_reaper_cluster_errors_total", labels: { cluster: "east", kind: "cluster" } });
  });

  it("a line of no hold, no error and the default cluster carries none of those fields", () => {
    const line = transition(result({ record: row({ verdictKey: undefined }) }), ctx).line;
    expect(line).toBeDefined();
    for (const field of ["heldFor", "error", "cluster"]) expect(line).not.toHaveProperty(field);
  });

  it("a result about no row at all writes nothing", () => {
    expect(transition(result({ record: undefined }), ctx)).toEqual({ counters: [] });
  });
});
