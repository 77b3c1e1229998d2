// Conditional rechecks (issue 47), end to end over real HTTP through the GitHub stand-in, which sends
// weak ETags per token and body and answers a matching If-None-Match with a 304 that spends no rate
// limit. A recheck within the token that earned the ETag is answered 304 and keeps what the 200 kept;
// a body that changed (a completion lost inside a run that goes on) is a 200 and its runner is reaped;
// the sweep counts requests made and requests counted apart (/metrics, the admin day); a 304 GitHub
// answers where no validator was sent is a GitHub error, and its runners are kept.
import { describe, expect, it } from "vitest";
import { busyRun } from "../support/busy-run.ts";
import { deletes, NOW } from "../support/kube-calls.ts";
import { before, NS, REPO, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call, ledgerOf } from "../support/worker.ts";

type S = Awaited<ReturnType<typeof stack>>;
const RUNNERS = `/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/`;
const deleted = async (s: S) => (await deletes(s)).map((c) => c.path.replace(RUNNERS, ""));
/** The Actions reads since `from` (an index into the stand-in's calls), as path and status. */
const actionsReads = async (s: S, from: number) =>
  (await s.github.calls())
    .slice(from)
    .filter((c) => c.path.startsWith(`/repos/${REPO}/actions/`))
    .map((c) => `${c.path.replace(`/repos/${REPO}/actions/`, "")} ${c.status}`);

async function gauges(s: S): Promise<{ requests: number; counted: number }> {
  const res = await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
  const text = await res.text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? Number.NaN);
  return { requests: value("arc_reaper_last_sweep_github_requests"), counted: value("arc_reaper_last_sweep_github_counted_requests") };
}

const run = (s: S, runId: number, count: number, startedSecondsAgo: number) => busyRun(s, "arc-runners-cond-r", runId, count, startedSecondsAgo);

describe("conditional rechecks through the stand-in", () => {
  it("a recheck under the same token is answered 304 and keeps what the 200 kept; a changed body is a 200 that finds the lost completion", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" }, { autoFinalize: true });
    const jobs = await run(s, 7001, 4, 3700);

    let from = (await s.github.calls()).length;
    await s.sweep(NOW);
    expect(await actionsReads(s, from)).toEqual(["runs 200", "runs/7001/attempts/1/jobs 200"]);
    const afterFirst = await gauges(s);
    expect(afterFirst.counted).toBe(afterFirst.requests);

    // An hour on, the same token (it lives an hour of the real clock): both reads are 304s, which GitHub does not count.
    const rate = (await s.github.rateLimit()).remaining;
    from = (await s.github.calls()).length;
    await s.sweep(NOW + 3_601_000);
    expect(await actionsReads(s, from)).toEqual(["runs 304", "runs/7001/attempts/1/jobs 304"]);
    expect((await s.github.rateLimit()).remaining).toBe(rate - (await s.github.calls()).slice(from).filter((c) => c.status !== 304).length);
    const second = await gauges(s);
    expect(second.requests - second.counted).toBe(2);
    // The 304 kept all four, as the 200 did, and moved their next recheck: the sweeps within the hour read nothing.
    expect(await deleted(s)).toEqual([]);
    const rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(rows.filter((r) => r.state === "running")).toHaveLength(4);
    from = (await s.github.calls()).length;
    await s.sweep(NOW + 3_661_000);
    expect(await actionsReads(s, from)).toEqual([]);

    // GitHub says one job completed two minutes ago; its run goes on, its delivery never comes. The attempt's body changed: a 200.
    const lost = jobs[2]!;
    await s.github.putJob({
      repo: REPO,
      id: lost.id,
      run_id: 7001,
      status: "completed",
      conclusion: "success",
      runner_name: lost.name,
      completed_at: before(NOW + 7_202_000, 120),
    });
    from = (await s.github.calls()).length;
    await s.sweep(NOW + 7_202_000);
    // (The listing changed too: the stand-in's run was last updated by its latest job.)
    expect(await actionsReads(s, from)).toEqual(["runs 200", "runs/7001/attempts/1/jobs 200"]);
    await ledgerOf(s.env).alarmAt(NOW + 7_202_000 + 181_000);
    expect(await deleted(s)).toEqual([lost.name]);
    // And what is remembered now is the new word: an hour on, a 304 again, the completed job not read as running.
    from = (await s.github.calls()).length;
    await s.sweep(NOW + 10_803_000);
    expect(await actionsReads(s, from)).toEqual(["runs 304", "runs/7001/attempts/1/jobs 304"]);
    expect(await deleted(s)).toEqual([lost.name]);
    const final = (await adminRunners(s.env, "?limit=100")).runners;
    expect(
      final
        .filter((r) => r.state === "running")
        .map((r) => r.name)
        .sort(),
    ).toEqual(
      jobs
        .filter((j) => j !== lost)
        .map((j) => j.name)
        .sort(),
    );
  });

  it("a 304 to a request that sent no validator is a GitHub error, never a decision: the run's runners are kept", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    const jobs = await run(s, 7002, 2, 3700);
    // A broken proxy in front of GitHub answers the first read of the attempt's jobs 304, with nothing remembered for it.
    await s.github.addFault({ match: { method: "GET", pathIncludes: "/attempts/1/jobs" }, status: 304, rawBody: "", times: 1 });
    await s.github.putJob({
      repo: REPO,
      id: jobs[0]!.id,
      run_id: 7002,
      status: "completed",
      conclusion: "success",
      runner_name: jobs[0]!.name,
      completed_at: before(NOW, 900),
    });
    await s.sweep(NOW);
    expect(await deleted(s)).toEqual([]);
    const rows = (await adminRunners(s.env, "?limit=100")).runners;
    expect(
      rows
        .filter((r) => r.code === "GithubError")
        .map((r) => r.name)
        .sort(),
    ).toEqual(jobs.map((j) => j.name).sort());
    for (const j of jobs) expect((await s.kube.get(NS, j.name))?.metadata.deletionTimestamp).toBeUndefined();
  });
});
