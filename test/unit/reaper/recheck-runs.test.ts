// Rechecks grouped per run (recheck-runs.ts) on plain Node: one listing of a
// run's jobs answers for all its tracked jobs, a run read is made once, and the
// run's other open rows learn what the listing said.
import { describe, expect, it } from "vitest";
import type { Github } from "../../../src/github/github-client.ts";
import type { Fact } from "../../../src/model/facts.ts";
import type { RunnerRecord } from "../../../src/model/runner.ts";
import type { ReconcileInput, Result } from "../../../src/reaper/reconcile.ts";
import { shareRunReads } from "../../../src/reaper/recheck-runs.ts";
import { REPO } from "../support/fakes.ts";
import type { GithubJob } from "../../../src/github/github-client.ts";
import { ghJob as anyJob, stubGithub, type StubAnswers } from "../support/stub-github.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

const rec = (jobId: number, over: Partial<RunnerRecord> = {}): RunnerRecord => ({
  id: jobId,
  runner: `r-${jobId}`,
  repo: REPO,
  runId: 7,
  runAttempt: 1,
  jobId,
  startedAt: iso(NOW - 7_200_000),
  state: "running",
  reason: "",
  dueAt: null,
  story: [],
  ...over,
});
const item = (record: RunnerRecord): ReconcileInput => ({ name: record.runner, record, view: { kind: "missing" } });

function ledger(open: RunnerRecord[] = []) {
  const learned: Fact[][] = [];
  const rechecked: { ids: (number | undefined)[]; now: number }[] = [];
  const asked: string[] = [];
  return {
    learned,
    rechecked,
    asked,
    port: {
      learn: (facts: Fact[]) => {
        learned.push(facts);
        return undefined;
      },
      openOfRun: (repo: string, runId: number) => {
        asked.push(`${repo}#${runId}`);
        return open.filter((r) => r.repo === repo && r.runId === runId);
      },
      rechecked: (records: readonly RunnerRecord[], now: number) => {
        rechecked.push({ ids: records.map((r) => r.id), now });
      },
    },
  };
}

/** A job as GitHub reports it, on the runner the rows here name (r-<job id>) unless said. */
const ghJob = (over: Partial<GithubJob> = {}): GithubJob => anyJob({ runnerName: `r-${over.id ?? 70}`, ...over });

const setup = (answers: StubAnswers) => stubGithub(answers);

describe("shareRunReads", () => {
  it("no GitHub: the error is passed on, nothing applied", async () => {
    const l = ledger([rec(70)]);
    const err = new Error("no key");
    const reads = shareRunReads([item(rec(70))], err, l.port);
    expect(reads.github).toBe(err);
    await reads.apply([], NOW);
    expect(l.asked).toEqual([]);
  });

  it("a run with one open runner: its job is read on its own", async () => {
    const gh = setup({ job: { status: "in_progress" } });
    const l = ledger([rec(70)]);
    const reads = shareRunReads([item(rec(70))], gh.github, l.port);
    const job = await (reads.github as Github).job(REPO, 70, 1);
    expect(job.id).toBe(70);
    expect(gh.calls).toEqual(["job 70"]);
    await reads.apply([], NOW);
    expect(l.rechecked).toEqual([]);
  });

  it("a job of no tracked row is read on its own", async () => {
    const gh = setup({});
    const reads = shareRunReads([], gh.github, ledger().port);
    await (reads.github as Github).job(REPO, 99, 1);
    expect(gh.calls).toEqual(["job 99"]);
  });

  it("several jobs of one run in the pass: one listing answers them all", async () => {
    const gh = setup({
      pages: [
        [ghJob({ id: 70, runnerName: "r-70" }), ghJob({ id: 71, runnerName: "r-71", status: "completed", completedAt: iso(NOW - 1000) })],
        [ghJob({ id: 72, runnerName: "r-72" })],
      ],
    });
    const l = ledger();
    const reads = shareRunReads([item(rec(70)), item(rec(71)), item(rec(72))], gh.github, l.port);
    const g = reads.github as Github;
    const jobs = await Promise.all([g.job(REPO, 70, 1), g.job(REPO, 71, 1), g.job(REPO, 72, 1)]);
    expect(jobs.map((j) => [j.id, j.status])).toEqual([
      [70, "in_progress"],
      [71, "completed"],
      [72, "in_progress"],
    ]);
    expect(gh.calls).toEqual(["jobs of run 7 page 1", "jobs of run 7 page 2"]);
  });

  it("a run with several open rows in the ledger (one in the pass): listed once", async () => {
    const gh = setup({ pages: [[ghJob({ id: 70 }), ghJob({ id: 71 })]] });
    const l = ledger([rec(70), rec(71)]);
    const reads = shareRunReads([item(rec(70))], gh.github, l.port);
    await (reads.github as Github).job(REPO, 70, 1);
    expect(gh.calls).toEqual(["jobs of run 7 page 1"]);
    expect(l.asked).toEqual([`${REPO}#7`]);
  });

  it("a job the listing does not show (an older attempt's) is read on its own", async () => {
    const gh = setup({ pages: [[ghJob({ id: 71 })]] });
    const reads = shareRunReads([item(rec(70)), item(rec(71))], gh.github, ledger().port);
    await (reads.github as Github).job(REPO, 70, 1);
    expect(gh.calls).toEqual(["jobs of run 7 page 1", "job 70"]);
  });

  it("a listing cut short: what it read answers, the rest throws its error", async () => {
    const gh = setup({ pages: [[ghJob({ id: 70 })], [ghJob({ id: 71 })]] });
    const budgetErr = new Error("budget spent");
    // Page 2 throws.
    const g0 = gh.github as unknown as { runJobsPage: (r: string, id: number, i: number, p: number) => Promise<unknown> };
    const orig = g0.runJobsPage;
    g0.runJobsPage = async (r, id, i, p) => {
      if (p === 2) throw budgetErr;
      return orig(r, id, i, p);
    };
    const reads = shareRunReads([item(rec(70)), item(rec(71))], gh.github, ledger().port);
    const g = reads.github as Github;
    expect((await g.job(REPO, 70, 1)).id).toBe(70);
    await expect(g.job(REPO, 71, 1)).rejects.toBe(budgetErr);
    await expect(g.runnerJob(REPO, 7, "nobody", 1)).rejects.toBe(budgetErr);
  });

  it("a run is read once per pass", async () => {
    const gh = setup({});
    const reads = shareRunReads([], gh.github, ledger().port);
    const g = reads.github as Github;
    const [a, b] = await Promise.all([g.run(REPO, 7, 1), g.run(REPO, 7, 1)]);
    await g.run(REPO, 8, 1);
    expect(a).toBe(b);
    expect(gh.calls).toEqual(["run 7", "run 8"]);
  });

  it("runnerJob: the job on that runner that started after the object's creation (less the skew), from the one listing", async () => {
    const gh = setup({
      pages: [
        [
          ghJob({ id: 60, runnerName: "r-1", startedAt: iso(NOW - 7_200_000) }),
          ghJob({ id: 61, runnerName: "r-1", startedAt: iso(NOW - 60_000) }),
          ghJob({ id: 62, runnerName: "r-2", startedAt: null }),
        ],
      ],
    });
    const reads = shareRunReads([], gh.github, ledger().port);
    const g = reads.github as Github;
    expect((await g.runnerJob(REPO, 7, "r-1", 1, NOW - 120_000))?.id).toBe(61);
    expect((await g.runnerJob(REPO, 7, "r-1", 1, NOW - 60_000))?.id).toBe(61);
    expect((await g.runnerJob(REPO, 7, "r-1", 1))?.id).toBe(60);
    expect((await g.runnerJob(REPO, 7, "r-2", 1, NOW))?.id).toBe(62);
    expect(await g.runnerJob(REPO, 7, "r-1", 1, NOW)).toBeUndefined();
    expect(gh.calls).toEqual(["jobs of run 7 page 1"]);
  });

  it("after the pass: the run's other open rows learn a completion as a fact, a running job as a recheck done now", async () => {
    const gh = setup({
      pages: [
        [
          ghJob({ id: 70 }),
          ghJob({ id: 71, status: "completed", conclusion: null, completedAt: iso(NOW - 5000), names: { workflow: "ci" } as never }),
          ghJob({ id: 72, status: "in_progress" }),
          ghJob({ id: 73, status: "in_progress" }),
          ghJob({ id: 74, status: "completed", conclusion: "success", completedAt: iso(NOW - 5000) }),
          ghJob({ id: 75, status: "in_progress" }),
          ghJob({ id: 76, status: "completed", completedAt: null }),
        ],
      ],
      installation: 4,
    });
    const open = [
      rec(70),
      rec(71),
      rec(72),
      rec(73, { runCompleted: { at: iso(NOW), conclusion: "success", attempt: 1 } }),
      rec(74, { jobCompleted: { at: iso(NOW), conclusion: "success" } }),
      rec(76),
      rec(77),
    ];
    const l = ledger(open);
    const reads = shareRunReads([item(rec(70)), item(rec(75, { runId: 7 }))], gh.github, l.port);
    await (reads.github as Github).job(REPO, 70, 4);
    const results = [{ ...item(rec(70)), asked: true } as Result, { ...item(rec(75)), asked: false } as Result];
    await reads.apply(results, NOW);
    expect(l.learned).toEqual([
      [
        {
          type: "job-completed",
          runner: "r-71",
          repo: REPO,
          runId: 7,
          runAttempt: 1,
          jobId: 71,
          startedAt: iso(NOW - 7_200_000),
          completedAt: iso(NOW - 5000),
          conclusion: "completed",
          installationId: 4,
          source: "rest",
          names: { workflow: "ci" },
        },
      ],
    ]);
    // 70 was asked in the pass; 73 and 74 know their end; 77 is not listed; 76 is completed without a time: running.
    expect(l.rechecked).toEqual([{ ids: [72, 76], now: NOW }]);
  });

  it("a completion without names carries none", async () => {
    const gh = setup({ pages: [[ghJob({ id: 70 }), ghJob({ id: 71, status: "completed", conclusion: "failure", completedAt: iso(NOW) })]] });
    const l = ledger([rec(70), rec(71)]);
    const reads = shareRunReads([item(rec(70)), item(rec(71))], gh.github, l.port);
    await (reads.github as Github).job(REPO, 70, 1);
    await reads.apply([], NOW);
    expect(l.learned[0]?.[0]).not.toHaveProperty("names");
    expect(l.learned[0]?.[0]).toMatchObject({ conclusion: "failure" });
    expect(l.rechecked).toEqual([{ ids: [70], now: NOW }]);
  });

  it("nothing listed, or a ledger that cannot name a run's rows: nothing applied", async () => {
    const gh = setup({ pages: [[ghJob({ id: 70 }), ghJob({ id: 71 })]] });
    const l = ledger([rec(70), rec(71)]);
    const none = shareRunReads([item(rec(70))], gh.github, l.port);
    await none.apply([], NOW);
    expect(l.asked).toEqual([]);
    const learned: Fact[][] = [];
    const bare = shareRunReads([item(rec(70)), item(rec(71))], gh.github, {
      learn: (f) => {
        learned.push(f);
        return undefined;
      },
    });
    await (bare.github as Github).job(REPO, 70, 1);
    await bare.apply([], NOW);
    expect(learned).toEqual([]);
  });

  it("whether a run is a group is asked of the ledger once per run", async () => {
    const gh = setup({});
    const l = ledger([rec(70)]);
    const reads = shareRunReads([item(rec(70))], gh.github, l.port);
    await (reads.github as Github).job(REPO, 70, 1);
    await (reads.github as Github).job(REPO, 70, 1);
    expect(l.asked).toEqual([`${REPO}#7`]);
    expect(gh.calls).toEqual(["job 70", "job 70"]);
  });

  it("after the pass: a row not asked in it is still rechecked; results without a row are fine; all asked: no recheck", async () => {
    const gh = setup({ pages: [[ghJob({ id: 70 }), ghJob({ id: 71 })]] });
    const l = ledger([rec(70), rec(71)]);
    const reads = shareRunReads([item(rec(70)), item(rec(71))], gh.github, l.port);
    await (reads.github as Github).job(REPO, 70, 1);
    const unseen = { name: "u", uid: "x", namespace: "a", runId: 7, repo: REPO, firstSeen: 0, dueAt: null, reason: null };
    await reads.apply(
      [
        { ...item(rec(70)), asked: true } as Result,
        { ...item(rec(71)), asked: false } as Result,
        { name: "u", unseen, view: { kind: "missing" }, asked: true } as Result,
      ],
      NOW,
    );
    expect(l.rechecked).toEqual([{ ids: [71], now: NOW }]);
    const all = ledger([rec(70), rec(71)]);
    const again = shareRunReads([item(rec(70)), item(rec(71))], setup({ pages: [[ghJob({ id: 70 }), ghJob({ id: 71 })]] }).github, all.port);
    await (again.github as Github).job(REPO, 70, 1);
    await again.apply([{ ...item(rec(70)), asked: true } as Result, { ...item(rec(71)), asked: true } as Result], NOW);
    expect(all.rechecked).toEqual([]);
  });

  it("a ledger that names a run's rows but cannot mark them rechecked: the completions are learned all the same", async () => {
    const gh = setup({ pages: [[ghJob({ id: 70 }), ghJob({ id: 71, status: "completed", completedAt: iso(NOW) })]] });
    const learned: Fact[][] = [];
    const open = [rec(70), rec(71)];
    const port = {
      learn: (f: Fact[]) => {
        learned.push(f);
        return undefined;
      },
      openOfRun: () => open,
    };
    const reads = shareRunReads([item(rec(70)), item(rec(71))], gh.github, port);
    await (reads.github as Github).job(REPO, 70, 1);
    await reads.apply([], NOW);
    expect(learned.map((f) => f[0])).toEqual([expect.objectContaining({ type: "job-completed", jobId: 71 })]);
  });

  it("unseen runners of one run count toward a group", async () => {
    const gh = setup({ pages: [[ghJob({ id: 70 })]] });
    const unseen = { name: "u", uid: "x", namespace: "a", runId: 7, repo: REPO, firstSeen: 0, dueAt: null, reason: null };
    const reads = shareRunReads([item(rec(70)), { name: "u", unseen, view: { kind: "missing" } }], gh.github, ledger().port);
    await (reads.github as Github).job(REPO, 70, 1);
    expect(gh.calls).toEqual(["jobs of run 7 page 1"]);
    // One without a repository is no runner of the run: the job is read on its own.
    const alone = setup({ pages: [[ghJob({ id: 70 })]] });
    const unplaced = shareRunReads([item(rec(70)), { name: "u", unseen: { ...unseen, repo: null }, view: { kind: "missing" } }], alone.github, ledger().port);
    await (unplaced.github as Github).job(REPO, 70, 1);
    expect(alone.calls).toEqual(["job 70"]);
  });
});

describe("shareRunReads: a listed run's attempt (REAPER_RECHECK_LISTED_RUNS)", () => {
  it("read: one page of the attempt answers every due job of the run; the run's other rows learn it", async () => {
    const done = ghJob({ id: 71, status: "completed", conclusion: "success", completedAt: iso(NOW - 120_000) });
    const gh = setup({ attemptPage: [ghJob({ id: 70 }), done, ghJob({ id: 72 })] });
    const l = ledger([rec(70), rec(71), rec(72), rec(73)]);
    const reads = shareRunReads([item(rec(70)), item(rec(72))], gh.github, l.port, { readListed: true });
    expect(reads.attemptJob).toBeDefined();
    const [a, b, missing] = await Promise.all([reads.attemptJob!(rec(70), 1), reads.attemptJob!(rec(72), 1), reads.attemptJob!(rec(73), 1)]);
    expect([a?.id, b?.id, missing]).toEqual([70, 72, undefined]);
    expect(gh.calls).toEqual(["jobs of run 7 attempt 1"]);
    await reads.apply([], NOW);
    expect(l.learned.map((f) => f[0])).toEqual([expect.objectContaining({ type: "job-completed", jobId: 71, completedAt: done.completedAt })]);
    expect(l.rechecked).toEqual([{ ids: [70, 72], now: NOW }]);
  });

  it("read: each attempt is its own page; a page that failed throws its error for every job sharing it", async () => {
    const gh = setup({ attemptPage: [ghJob({ id: 80, runAttempt: 2 })] });
    const reads = shareRunReads([], gh.github, ledger().port, { readListed: true });
    await reads.attemptJob!(rec(70), 1);
    await reads.attemptJob!(rec(80, { runAttempt: 2 }), 1);
    expect(gh.calls).toEqual(["jobs of run 7 attempt 1", "jobs of run 7 attempt 2"]);
    const failing = setup({ throws: new Error("budget spent") });
    const cut = shareRunReads([], failing.github, ledger().port, { readListed: true });
    await expect(cut.attemptJob!(rec(70), 1)).rejects.toThrow("budget spent");
    await expect(cut.attemptJob!(rec(71), 1)).rejects.toThrow("budget spent");
    expect(failing.calls).toEqual(["jobs of run 7 attempt 1"]);
  });

  it("listing (or no setting): no attempt is read", () => {
    const gh = setup({});
    expect(shareRunReads([], gh.github, ledger().port).attemptJob).toBeUndefined();
    expect(shareRunReads([], gh.github, ledger().port, { readListed: false }).attemptJob).toBeUndefined();
  });
});
