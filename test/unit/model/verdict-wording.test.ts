// The words of every verdict code, pinned once. Code and the other tests read a verdict's code
// (src/model/verdict.ts); its reason is for people (the admin page, the decision lines, the
// DELETE's context) and may be reworded: a rewording changes this file and no other. Each case
// builds its verdict through the real code path (the judge, a reconcile step, an ask of GitHub);
// a code in VERDICT_CODES without a case fails here, so no new code goes unpinned.
import { describe, expect, it } from "vitest";
import type { DeleteOutcome } from "../../../src/cluster/ephemeral-runners.ts";
import { GithubBudgetExhausted, GithubRateLimited } from "../../../src/github/call-budget.ts";
import type { Fact } from "../../../src/model/facts.ts";
import type { ClusterRunner, RunnerRecord, TrackedRunner, UnseenRunner } from "../../../src/model/runner.ts";
import { VERDICT_CODES, type GithubWord, type Verdict, type VerdictCode } from "../../../src/model/verdict.ts";
import type { ClusterView, Lookup } from "../../../src/model/view.ts";
import { SlidingWindow } from "../../../src/model/window.ts";
import { identifyTracked, identifyUnseen } from "../../../src/reaper/identify.ts";
import { judge, type JudgeInput } from "../../../src/reaper/judge.ts";
import { unwatchedRows } from "../../../src/reaper/unwatched-rows.ts";
import { reconcile, type ReconcileContext, type ReconcileInput } from "../../../src/reaper/reconcile.ts";
import { busyRunner, policy, REPO } from "../support/fakes.ts";
import { stubGithub, type StubAnswers } from "../support/stub-github.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();

const onCluster = (over: Partial<ClusterRunner> = {}): ClusterView => ({ kind: "found", runner: busyRunner(NOW, over) });
const tracked = (over: Partial<TrackedRunner> = {}): TrackedRunner => ({
  runner: "r-1",
  repo: REPO,
  runId: 7,
  runAttempt: 1,
  jobId: 70,
  startedAt: ago(600),
  installationId: 1,
  ...over,
});
/** A look at the new cluster alone, where the row's cluster `old` is no longer watched (src/reaper/unwatched-rows.ts). */
const unwatchedLookup = (): Lookup => ({
  found: [],
  unreadable: [],
  absentAsOf: () => 0,
  unwatched: unwatchedRows((c) => (c === "new" ? undefined : "direct mode watches new alone (KUBE_CLUSTER_NAME)"), NOW, {
    historyDays: 7,
    maxJobSeconds: 432_000,
  }),
});
const judged = (input: Partial<JudgeInput>): Verdict => judge({ cluster: onCluster(), now: NOW, policy, ...input });

const row = (over: Partial<RunnerRecord> = {}): RunnerRecord => ({ id: 1, ...tracked(), state: "running", reason: "", dueAt: null, story: [], ...over });
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
const completed = { jobCompleted: { at: ago(900), conclusion: "success" } };
const overBound = { startedAt: ago(500_000) };

interface StepWorld {
  context?: Partial<ReconcileContext>;
  github?: StubAnswers;
  /** What the DELETE answers. */
  outcome?: DeleteOutcome;
  /** The ledger records what GitHub said (a row), or cannot (undefined). */
  learn?: (facts: Fact[]) => RunnerRecord | undefined;
}

/** One reconcile step against a hand-built context, as test/unit/reaper/reconcile.test.ts drives it. */
async function stepped(item: Partial<ReconcileInput>, world: StepWorld = {}): Promise<Verdict> {
  const ctx: ReconcileContext = {
    now: NOW,
    clock: () => NOW,
    policy,
    dryRun: false,
    paused: false,
    github: stubGithub(world.github).github,
    githubFreeAt: () => NOW + 42_000,
    deletions: new SlidingWindow([], 10, NOW),
    deleteRunner: async () => world.outcome ?? { kind: "deleted" },
    deleteErrorKind: () => "cluster",
    learn: world.learn ?? (() => undefined),
    reapedUids: new Set(),
    ...world.context,
  };
  return (await reconcile({ name: "r-1", view: onCluster(), ...item }, ctx)).verdict;
}

interface Case {
  name: string;
  verdict: () => Verdict | Promise<Verdict>;
  reason: string;
  /** A verdict that asks GitHub: its reason without the ask. None: the verdict has no subject. */
  subject?: string;
}

/** The words of each code, by the paths that make it. */
const WORDING: Record<VerdictCode, Case[]> = {
  Gone: [
    {
      name: "the facts' runner is no longer in the cluster",
      verdict: () => judged({ tracked: tracked(), cluster: { kind: "missing" } }),
      reason: "runner r-1 is no longer in the cluster",
    },
    {
      name: "an unseen runner left the cluster",
      verdict: () => stepped({ unseen: unseen(), view: { kind: "missing" } }),
      reason: "runner r-1 left the cluster before any webhook named it",
    },
    {
      name: "an unseen runner no longer busy on its run: the judge's words after",
      verdict: () => stepped({ unseen: unseen(), view: onCluster({ workflowRunId: undefined }) }),
      reason: "runner r-1 is no longer busy on run 7: idle: no job recorded for this runner",
    },
    {
      name: "already gone at the DELETE (404)",
      verdict: () => stepped({ record: row(completed) }, { outcome: { kind: "gone" } }),
      reason: "runner r-1 was already gone from arc-a (404)",
    },
  ],
  Unwatched: [
    {
      name: "the facts' runner is in a cluster no longer watched, and nothing was heard of it within the history",
      verdict: () =>
        judged({
          tracked: tracked({ cluster: "old", factAt: NOW - 9 * 86_400_000 }),
          cluster: identifyTracked(tracked({ cluster: "old", factAt: NOW - 9 * 86_400_000 }), unwatchedLookup()),
        }),
      reason:
        "runner r-1: its cluster old is no longer watched (direct mode watches new alone (KUBE_CLUSTER_NAME)) and nothing was heard of it since 2026-11-22T12:00:00.000Z, over the history of 7 days: closed without judging the runner; nothing deleted",
    },
    {
      name: "an unseen runner of a cluster no longer watched",
      verdict: () =>
        stepped({
          unseen: unseen({ cluster: "old", firstSeen: NOW - 9 * 86_400_000 }),
          view: identifyUnseen(unseen({ cluster: "old", firstSeen: NOW - 9 * 86_400_000 }), unwatchedLookup()),
        }),
      reason:
        "runner r-1: its cluster old is no longer watched (direct mode watches new alone (KUBE_CLUSTER_NAME)) and nothing was heard of it since 2026-11-22T12:00:00.000Z, over the history of 7 days: closed without judging the runner; nothing deleted",
    },
  ],
  CannotJudge: [
    {
      name: "a place could not be read",
      verdict: () => judged({ tracked: tracked(completed), cluster: { kind: "unknown", why: "listing ephemeralrunners in arc-a: HTTP 500" } }),
      reason: "cannot judge: listing ephemeralrunners in arc-a: HTTP 500",
    },
    {
      name: "an unseen runner's place could not be read",
      verdict: () => stepped({ unseen: unseen(), view: { kind: "unknown", why: "arc-a: 503" } }),
      reason: "cannot judge: arc-a: 503",
    },
  ],
  Replaced: [
    {
      name: "another uid than the job's runner",
      verdict: () => judged({ tracked: tracked({ ...completed, uid: "u-old" }) }),
      reason: "runner r-1 was replaced: the job's runner had uid u-old, the cluster's has uid u-1",
    },
    {
      name: "created after the job started",
      verdict: () => judged({ tracked: tracked({ ...completed, startedAt: ago(1200) }), cluster: onCluster({ createdAt: ago(1139) }) }),
      reason:
        "runner r-1 was created at 2026-12-01T11:41:01.000Z, after job 70 started at 2026-12-01T11:40:00.000Z: a new runner of the same name, the job's runner is gone",
    },
  ],
  Idle: [
    { name: "no facts, no run", verdict: () => judged({ cluster: onCluster({ workflowRunId: undefined }) }), reason: "idle: no job recorded for this runner" },
  ],
  BeingDeleted: [
    {
      name: "a deletionTimestamp",
      verdict: () => judged({ tracked: tracked(completed), cluster: onCluster({ deletionTimestamp: "2026-12-01T11:59:00Z" }) }),
      reason: "already being deleted since 2026-12-01T11:59:00Z",
    },
  ],
  MovedOn: [
    {
      name: "the object works on another run",
      verdict: () => judged({ tracked: tracked(completed), cluster: onCluster({ workflowRunId: 8 }) }),
      reason: "runner moved on: it works on run 8, the facts are about run 7",
    },
  ],
  UnknownBusy: [
    {
      name: "busy, no webhook named it",
      verdict: () => judged({}),
      reason: "runner works on run 7 in octo/repo and no webhook told us about it: asking GitHub",
      subject: "runner works on run 7 in octo/repo and no webhook told us about it",
    },
  ],
  InGrace: [
    {
      name: "completed within the grace",
      verdict: () => judged({ tracked: tracked({ jobCompleted: { at: ago(120), conclusion: "cancelled" } }) }),
      reason: "job 70 in octo/repo is cancelled, completed 120s ago; grace 300s",
    },
    {
      name: "a completion stamped in the future: never a negative age",
      verdict: () => judged({ tracked: tracked({ jobCompleted: { at: ago(-5), conclusion: "success" } }) }),
      reason: "job 70 in octo/repo is success, completed 0s ago; grace 300s",
    },
  ],
  JobCompleted: [
    { name: "the webhook's completion", verdict: () => judged({ tracked: tracked(completed) }), reason: "job 70 in octo/repo is success, completed 900s ago" },
    {
      name: "GitHub's completion without a conclusion",
      verdict: () => judged({ tracked: tracked(overBound), github: { kind: "job", status: "completed", conclusion: null, completedAt: ago(900) } }),
      reason: "job 70 in octo/repo is completed, completed 900s ago",
    },
  ],
  RunCompleted: [
    {
      name: "the run's completion",
      verdict: () => judged({ tracked: tracked({ runCompleted: { at: ago(400), conclusion: "timed_out", attempt: 1 } }) }),
      reason: "run 7 in octo/repo is timed_out, completed 400s ago",
    },
  ],
  Recheck: [
    {
      name: "running past the recheck interval",
      verdict: () => judged({ tracked: tracked({ startedAt: ago(3601) }) }),
      reason: "job 70 in octo/repo is in_progress for 3601s with no completion heard: asking GitHub",
      subject: "job 70 in octo/repo is in_progress for 3601s with no completion heard",
    },
  ],
  Running: [
    {
      name: "within the bound",
      verdict: () => judged({ tracked: tracked() }),
      reason: "job 70 in octo/repo is in_progress for 600s, within the bound of 432000s",
    },
    {
      name: "its run listed in progress",
      verdict: () => judged({ tracked: tracked({ startedAt: ago(7200), checkedAt: NOW }), github: { kind: "run-running", runId: 7, runAttempt: 1 } }),
      reason: "job 70 in octo/repo started 7200s ago with no completion heard, within the bound of 432000s; its run 7 is among octo/repo's in-progress runs",
    },
  ],
  OverBoundAsk: [
    {
      name: "past the bound, GitHub not asked yet",
      verdict: () => judged({ tracked: tracked({ startedAt: ago(432_001) }) }),
      reason: "job 70 in octo/repo is in_progress for 432001s, over the bound of 432000s: asking GitHub",
      subject: "job 70 in octo/repo is in_progress for 432001s, over the bound of 432000s",
    },
    {
      name: "past the bound, its run listed in progress",
      verdict: () => judged({ tracked: tracked({ startedAt: ago(432_060), checkedAt: NOW }), github: { kind: "run-running", runId: 7, runAttempt: 1 } }),
      reason: "job 70 in octo/repo started 432060s ago with no completion heard, over the bound of 432000s: its run is in progress; asking GitHub for the job",
    },
  ],
  NoStartTime: [
    { name: "facts without a start", verdict: () => judged({ tracked: tracked({ startedAt: undefined }) }), reason: "job 70 has no start time recorded" },
  ],
  GithubError: [
    {
      name: "past the bound, GitHub could not confirm",
      verdict: () => judged({ tracked: tracked(overBound), github: { kind: "error", why: "minting a token: GitHub answered 403" } }),
      reason: "job 70 is past the bound but GitHub could not confirm: minting a token: GitHub answered 403",
    },
    {
      name: "a recheck GitHub refused",
      verdict: () => judged({ tracked: tracked({ startedAt: ago(7200) }), github: { kind: "error", why: "GitHub answered 502" } }),
      reason: "job 70 in octo/repo could not be re-read from GitHub: GitHub answered 502",
    },
    {
      name: "the in-progress runs name another attempt",
      verdict: () => {
        const word: GithubWord = { kind: "run-running", runId: 7, runAttempt: 1 };
        return judged({ tracked: tracked({ runAttempt: 2, startedAt: ago(7200), checkedAt: NOW }), github: word });
      },
      reason: "job 70 in octo/repo started 7200s ago with no completion heard: the in-progress runs name run 7 attempt 1, not its run 7 attempt 2",
    },
    {
      name: "GitHub cannot be asked (no App key)",
      verdict: () => stepped({ record: row(overBound) }, { context: { github: new Error("no private key") } }),
      reason: "cannot ask GitHub: no private key",
    },
    {
      name: "GitHub could not be read",
      verdict: () => stepped({ record: row(overBound) }, { github: { throws: new Error("HTTP 502") } }),
      reason: "GitHub could not be read, kept: HTTP 502",
    },
  ],
  OverBound: [
    {
      name: "GitHub says it still runs past the bound",
      verdict: () => judged({ tracked: tracked(overBound), github: { kind: "job", status: "in_progress", conclusion: null, completedAt: null } }),
      reason: "job 70 has been in_progress for 500000s, over the bound of 432000s",
    },
  ],
  AwaitingWebhook: [
    {
      name: "busy, within the wait for its webhook",
      verdict: () => stepped({ unseen: unseen({ firstSeen: NOW - 60_000 }) }),
      reason: "runner works on run 7 and no webhook told us about it yet: waiting 180s for one before asking GitHub",
    },
  ],
  // Backing off, a row keeps its last words: what the admin page showed is what it still shows.
  BackingOff: [
    {
      name: "a row whose ask failed, before its back-off ends",
      verdict: () => stepped({ record: row({ ...overBound, failures: 2, dueAt: NOW + 90_000, reason: "GitHub could not be read, kept: HTTP 502" }) }),
      reason: "GitHub could not be read, kept: HTTP 502",
    },
    {
      name: "an unseen runner GitHub could not place, before its back-off ends",
      verdict: () => stepped({ unseen: unseen({ dueAt: NOW + 600_000, failures: 1, reason: "GitHub lists no job of run 7 in octo/repo on runner r-1" }) }),
      reason: "GitHub lists no job of run 7 in octo/repo on runner r-1",
    },
  ],
  NotPlaced: [
    {
      name: "GitHub lists no job of its run on it",
      verdict: () => stepped({ unseen: unseen() }, { github: { runnerJob: undefined } }),
      reason: "GitHub lists no job of run 7 in octo/repo on runner r-1",
    },
    {
      name: "its job has not started",
      verdict: () => stepped({ unseen: unseen() }, { github: { runnerJob: { id: 72, status: "queued", startedAt: null } } }),
      reason: "job 72 of run 7 in octo/repo has not started according to GitHub",
    },
    {
      name: "no owner/repo to ask about",
      verdict: () => stepped({ unseen: unseen(), view: onCluster({ jobRepositoryName: "octo/repo/x" }) }),
      reason: 'runner works on run 7 but status.jobRepositoryName "octo/repo/x" is not owner/repo: cannot ask GitHub',
    },
  ],
  NotRecorded: [
    {
      name: "the ledger could not record what GitHub said",
      verdict: () => stepped({ unseen: unseen() }, { github: { runnerJob: { id: 71, status: "in_progress", startedAt: ago(1000) } } }),
      reason: "what GitHub said of runner r-1 could not be recorded",
    },
  ],
  JobNamesAnotherRunner: [
    {
      name: "GitHub's job names another runner's id",
      verdict: () =>
        stepped(
          { record: row({ ...overBound, runnerId: 11 }) },
          { github: { job: { status: "completed", completedAt: ago(900), runnerName: "r-1", runnerId: 12 } } },
        ),
      reason: "GitHub says job 70 ran on r-1 (runner id 12), not on r-1 (runner id 11): its word is not about this runner, kept",
    },
    {
      name: "an unseen runner: the job GitHub placed it on names another runner",
      verdict: () => stepped({ unseen: unseen() }, { github: { runnerJob: { id: 71, status: "in_progress", startedAt: ago(1000), runnerName: "r-2" } } }),
      reason: "GitHub says job 71 ran on r-2, not on r-1: its word is not about this runner, kept",
    },
  ],
  Budget: [
    {
      name: "the budget spent: the judge's subject, without 'asking GitHub'",
      verdict: () => stepped({ record: row(overBound) }, { github: { throws: new GithubBudgetExhausted("the budget of 5 GitHub calls is spent") } }),
      reason: "job 70 in octo/repo is in_progress for 500000s, over the bound of 432000s: not asked now (the budget of 5 GitHub calls is spent)",
    },
    {
      name: "rate limited, an unseen runner",
      verdict: () => stepped({ unseen: unseen() }, { github: { throws: new GithubRateLimited("rate limited") } }),
      reason: "runner works on run 7 in octo/repo and no webhook told us about it: not asked now (rate limited)",
    },
  ],
  DryRun: [
    {
      name: "would delete",
      verdict: () => stepped({ record: row(completed) }, { context: { dryRun: true } }),
      reason: "dry run: would delete: job 70 in octo/repo is success, completed 900s ago",
    },
  ],
  Paused: [
    {
      name: "would delete",
      verdict: () => stepped({ record: row(completed) }, { context: { paused: true } }),
      reason: "paused: would delete: job 70 in octo/repo is success, completed 900s ago",
    },
  ],
  Cap: [
    {
      name: "the cap of the last 60 s reached",
      verdict: () => stepped({ record: row(completed) }, { context: { deletions: new SlidingWindow([NOW - 30_000], 1, NOW) } }),
      reason: "deletion cap of 1 in 60s reached, held back: job 70 in octo/repo is success, completed 900s ago",
    },
  ],
  DeleteFailed: [
    {
      name: "the API server answered 500",
      verdict: () => stepped({ record: row(completed) }, { outcome: { kind: "failed", status: 500, why: "HTTP 500" } }),
      reason: "delete failed, retried later: HTTP 500",
    },
  ],
};

/** The codes of VERDICT_CODES that a table of words has no case for. */
function unpinned(wording: Partial<Record<string, readonly Case[]>>): string[] {
  return VERDICT_CODES.filter((code) => (wording[code]?.length ?? 0) === 0);
}

describe("the words of every verdict code", () => {
  it("every code in VERDICT_CODES has at least one case, and every case a code of it", () => {
    expect(unpinned(WORDING)).toEqual([]);
    expect(Object.keys(WORDING).sort()).toEqual([...VERDICT_CODES].sort());
  });

  it("the check can fail: a code without a case is named", () => {
    expect(unpinned({ ...WORDING, Cap: [] })).toEqual(["Cap"]);
    const { DryRun: _dropped, ...rest } = WORDING;
    expect(unpinned(rest)).toEqual(["DryRun"]);
  });

  for (const code of VERDICT_CODES) {
    describe(code, () => {
      for (const c of WORDING[code] ?? []) {
        it(c.name, async () => {
          const v = await c.verdict();
          expect(v.code).toBe(code);
          expect(v.reason).toBe(c.reason);
          expect(v.subject).toBe(c.subject);
        });
      }
    });
  }
});
