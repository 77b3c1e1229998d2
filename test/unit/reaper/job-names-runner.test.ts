// A job GitHub reports speaks for a row only when it names the row's runner (job-names-runner.ts): by runner id
// where both carry one, else by name. Each way in (a job read by id, a run's jobs listed, a busy runner placed
// by name) keeps the row and learns nothing from a job that names another runner.
import { describe, expect, it } from "vitest";
import type { Fact } from "../../../src/model/facts.ts";
import type { RunnerRecord } from "../../../src/model/runner.ts";
import { askAboutJob, askAboutRunner } from "../../../src/reaper/ask-github.ts";
import { JobNamesAnotherRunner, jobNamingRunner } from "../../../src/reaper/job-names-runner.ts";
import { shareRunReads } from "../../../src/reaper/recheck-runs.ts";
import { reconcile, type ReconcileContext } from "../../../src/reaper/reconcile.ts";
import { SlidingWindow } from "../../../src/model/window.ts";
import { busyRunner, policy, REPO } from "../support/fakes.ts";
import { ghJob, stubGithub, type StubAnswers } from "../support/stub-github.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

const row = (over: Partial<RunnerRecord> = {}): RunnerRecord => ({
  id: 1,
  runner: "r-1",
  repo: REPO,
  runId: 7,
  runAttempt: 1,
  jobId: 70,
  startedAt: iso(NOW - 600_000_000),
  installationId: 1,
  state: "running",
  reason: "",
  dueAt: null,
  story: [],
  ...over,
});
const done = { status: "completed", conclusion: "success", completedAt: iso(NOW - 900_000) };

describe("jobNamingRunner", () => {
  it("ids decide where both carry one; else the name; a job on no runner names none", () => {
    const job = (over: object) => ({ id: 70, runnerName: "r-1", ...over });
    expect(jobNamingRunner(job({ runnerId: 11 }), { name: "r-1", runnerId: 11 })).toMatchObject({ id: 70 });
    expect(jobNamingRunner(job({ runnerName: "r-renamed", runnerId: 11 }), { name: "r-1", runnerId: 11 })).toMatchObject({ id: 70 });
    expect(jobNamingRunner(job({ runnerId: 12 }), { name: "r-1" })).toMatchObject({ id: 70 });
    expect(jobNamingRunner(job({}), { name: "r-1", runnerId: 11 })).toMatchObject({ id: 70 });
    expect(() => jobNamingRunner(job({ runnerId: 12 }), { name: "r-1", runnerId: 11 })).toThrow(JobNamesAnotherRunner);
    expect(() => jobNamingRunner(job({ runnerName: "r-2" }), { name: "r-1" })).toThrow(
      "GitHub says job 70 ran on r-2, not on r-1: its word is not about this runner, kept",
    );
    expect(() => jobNamingRunner(job({ runnerName: null }), { name: "r-1" })).toThrow("ran on no runner, not on r-1");
    // A runner id of 0 is none (GitHub sends 0 for a job that never got a runner).
    expect(jobNamingRunner(job({ runnerId: 0 }), { name: "r-1", runnerId: 11 })).toMatchObject({ id: 70 });
  });
});

function world(answers: StubAnswers) {
  const gh = stubGithub(answers);
  const learned: Fact[][] = [];
  const learn = (facts: Fact[]) => {
    learned.push(facts);
    return undefined;
  };
  return { gh, learned, deps: { github: gh.github, policy, now: NOW, learn } };
}

describe("a completion that names another runner is never learned", () => {
  it("a job read by id, completed on another runner's name: thrown, nothing learned", async () => {
    const w = world({ job: { ...done, runnerName: "r-2" } });
    await expect(askAboutJob(row(), { kind: "found", runner: busyRunner(NOW) }, w.deps)).rejects.toThrow(JobNamesAnotherRunner);
    expect(w.learned).toEqual([]);
  });

  it("a job read by id of the row's name but another runner id: thrown, nothing learned", async () => {
    const w = world({ job: { ...done, runnerName: "r-1", runnerId: 12 } });
    await expect(askAboutJob(row({ runnerId: 11 }), { kind: "found", runner: busyRunner(NOW) }, w.deps)).rejects.toThrow(JobNamesAnotherRunner);
    expect(w.learned).toEqual([]);
  });

  it("the same job naming the row's runner is learned (the check can pass)", async () => {
    const w = world({ job: { ...done, runnerName: "r-1", runnerId: 11 } });
    await askAboutJob(row({ runnerId: 11 }), { kind: "found", runner: busyRunner(NOW) }, w.deps);
    expect(w.learned.map((f) => f[0]?.type)).toEqual(["job-completed"]);
  });

  it("a busy runner placed on a job that names another runner: thrown, nothing learned", async () => {
    const w = world({ runnerJob: { id: 71, ...done, runnerName: "r-2" } });
    await expect(askAboutRunner(busyRunner(NOW), { kind: "found", runner: busyRunner(NOW) }, w.deps)).rejects.toThrow(JobNamesAnotherRunner);
    expect(w.learned).toEqual([]);
  });

  it("a busy runner's status.runnerId is ARC's number, not held to GitHub's when placed by name (ids may not match in its cluster)", async () => {
    const w = world({ runnerJob: { id: 71, ...done, runnerId: 12 } });
    await askAboutRunner(busyRunner(NOW, { runnerId: 1_000_001 }), { kind: "found", runner: busyRunner(NOW, { runnerId: 1_000_001 }) }, w.deps);
    expect(w.learned.map((f) => f[0]?.type)).toEqual(["job-completed"]);
  });

  it("a run's jobs listed: a completion on another runner is neither learned nor a recheck of the row", async () => {
    const rows = [row({ id: 70, jobId: 70, runner: "r-70" }), row({ id: 71, jobId: 71, runner: "r-71" })];
    const gh = stubGithub({
      pages: [[ghJob({ id: 70, ...done, runnerName: "r-70" }), ghJob({ id: 71, ...done, runnerName: "r-other" })]],
    });
    const learned: Fact[][] = [];
    const rechecked: number[] = [];
    const ledger = {
      learn: (facts: Fact[]) => {
        learned.push(facts);
        return undefined;
      },
      openOfRun: () => rows,
      rechecked: (records: readonly RunnerRecord[]) => rechecked.push(...records.map((r) => r.jobId)),
    };
    const items = rows.map((record) => ({ name: record.runner, record, view: { kind: "missing" as const } }));
    const reads = shareRunReads(items, gh.github, ledger);
    // The pass reads one job of the run (grouped: the run's listing answers it), then applies the listing.
    await expect((reads.github as typeof gh.github).job(REPO, 70, 1)).resolves.toMatchObject({ id: 70 });
    await reads.apply([], NOW);
    expect(learned.map((f) => (f[0]?.type === "job-completed" ? f[0].jobId : undefined))).toEqual([70]);
    expect(rechecked).toEqual([]);
  });

  it("reconcile keeps the row: JobNamesAnotherRunner, a GitHub error, backed off, no delete", async () => {
    const gh = stubGithub({ job: { ...done, runnerName: "r-2", runnerId: 12 } });
    const deleted: string[] = [];
    const ctx: ReconcileContext = {
      now: NOW,
      clock: () => NOW,
      policy,
      dryRun: false,
      paused: false,
      github: gh.github,
      githubFreeAt: () => NOW,
      deletions: new SlidingWindow([], 10, NOW),
      deleteRunner: async (r) => {
        deleted.push(r.uid);
        return { kind: "deleted" };
      },
      deleteErrorKind: () => "cluster",
      learn: () => undefined,
      reapedUids: new Set(),
    };
    // Past the bound: GitHub's word would condemn the runner, were it about this runner.
    const result = await reconcile({ name: "r-1", record: row({ runnerId: 11 }), view: { kind: "found", runner: busyRunner(NOW, { runnerId: 11 }) } }, ctx);
    expect(result.verdict).toMatchObject({ code: "JobNamesAnotherRunner", verdict: "keep", error: true });
    expect(result.verdict.reason).toContain("r-2 (runner id 12), not on r-1 (runner id 11)");
    expect(result.errorKind).toBe("github");
    expect(result.failures).toBe(1);
    expect(deleted).toEqual([]);
  });
});
