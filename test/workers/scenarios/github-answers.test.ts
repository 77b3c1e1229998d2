// GitHub's answers are read by a schema, and its redirects are followed only
// within the configured API origin. A job past the bound is the sharpest case:
// any answer read as GitHub's word deletes its runner. A 200 `{}`, a 200 HTML
// page and a redirect to another host are each kept and counted as an error;
// a 301 within the API's origin (a renamed repository) is followed.
import { describe, expect, it } from "vitest";
import { deletes, NOW } from "../support/kube-calls.ts";
import { before, REPO, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call } from "../support/worker.ts";
import type { FaultInput } from "../../standins/github/types.ts";

type S = Awaited<ReturnType<typeof stack>>;

/** A runner whose job started 7,201 s ago, past a bound of an hour: GitHub is asked, and its word decides. */
async function pastTheBound(fault: (s: S, jobId: number) => FaultInput) {
  const s = await stack({ REAPER_MAX_JOB_SECONDS: "3600" });
  const er = await s.runner({ name: "arc-runners-abcde-runner-ans", workflowRunId: 720 });
  const job = await s.github.putJob({
    repo: REPO,
    run_id: 720,
    run_attempt: 1,
    status: "in_progress",
    runner_name: er.metadata.name,
    started_at: before(NOW, 7201),
  });
  await s.jobStarted({ runner: er.metadata.name, runId: 720, jobId: Number(job.id), startedAt: before(NOW, 7201) });
  await s.github.addFault(fault(s, Number(job.id)));
  await s.sweep(NOW);
  const row = (await adminRunners(s.env)).runners[0];
  const metrics = await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text();
  const githubErrors = Number(/^arc_reaper_errors_total\{kind="github"\} (\d+)/m.exec(metrics)?.[1] ?? "0");
  const asked = (await s.github.calls()).filter((c) => c.path.includes("/actions/jobs/")).map((c) => c.status);
  return { s, row, githubErrors, asked, deleted: (await deletes(s)).length, jobId: Number(job.id) };
}

const jobPath = (jobId: number) => `/repos/${REPO}/actions/jobs/${jobId}`;

describe("GitHub's answers read by a schema, redirects within the API's origin", () => {
  it.each([
    ["a 200 {}", { status: 200, rawBody: "{}" }],
    ["a 200 HTML page", { status: 200, rawBody: "<!DOCTYPE html><title>Sign in</title>", contentType: "text/html" }],
    ["a job without a status", { status: 200, rawBody: JSON.stringify({ id: 1, run_id: 720, conclusion: null, completed_at: null, runner_name: null }) }],
  ] as const)("%s for a job past the bound deletes nothing: kept, counted as an error", async (_what, answer) => {
    const { row, githubErrors, deleted } = await pastTheBound((_s, jobId) => ({ match: { pathIncludes: `/actions/jobs/${jobId}` }, ...answer }));
    expect(deleted).toBe(0);
    expect(row).toMatchObject({ state: "running", code: "GithubError" });
    expect(githubErrors).toBeGreaterThanOrEqual(1);
  });

  it("a redirect to another host is not followed: nothing deleted, counted as an error", async () => {
    // localhost is the same stand-in under another origin. Followed (as before), fetch drops the token on the way and the
    // stand-in answers 401; a host that answers anyway would be read as GitHub's word (in progress past the bound: delete).
    const { row, githubErrors, deleted, asked } = await pastTheBound((s, jobId) => ({
      match: { pathIncludes: `/actions/jobs/${jobId}` },
      status: 302,
      location: `${s.github.baseUrl.replace("127.0.0.1", "localhost")}${jobPath(jobId)}`,
      times: 1,
    }));
    expect(asked).toEqual([302]);
    expect(deleted).toBe(0);
    expect(row).toMatchObject({ state: "running", code: "GithubError" });
    expect(githubErrors).toBeGreaterThanOrEqual(1);
  });

  it("a 301 within the API's origin (a renamed repository) is followed, and its answer decides", async () => {
    const { row, deleted, asked, jobId } = await pastTheBound((s, id) => ({
      match: { pathIncludes: `/actions/jobs/${id}` },
      status: 301,
      location: `${s.github.baseUrl}${jobPath(id)}?renamed=1`,
      times: 1,
    }));
    expect(asked).toEqual([301, 200]);
    expect(deleted).toBe(1);
    expect(row).toMatchObject({ state: "reaped", code: "OverBound", cause: "over-bound", jobId });
  });
});
