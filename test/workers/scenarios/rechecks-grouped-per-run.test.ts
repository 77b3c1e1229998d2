// Rechecks grouped per run (issue 25): jobs past REAPER_RECHECK_SECONDS whose run
// is listed among the repository's runs in progress are answered by that one
// listing; the jobs of a run not listed (it ended, or waits) by one read of the
// run's jobs (filter=latest, 100 a page), not a read per job; a lost completion
// among them is found; a re-run's older attempt (which that read does not show)
// is read on its own; a read the budget cuts answers what it read and the rest
// resume at the next pass.
import { describe, expect, it } from "vitest";
import { before, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners, evictLedger, ledgerOf } from "../support/worker.ts";

// The sweeps run on the cron's time, a day ahead of the clock: no ledger alarm fires on its own meanwhile.
const NOW = Date.now() + 86_400_000;
type S = Awaited<ReturnType<typeof stack>>;
const deletes = async (s: S) => (await s.kube.calls()).filter((c) => c.method === "DELETE").map((c) => c.path);
const jobReads = async (s: S) => (await s.github.calls()).filter((c) => c.path.includes("/actions/jobs/")).map((c) => c.path);
const runListings = async (s: S) => (await s.github.calls()).filter((c) => /\/actions\/runs\/\d+\/jobs/.test(c.path)).map((c) => c.path);
const listingPath = (runId: number) => `/repos/${REPO}/actions/runs/${runId}/jobs`;
const runningListings = async (s: S) => (await s.github.calls()).filter((c) => c.path === `/repos/${REPO}/actions/runs`);

interface Job {
  id: number;
  name: string;
  runId: number;
}

/** A matrix: `count` busy runners of one run, each job in progress since `startedSecondsAgo` (plus its index in seconds), no completion heard. */
async function matrix(s: S, o: { runId: number; count: number; startedSecondsAgo: number; runAttempt?: number; prefix?: string }): Promise<Job[]> {
  const jobs = await Promise.all(
    Array.from({ length: o.count }, async (_, i) => {
      const name = `arc-runners-abcde-${o.prefix ?? "m"}${o.runId}-${i}`;
      const startedAt = before(NOW, o.startedSecondsAgo - i);
      await s.runner({ name, workflowRunId: o.runId });
      const job = await s.github.putJob({
        repo: REPO,
        run_id: o.runId,
        run_attempt: o.runAttempt ?? 1,
        status: "in_progress",
        runner_name: name,
        started_at: startedAt,
      });
      return { id: Number(job.id), name, runId: o.runId, startedAt };
    }),
  );
  // The deliveries one after another: the ledger records them in order either way.
  for (const j of jobs) {
    const answer = await s.jobStarted({ runner: j.name, runId: j.runId, jobId: j.id, startedAt: j.startedAt, runAttempt: o.runAttempt ?? 1 });
    if (answer.status !== 202) throw new Error(`seeding ${j.name}: ${answer.status} ${await answer.text()}`);
  }
  return jobs.map(({ id, name, runId }) => ({ id, name, runId }));
}

const complete = (s: S, j: Job, secondsAgo: number, runAttempt = 1) =>
  s.github.putJob({
    repo: REPO,
    id: j.id,
    run_id: j.runId,
    run_attempt: runAttempt,
    status: "completed",
    conclusion: "cancelled",
    runner_name: j.name,
    completed_at: before(NOW, secondsAgo),
  });

describe("rechecks grouped per run", () => {
  it("30 jobs of 3 runs past the recheck cost 3 reads, not 30; a lost completion among them is found and its runner reaped", async () => {
    // ARC's controller finalizes what is deleted: no stuck deletion asks GitHub about its job later.
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" }, { autoFinalize: true });
    const runs = [
      await matrix(s, { runId: 7001, count: 10, startedSecondsAgo: 3700 }),
      await matrix(s, { runId: 7002, count: 10, startedSecondsAgo: 3800 }),
      await matrix(s, { runId: 7003, count: 10, startedSecondsAgo: 3900 }),
    ];
    // No run is in progress (each waits on a job awaiting approval): the listing answers none of them.
    for (const id of [7001, 7002, 7003]) await s.github.putRun({ repo: REPO, id, status: "waiting" });
    const lost = runs[1]![4]!;
    await complete(s, lost, 900); // its completed delivery never came

    await s.sweep(NOW);
    expect(await jobReads(s)).toEqual([]);
    expect(await runningListings(s)).toHaveLength(1);
    expect((await runListings(s)).sort()).toEqual([listingPath(7001), listingPath(7002), listingPath(7003)]);
    expect(await deletes(s)).toEqual([`/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/${lost.name}`]);
    const rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(rows.find((r) => r.name === lost.name)).toMatchObject({ state: "reaped", code: "JobCompleted" });
    expect(rows.filter((r) => r.state === "running")).toHaveLength(29);

    // Every job's next recheck moved with the read: nothing is asked again within the interval.
    for (const t of [NOW + 60_000, NOW + 1_800_000, NOW + 3_540_000]) await s.sweep(t);
    expect(await runListings(s)).toHaveLength(3);
    await s.sweep(NOW + 3_601_000);
    expect(await runListings(s)).toHaveLength(6);
    expect(await runningListings(s)).toHaveLength(2);
    expect(await jobReads(s)).toEqual([]);
  });

  it("the alarm: one due job of a run reads the run, and the run's other jobs, due later, move their recheck with it", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    // Started 3000 s to 3000 - 9 × 30 s ago: their rechecks fall 600 s to 870 s after NOW.
    const jobs = await matrix(s, { runId: 7101, count: 1, startedSecondsAgo: 3000 });
    for (let i = 1; i < 10; i++) jobs.push(...(await matrix(s, { runId: 7101, count: 1, startedSecondsAgo: 3000 - 30 * i, prefix: `a${i}-` })));
    await s.github.putRun({ repo: REPO, id: 7101, status: "waiting" }); // not in progress: its jobs are read
    await complete(s, jobs[6]!, 1200);
    await evictLedger(s.env);
    await ledgerOf(s.env).alarmAt(NOW + 601_000); // only the first is due
    expect(await runListings(s)).toEqual([listingPath(7101)]);
    // The completion the listing showed is a fact now: due at its grace end, long past: reaped by the next alarm without asking.
    await ledgerOf(s.env).alarmAt(NOW + 900_000);
    expect(await runListings(s)).toHaveLength(1);
    expect(await jobReads(s)).toEqual([]);
    expect(await deletes(s)).toEqual([`/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/${jobs[6]!.name}`]);
    await ledgerOf(s.env).alarmAt(NOW + 601_000 + 3_600_000); // an interval after the read: all due again, one read
    expect(await runListings(s)).toHaveLength(2);
  });

  it("a re-run's older attempt, which filter=latest does not list, is read on its own and reaped when it completed", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    const first = await matrix(s, { runId: 7201, count: 2, startedSecondsAgo: 4000 });
    // Attempt 1 ended (its completions lost); the run was re-run: attempt 2's jobs run on other runners.
    await complete(s, first[0]!, 3000);
    await complete(s, first[1]!, 3000);
    const second = await matrix(s, { runId: 7201, count: 2, startedSecondsAgo: 3700, runAttempt: 2, prefix: "b" });
    await s.sweep(NOW);
    expect(await runListings(s)).toEqual([listingPath(7201)]);
    expect((await jobReads(s)).sort()).toEqual(first.map((j) => `/repos/${REPO}/actions/jobs/${j.id}`).sort());
    expect((await deletes(s)).sort()).toEqual(first.map((j) => `/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/${j.name}`).sort());
    const rows = (await adminRunners(s.env, "?limit=100")).runners;
    for (const j of second) expect(rows.find((r) => r.name === j.name)).toMatchObject({ state: "running" });
  });

  it("a listing the budget cuts in the middle of a run (page 2 of 2) answers page 1, and the rest resume at the next sweep", async () => {
    // 4 calls a sweep: the deliveries listing, a token, the runs in progress, and one page.
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600", REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "4" });
    const jobs = await matrix(s, { runId: 7301, count: 105, startedSecondsAgo: 4000 });
    await s.github.putRun({ repo: REPO, id: 7301, status: "waiting" }); // not in progress: its jobs are read
    const onPage2 = jobs.slice().sort((a, b) => a.id - b.id)[102]!;
    await complete(s, onPage2, 1200);
    await s.sweep(NOW);
    expect(await runListings(s)).toEqual([`${listingPath(7301)}`]);
    let rows = (await adminRunners(s.env, "?limit=200")).runners;
    expect(rows.filter((r) => r.code === "Budget")).toHaveLength(5);
    expect(await deletes(s)).toEqual([]);

    await s.sweep(NOW + 61_000); // the window frees: the listing again, both pages this time
    expect(await runListings(s)).toHaveLength(3);
    expect(await jobReads(s)).toEqual([]);
    expect(await deletes(s)).toEqual([`/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/${onPage2.name}`]);
    rows = (await adminRunners(s.env, "?limit=200")).runners;
    expect(rows.filter((r) => r.code === "Budget")).toHaveLength(0);
    await s.sweep(NOW + 121_000); // all 105 re-read now: nothing more to ask
    expect(await runListings(s)).toHaveLength(3);
  });

  it("unseen busy runners of one run share its reads: one run read and one listing for three runners, a tracked job of the run answered by the runs in progress", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    const [tracked] = await matrix(s, { runId: 7401, count: 1, startedSecondsAgo: 3500 }); // its recheck falls due between the sweeps
    for (let i = 0; i < 3; i++) {
      const name = `arc-runners-abcde-u7401-${i}`;
      await s.runner({ name, workflowRunId: 7401 });
      await s.github.putJob({ repo: REPO, run_id: 7401, status: "in_progress", runner_name: name, started_at: before(NOW, 600) });
    }
    await s.sweep(NOW); // seen busy without a webhook: waits for one
    await s.sweep(NOW + 181_000);
    const calls = (await s.github.calls()).map((c) => c.path).filter((p) => p.includes("/actions/"));
    expect(calls.sort()).toEqual([`/repos/${REPO}/actions/runs`, `/repos/${REPO}/actions/runs/7401`, listingPath(7401)]);
    const rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(rows.map((r) => `${r.name} ${r.state}`).sort()).toEqual([
      `${tracked!.name} running`,
      ...[0, 1, 2].map((i) => `arc-runners-abcde-u7401-${i} running`),
    ]);
  });
});
