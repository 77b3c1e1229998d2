// Lost completions (issue 10, hazard 3): a tracked job whose completed delivery
// never came (lost beyond the redelivery look-back) is rechecked once per
// REAPER_RECHECK_SECONDS, oldest first and within the budget: its run listed
// among the repository's runs in progress answers "still running" (issue 25),
// a run not listed has the job read, and it is reaped after the grace when
// GitHub says it completed. And a 403 secondary rate limit without Retry-After
// stops GitHub asks for at least a minute.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MemoryTable } from "../../../src/ledger/memory-table.ts";
import type { Conclusion } from "../../standins/github/types.ts";
import { Sql } from "../../../src/ledger/sql.ts";
import { before, INSTALLATION, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners, evictLedger, ledgerOf } from "../support/worker.ts";
import { NOW, deletes } from "../support/kube-calls.ts";

// The sweeps run on the cron's time, a day ahead of the clock: no ledger alarm fires on its own meanwhile.
type S = Awaited<ReturnType<typeof stack>>;
const jobReads = async (s: S) => (await s.github.calls()).filter((c) => c.path.includes("/actions/jobs/")).map((c) => c.path);
const jobPath = (id: number | string) => `/repos/${REPO}/actions/jobs/${id}`;
/** Listings of the repository's runs in progress (issue 25). */
const runningListings = async (s: S) => (await s.github.calls()).filter((c) => c.path === `/repos/${REPO}/actions/runs`).map((c) => c.query.status);

/** A busy runner whose in_progress webhook came and whose completed one never will. */
async function runningJob(s: S, o: { name: string; runId: number; startedSecondsAgo: number }) {
  await s.runner({ name: o.name, workflowRunId: o.runId });
  const job = await s.github.putJob({ repo: REPO, run_id: o.runId, status: "in_progress", runner_name: o.name, started_at: before(NOW, o.startedSecondsAgo) });
  await s.jobStarted({ runner: o.name, runId: o.runId, jobId: Number(job.id), startedAt: before(NOW, o.startedSecondsAgo) });
  return {
    id: job.id,
    /** The job ends on GitHub (`secondsAgo` before NOW; negative: after). */
    complete: (conclusion: Conclusion, secondsAgo: number) =>
      s.github.putJob({
        repo: REPO,
        id: Number(job.id),
        run_id: o.runId,
        status: "completed",
        conclusion,
        runner_name: o.name,
        started_at: before(NOW, o.startedSecondsAgo),
        completed_at: before(NOW, secondsAgo),
      }),
  };
}

describe("recheck: lost completions", () => {
  it("rechecks a job running past REAPER_RECHECK_SECONDS once per interval (its run listed in progress: not read) and reaps it after the grace once GitHub says it completed", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    const job = await runningJob(s, { name: "arc-runners-abcde-runner-r1", runId: 950, startedSecondsAgo: 3000 });

    await s.sweep(NOW); // 3000 s in: within the interval, nothing to ask
    expect(await runningListings(s)).toEqual([]);
    await s.sweep(NOW + 601_000); // 3601 s in: rechecked once, its run listed in progress: no read of the job
    expect(await runningListings(s)).toEqual(["in_progress"]);
    expect(await jobReads(s)).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "running" });

    // The job (its run's only one) ends on GitHub; its completed delivery is lost for good.
    await job.complete("cancelled", -700);
    for (const t of [NOW + 660_000, NOW + 1_800_000, NOW + 4_140_000]) await s.sweep(t); // within the interval: not asked again
    expect(await runningListings(s)).toHaveLength(1);
    expect(await jobReads(s)).toEqual([]);
    expect(await deletes(s)).toEqual([]);

    await s.sweep(NOW + 4_201_000); // an interval after: its run is no longer listed, the job is read: completed 3501 s ago
    expect(await runningListings(s)).toHaveLength(2);
    expect(await jobReads(s)).toEqual([jobPath(job.id)]);
    expect((await deletes(s)).map((c) => c.status)).toEqual([200]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped", code: "JobCompleted" });
  });

  it("a completion GitHub reports within the grace waits for the grace end, then reaps without asking again", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    const job = await runningJob(s, { name: "arc-runners-abcde-runner-r2", runId: 951, startedSecondsAgo: 3700 });
    await job.complete("failure", 60);
    await s.sweep(NOW);
    expect(await jobReads(s)).toEqual([jobPath(job.id)]);
    expect(await deletes(s)).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({
      state: "finished",
      code: "InGrace",
    });
    await s.sweep(NOW + 240_000);
    expect(await jobReads(s)).toHaveLength(1); // the REST completion is a fact now
    expect((await deletes(s)).map((c) => c.status)).toEqual([200]);
  });

  it("the alarm re-reads at the recheck time, with no sweep", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    const job = await runningJob(s, { name: "arc-runners-abcde-runner-r3", runId: 952, startedSecondsAgo: 3000 });
    await job.complete("cancelled", 2000);
    await evictLedger(s.env);
    await ledgerOf(s.env).alarmAt(NOW + 590_000); // before the recheck is due: nothing
    expect(await jobReads(s)).toEqual([]);
    await ledgerOf(s.env).alarmAt(NOW + 601_000);
    expect(await jobReads(s)).toEqual([jobPath(job.id)]);
    expect((await deletes(s)).map((c) => c.status)).toEqual([200]);
  });

  it("oldest first, within the budget: what the budget leaves out is re-read at the next sweep", async () => {
    // 5 calls a sweep: the deliveries listing, a token, the runs in progress, and two job reads.
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600", REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "5" });
    const young = await runningJob(s, { name: "arc-runners-abcde-runner-ry", runId: 953, startedSecondsAgo: 3700 });
    const oldest = await runningJob(s, { name: "arc-runners-abcde-runner-ro", runId: 954, startedSecondsAgo: 5000 });
    const middle = await runningJob(s, { name: "arc-runners-abcde-runner-rm", runId: 955, startedSecondsAgo: 4000 });
    // Each run waits (another job of it awaits an environment's approval): not listed in progress, each job is read.
    for (const id of [953, 954, 955]) await s.github.putRun({ repo: REPO, id, status: "waiting" });
    await s.sweep(NOW);
    expect(await jobReads(s)).toEqual([jobPath(oldest.id), jobPath(middle.id)]);
    await s.sweep(NOW + 60_000);
    expect(await jobReads(s)).toEqual([jobPath(oldest.id), jobPath(middle.id), jobPath(young.id)]);
    await s.sweep(NOW + 120_000); // all three re-read within the interval
    expect(await jobReads(s)).toHaveLength(3);
    expect(await runningListings(s)).toHaveLength(2);
    expect(await deletes(s)).toEqual([]);
  });
});

describe("recheck: a read that fails", () => {
  it("is not repeated every minute: a job GitHub cannot find (404) is re-read once per interval, and spends no budget meanwhile", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    const name = "arc-runners-abcde-runner-r404";
    await s.runner({ name, workflowRunId: 956 });
    // Its run was deleted on GitHub: the job reads 404.
    await s.jobStarted({ runner: name, runId: 956, jobId: 9_560_000, startedAt: before(NOW, 3700) });
    await s.sweep(NOW);
    expect(await jobReads(s)).toEqual([jobPath(9_560_000)]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "running", code: "GithubError" });
    for (const t of [NOW + 60_000, NOW + 120_000, NOW + 1_800_000]) await s.sweep(t);
    expect(await jobReads(s)).toHaveLength(1);
    await s.sweep(NOW + 3_601_000);
    expect(await jobReads(s)).toHaveLength(2);
    expect(await deletes(s)).toEqual([]);
  });
});

describe("GitHub's 403 secondary rate limit", () => {
  it("without Retry-After stops GitHub asks for at least 60 s", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    await runningJob(s, { name: "arc-runners-abcde-runner-s1", runId: 960, startedSecondsAgo: 5000 });
    await runningJob(s, { name: "arc-runners-abcde-runner-s2", runId: 961, startedSecondsAgo: 4000 });
    await s.github.addFault({
      match: { pathIncludes: "/actions/" },
      status: 403,
      times: 1,
      message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    });
    const sent = Date.now();
    await s.sweep(NOW);
    // The first read (the runs in progress) met the limit; no other was sent.
    expect((await s.github.calls()).filter((c) => c.path.includes("/actions/")).map((c) => `${c.path} ${c.status}`)).toEqual([
      `/repos/${REPO}/actions/runs 403`,
    ]);
    const blockedUntil = await runInDurableObject(ledgerOf(s.env), (_i, state) => new MemoryTable(new Sql(state.storage.sql)).get(`backoff/${INSTALLATION}`));
    expect(blockedUntil).toBeGreaterThanOrEqual(sent + 60_000);

    await s.sweep(NOW + 60_000); // seconds later on the clock: still within the back-off
    expect((await s.github.calls()).filter((c) => c.path.includes("/actions/"))).toHaveLength(1);
    expect(await jobReads(s)).toEqual([]);
    expect(await deletes(s)).toEqual([]);
    expect((await s.kube.get(NS, "arc-runners-abcde-runner-s1"))?.metadata.deletionTimestamp).toBeUndefined();
  });
});
