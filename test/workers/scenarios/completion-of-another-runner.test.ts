// A completion GitHub reports is learned for a row only when the job names the row's runner (its runner id
// where both carry one, else its name): a real in_progress payload (@octokit/webhooks-examples) names the
// runner, the GitHub stand-in's job says it completed on another one, and the busy runner is kept, the
// answer counted as a GitHub error (JobNamesAnotherRunner). The same job naming the row's runner reaps it.
import { describe, expect, it } from "vitest";
import { before, REPO, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call } from "../support/worker.ts";
import { deletes, NOW } from "../support/kube-calls.ts";

const BOUND = { REAPER_MAX_JOB_SECONDS: "3600" };

async function metrics(env: Parameters<typeof call>[0]): Promise<string> {
  const res = await call(env, new Request("https://reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
  return res.text();
}

describe("a completion that names another runner", () => {
  it.each([
    ["another runner id (same name)", { runner_id: 4242 }, "(runner id 4242), not on"],
    ["another runner name (no id on the job)", { runner_name: "arc-runners-zzzzz", runner_id: null }, "ran on arc-runners-zzzzz, not on"],
  ] as const)("past the bound, GitHub's job naming %s: kept, counted, never deleted", async (_what, jobFields, words) => {
    const s = await stack(BOUND);
    const er = await s.runner({ name: "arc-runners-abcde-runner-o1", workflowRunId: 810 });
    const job = await s.github.putJob({
      repo: REPO,
      run_id: 810,
      run_attempt: 1,
      status: "completed",
      conclusion: "success",
      runner_name: er.metadata.name,
      started_at: before(NOW, 7200),
      completed_at: before(NOW, 3000),
      ...jobFields,
    });
    await s.jobStarted({ runner: er.metadata.name, runId: 810, jobId: Number(job.id), runnerId: 36_001, startedAt: before(NOW, 7200) });
    await s.sweep(NOW);
    expect(await deletes(s)).toEqual([]);
    const [row] = (await adminRunners(s.env)).runners;
    expect(row).toMatchObject({ state: "running", code: "JobNamesAnotherRunner" });
    expect(String(row?.reason)).toContain(words);
    expect(await metrics(s.env)).toMatch(/^arc_reaper_errors_total\{kind="github"\} 1$/m);
    // Asked again after its back-off, never sooner: the next sweep within it sends nothing to GitHub about the job.
    const reads = (await s.github.calls()).filter((c) => c.path.includes(`/actions/jobs/${job.id}`)).length;
    await s.sweep(NOW + 30_000);
    expect((await s.github.calls()).filter((c) => c.path.includes(`/actions/jobs/${job.id}`)).length).toBe(reads);
    expect(await deletes(s)).toEqual([]);
  });

  it("the same job naming the row's runner (its id) is believed: reaped on it", async () => {
    const s = await stack(BOUND);
    const er = await s.runner({ name: "arc-runners-abcde-runner-o2", workflowRunId: 811 });
    const job = await s.github.putJob({
      repo: REPO,
      run_id: 811,
      run_attempt: 1,
      status: "completed",
      conclusion: "success",
      runner_name: er.metadata.name,
      runner_id: 36_002,
      started_at: before(NOW, 7200),
      completed_at: before(NOW, 3000),
    });
    await s.jobStarted({ runner: er.metadata.name, runId: 811, jobId: Number(job.id), runnerId: 36_002, startedAt: before(NOW, 7200) });
    await s.sweep(NOW);
    expect(await deletes(s)).toHaveLength(1);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped", code: "JobCompleted" });
  });
});
