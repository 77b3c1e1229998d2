// A lost completion inside a run that goes on: a job past REAPER_RECHECK_SECONDS
// whose run the repository lists in progress has its run's attempt read (one
// page of its jobs, once per run and interval), so a job GitHub says completed
// while its run goes on, its completed delivery lost, has its runner reaped at
// the first recheck after it (at its grace end), and nobody else's.
import { describe, expect, it, vi } from "vitest";
import { busyRun } from "../support/busy-run.ts";
import { deletes, NOW } from "../support/kube-calls.ts";
import { before, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners, ledgerOf } from "../support/worker.ts";

type S = Awaited<ReturnType<typeof stack>>;
const RUNNERS = `/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/`;
const deleted = async (s: S) => (await deletes(s)).map((c) => c.path.replace(RUNNERS, ""));
const actionsCalls = async (s: S) =>
  (await s.github.calls()).filter((c) => c.path.startsWith(`/repos/${REPO}/actions/`)).map((c) => c.path.replace(`/repos/${REPO}/actions/`, ""));
const attemptReads = async (s: S) => (await actionsCalls(s)).filter((p) => /^runs\/\d+\/attempts\/\d+\/jobs$/.test(p)).sort();

const run = (s: S, runId: number, count: number, startedSecondsAgo: number) => busyRun(s, "arc-runners-abcde-r", runId, count, startedSecondsAgo);

describe("a lost completion inside a run that goes on", () => {
  it("is found at the first recheck after it, with one read of its run's jobs, and its runner alone reaped at the grace end", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" }, { autoFinalize: true });
    const runs = [await run(s, 9001, 10, 3700), await run(s, 9002, 10, 3800), await run(s, 9003, 10, 3900)];
    // GitHub says one job of run 9002 completed two minutes ago; its run goes on (9 jobs in progress), its delivery never comes.
    const lost = runs[1]![6]!;
    await s.github.putJob({
      repo: REPO,
      id: lost.id,
      run_id: 9002,
      status: "completed",
      conclusion: "success",
      runner_name: lost.name,
      completed_at: before(NOW, 120),
    });

    await s.sweep(NOW);
    // The repository's runs in progress once; each run's attempt once: the lost job's run read exactly once, no job read on its own.
    expect((await actionsCalls(s)).filter((p) => p === "runs")).toHaveLength(1);
    expect(await attemptReads(s)).toEqual(["runs/9001/attempts/1/jobs", "runs/9002/attempts/1/jobs", "runs/9003/attempts/1/jobs"]);
    expect((await actionsCalls(s)).filter((p) => p.startsWith("jobs/"))).toEqual([]);
    // One page of up to 100 jobs of the attempt each run is tracked at.
    const pages = (await s.github.calls()).filter((c) => /\/attempts\/1\/jobs$/.test(c.path));
    expect(pages.map((c) => c.query)).toEqual(Array(3).fill({ per_page: "100" }));
    // Within the grace: learned, waiting for its end; nothing deleted yet.
    expect(await deleted(s)).toEqual([]);
    let rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(rows.find((r) => r.name === lost.name)).toMatchObject({ state: "finished" });

    // The alarm at the grace end reaps it (by uid, as any reap), asking GitHub nothing more.
    const callsBefore = (await s.github.calls()).length;
    await ledgerOf(s.env).alarmAt(NOW + 181_000);
    expect(await deleted(s)).toEqual([lost.name]);
    const uid = (await deletes(s))[0]!.body as { preconditions: { uid: string } };
    expect(uid.preconditions.uid).toMatch(/\S/);
    expect((await s.github.calls()).length).toBe(callsBefore);
    rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(rows.find((r) => r.name === lost.name)).toMatchObject({ state: "reaped", code: "JobCompleted" });
    // The 29 others run on: kept, never deleted.
    expect(rows.filter((r) => r.state === "running")).toHaveLength(29);
    for (const j of runs.flat()) if (j !== lost) expect((await s.kube.get(NS, j.name))?.metadata.deletionTimestamp).toBeUndefined();

    // Once per interval: the sweeps within it read nothing more; an interval on, each run once again.
    for (const t of [NOW + 240_000, NOW + 1_800_000, NOW + 3_540_000]) await s.sweep(t);
    expect(await attemptReads(s)).toHaveLength(3);
    await s.sweep(NOW + 3_601_000);
    expect(await attemptReads(s)).toHaveLength(6);
    expect(await deleted(s)).toEqual([lost.name]);
  });

  it("within the budget the oldest runs are read first; what it leaves is counted in the sweep line and read at the next sweep", async () => {
    // 5 calls a minute: the deliveries listing, a token, the runs in progress, and two runs' attempts.
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600", REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "5" }, { autoFinalize: true });
    const [young, middle, old] = [await run(s, 9201, 3, 3700), await run(s, 9202, 3, 3800), await run(s, 9203, 3, 3900)];
    const lost = young![1]!;
    await s.github.putJob({
      repo: REPO,
      id: lost.id,
      run_id: 9201,
      status: "completed",
      conclusion: "success",
      runner_name: lost.name,
      completed_at: before(NOW, 600),
    });
    const log = vi.spyOn(console, "log");
    await s.sweep(NOW);
    const sweepLine = () =>
      log.mock.calls
        .map(([line]) => JSON.parse(String(line)) as Record<string, unknown>)
        .filter((l) => l.msg === "sweep")
        .at(-1);
    expect(await attemptReads(s)).toEqual(["runs/9202/attempts/1/jobs", "runs/9203/attempts/1/jobs"]);
    expect(sweepLine()).toMatchObject({ checked: 9, githubCalls: 5, heldForBudget: 3 });
    expect(await deleted(s)).toEqual([]);
    const rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(
      rows
        .filter((r) => r.code === "Budget")
        .map((r) => r.name)
        .sort(),
    ).toEqual(young!.map((j) => j.name).sort());

    await s.sweep(NOW + 61_000); // the window frees: the run left over is read, its lost completion reaped (past its grace)
    expect(await attemptReads(s)).toEqual(["runs/9201/attempts/1/jobs", "runs/9202/attempts/1/jobs", "runs/9203/attempts/1/jobs"]);
    expect(sweepLine()).not.toHaveProperty("heldForBudget");
    log.mockRestore();
    expect(await deleted(s)).toEqual([lost.name]);
    for (const j of [...middle!, ...old!]) expect((await s.kube.get(NS, j.name))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it("REAPER_RECHECK_LISTED_RUNS=listing: the listing answers 'still running', the run's jobs are not read, the runner stays until its run ends", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600", REAPER_RECHECK_LISTED_RUNS: "listing" }, { autoFinalize: true });
    const [job, other] = await run(s, 9101, 2, 3700);
    await s.github.putJob({
      repo: REPO,
      id: job!.id,
      run_id: 9101,
      status: "completed",
      conclusion: "success",
      runner_name: job!.name,
      completed_at: before(NOW, 120),
    });
    await s.sweep(NOW);
    await ledgerOf(s.env).alarmAt(NOW + 181_000);
    expect(await actionsCalls(s)).toEqual(["runs"]);
    expect(await deleted(s)).toEqual([]);
    const rows = (await adminRunners(s.env, "?limit=100")).runners;
    for (const j of [job!, other!]) expect(rows.find((r) => r.name === j.name)).toMatchObject({ state: "running" });
  });
});
