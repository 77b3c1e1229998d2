// The long-jobs day: builds of hours whose completions were lost, with
// REAPER_RECHECK_LISTED_RUNS=listing (the fewest calls). Rechecks ask the
// repository's runs in progress once, not each run: a run still listed answers
// "still running" for its jobs; a run that ended is no longer listed and its
// jobs are read. A job that completed inside a run still in progress (its
// completion lost) is found when the run has ended, at the first recheck
// after; a long job still running is never deleted. The default (read) finds
// it at its own first recheck: recheck-lost-in-run.test.ts.
import { describe, expect, it } from "vitest";
import { NOW, deletes } from "../support/kube-calls.ts";
import { before, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners } from "../support/worker.ts";

type S = Awaited<ReturnType<typeof stack>>;
const actionsCalls = async (s: S) =>
  (await s.github.calls())
    .filter((c) => c.path.startsWith(`/repos/${REPO}/actions/`))
    .map((c) => c.path.replace(`/repos/${REPO}/actions/`, ""))
    .sort();
const deleted = async (s: S) =>
  (await deletes(s)).map((c) => c.path.replace(`/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/`, "")).sort();

/** A busy runner on a long job whose in_progress delivery came; its completed one never will. */
async function longJob(s: S, name: string, runId: number, startedSecondsAgo: number) {
  const startedAt = before(NOW, startedSecondsAgo);
  await s.runner({ name, workflowRunId: runId });
  const job = await s.github.putJob({ repo: REPO, run_id: runId, status: "in_progress", runner_name: name, started_at: startedAt });
  const answer = await s.jobStarted({ runner: name, runId, jobId: Number(job.id), startedAt });
  if (answer.status !== 202) throw new Error(`seeding ${name}: ${answer.status}`);
  return {
    name,
    id: Number(job.id),
    /** The job ends on GitHub `secondsAgo` before NOW (negative: after); no delivery says so. */
    complete: (secondsAgo: number) =>
      s.github.putJob({
        repo: REPO,
        id: Number(job.id),
        run_id: runId,
        status: "completed",
        conclusion: "success",
        runner_name: name,
        completed_at: before(NOW, secondsAgo),
      }),
  };
}

describe("rechecks on the long-jobs day", () => {
  it("one listing of the runs in progress answers the running builds; a lost completion is found once its run ended, and a running build is never deleted", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600", REAPER_RECHECK_LISTED_RUNS: "listing" }, { autoFinalize: true });
    // A matrix build of three jobs (run 8001), a one-job build that ended (8002), a 5-hour build running throughout (8003).
    const [a, b, c] = [
      await longJob(s, "arc-runners-abcde-l8001-a", 8001, 3700),
      await longJob(s, "arc-runners-abcde-l8001-b", 8001, 3700),
      await longJob(s, "arc-runners-abcde-l8001-c", 8001, 3700),
    ];
    const ended = await longJob(s, "arc-runners-abcde-l8002", 8002, 3800);
    const running = await longJob(s, "arc-runners-abcde-l8003", 8003, 3900);
    await a!.complete(600); // inside run 8001, which runs on
    await ended.complete(900); // run 8002's only job: the run ended with it

    await s.sweep(NOW);
    // One listing for the repository; the run no longer listed has its job read (its only open job).
    expect(await actionsCalls(s)).toEqual([`jobs/${ended.id}`, "runs"]);
    expect(await deleted(s)).toEqual([ended.name]);
    let rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(rows.find((r) => r.name === ended.name)).toMatchObject({ state: "reaped", code: "JobCompleted" });
    // The price: a's completion is not seen while its run is in progress.
    for (const j of [a!, b!, c!, running]) {
      expect(rows.find((r) => r.name === j.name)).toMatchObject({ state: "running", code: "Running" });
    }

    // The rest of the build ends half an hour later, its completions lost too; within the interval nothing is asked.
    await b!.complete(-1800);
    await c!.complete(-1800);
    for (const t of [NOW + 60_000, NOW + 1_860_000, NOW + 3_540_000]) await s.sweep(t);
    expect(await actionsCalls(s)).toHaveLength(2);

    // An interval after: one listing; run 8001 is no longer listed, one read of its jobs answers all three.
    await s.sweep(NOW + 3_601_000);
    expect(await actionsCalls(s)).toEqual([`jobs/${ended.id}`, "runs", "runs", "runs/8001/jobs"]);
    expect(await deleted(s)).toEqual([a!.name, b!.name, c!.name, ended.name].sort());
    rows = (await adminRunners(s.env, "?limit=100")).runners;
    // a completed at NOW - 600 s and is found 4,201 s later: the run's end (NOW + 1,800 s) plus at most an interval.
    const reapedA = rows.find((r) => r.name === a!.name)!;
    expect(reapedA).toMatchObject({ state: "reaped", code: "JobCompleted" });
    expect(Date.parse(String(reapedA.closedAt)) - Date.parse(String(reapedA.completedAt))).toBe(4_201_000);

    // Two hours on, the 5-hour build still runs: listed each interval, never read on its own, never deleted.
    await s.sweep(NOW + 7_202_000);
    expect(await actionsCalls(s)).toEqual([`jobs/${ended.id}`, "runs", "runs", "runs", "runs/8001/jobs"]);
    expect(await deleted(s)).not.toContain(running.name);
    expect((await s.kube.get(NS, running.name))?.metadata.deletionTimestamp).toBeUndefined();
    rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(rows.find((r) => r.name === running.name)).toMatchObject({ state: "running" });
  });
});
