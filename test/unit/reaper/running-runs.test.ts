// The repository's runs in progress, listed once per repository and pass
// (src/reaper/running-runs.ts): pages up to GitHub's 1,000, a listing cut short,
// and the rows of listed runs counted as rechecked.
import { describe, expect, it } from "vitest";
import { GithubBudgetExhausted } from "../../../src/github/call-budget.ts";
import type { Github, ListedRun } from "../../../src/github/github-client.ts";
import type { RunnerRecord } from "../../../src/model/runner.ts";
import { runningRunsOfPass } from "../../../src/reaper/running-runs.ts";

/** A repository's runs in progress, newest first; `failPage` throws on that page. */
function listing(runs: Record<string, number[]>, failPage?: { page: number; error: Error }) {
  const calls: string[] = [];
  const github = {
    async inProgressRunsPage(repo: string, _installationId: number, page: number): Promise<{ runs: ListedRun[]; last: boolean }> {
      calls.push(`${repo} ${page}`);
      if (failPage?.page === page) throw failPage.error;
      const all = runs[repo] ?? [];
      return {
        runs: all.slice((page - 1) * 100, page * 100).map((id) => ({ id, runAttempt: 1, status: "in_progress" })),
        last: page * 100 >= all.length,
      };
    },
  } as unknown as Github;
  return { github, calls };
}

const record = (repo: string, runId: number, id = runId): RunnerRecord => ({
  id,
  runner: `arc-runners-x-${id}`,
  repo,
  runId,
  runAttempt: 1,
  jobId: id * 10,
  startedAt: "2026-11-02T10:00:00.000Z",
  state: "running",
  reason: "",
  dueAt: 0,
  story: [],
});
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe("runningRunsOfPass", () => {
  it("lists each repository once a pass, whatever the number of rechecks it answers", async () => {
    const { github, calls } = listing({ "o/a": [1, 2], "o/b": [3] });
    const pass = runningRunsOfPass(github);
    expect(await pass.word(record("o/a", 1), 7)).toEqual({ kind: "run-running", runId: 1, runAttempt: 1 });
    expect(await pass.word(record("o/a", 2), 7)).toEqual({ kind: "run-running", runId: 2, runAttempt: 1 });
    expect(await pass.word(record("o/a", 9), 7)).toBeUndefined(); // not in progress: the job is read
    expect(await pass.word(record("o/b", 3), 7)).toMatchObject({ runId: 3 });
    expect(calls).toEqual(["o/a 1", "o/b 1"]);
  });

  it("reads every page up to GitHub's 1,000 runs; a run past them is read on its own", async () => {
    const { github, calls } = listing({ "o/a": ids(1, 1_200) });
    const pass = runningRunsOfPass(github);
    expect(await pass.word(record("o/a", 1_000), 7)).toMatchObject({ runId: 1_000 });
    expect(await pass.word(record("o/a", 1_001), 7)).toBeUndefined();
    expect(calls).toHaveLength(10);
  });

  it("a listing cut short answers the runs it read; for the others its error is the recheck's", async () => {
    const cut = new GithubBudgetExhausted("the budget is spent");
    const { github } = listing({ "o/a": ids(1, 150) }, { page: 2, error: cut });
    const pass = runningRunsOfPass(github);
    expect(await pass.word(record("o/a", 100), 7)).toMatchObject({ runId: 100 });
    await expect(pass.word(record("o/a", 101), 7)).rejects.toBe(cut);
    const failed = runningRunsOfPass(listing({ "o/a": [1] }, { page: 1, error: new Error("GitHub answered 502") }).github);
    await expect(failed.word(record("o/a", 1), 7)).rejects.toThrow("502");
  });

  it("counts the running rows of listed runs as rechecked now, not those asked in the pass nor those of runs not listed", async () => {
    const { github } = listing({ "o/a": [1, 2] });
    const pass = runningRunsOfPass(github);
    await pass.word(record("o/a", 1), 7);
    const open: Record<number, RunnerRecord[]> = { 1: [record("o/a", 1, 11), record("o/a", 1, 12)], 2: [record("o/a", 2, 21)], 3: [record("o/a", 3, 31)] };
    const moved: { ids: (number | undefined)[]; now: number }[] = [];
    await pass.apply(
      { openOfRun: (_repo, runId) => open[runId] ?? [], rechecked: (rows, now) => moved.push({ ids: rows.map((r) => r.id), now }) },
      new Set([12]),
      5_000,
    );
    expect(moved).toEqual([
      { ids: [11], now: 5_000 },
      { ids: [21], now: 5_000 },
    ]);
  });
});
