// GitHub Enterprise Server end to end: the Worker with GITHUB_API_URL =
// http://127.0.0.1:PORT/api/v3, a stand-in GHES host of its own (rate limits
// off, as GHES ships: no x-ratelimit headers). Token mint, installation look-up,
// run and job reads (paged by Link), the deliveries listing and redelivery all
// go under /api/v3, and nothing reaches the host outside it.
import { describe, expect, it } from "vitest";
import type { CallRecord } from "../../standins/github/control.ts";
import { SETTLE_MS as RECONCILE_SETTLE_MS } from "../../../src/model/policy.ts";
import { before, INSTALLATION, REPO, stack, type Stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call } from "../support/worker.ts";
import { NOW } from "../support/kube-calls.ts";

// A day ahead of the clock: the sweeps run on the cron's time, and no alarm is due meanwhile.
const ghes = () => stack({}, { github: { ghes: { version: "3.17.4" } } });
const apiCalls = async (s: Stack): Promise<string[]> => {
  const calls: CallRecord[] = await s.github.calls();
  // Nothing asked outside /api/v3 (the web's HTML 404), nothing refused.
  expect(calls.filter((c) => c.outsideApi === true || c.status >= 400)).toEqual([]);
  return calls.filter((c) => c.path !== "/app/hook/deliveries").map((c) => `${c.method} ${c.path}${c.query["page"] ? `?page=${c.query["page"]}` : ""}`);
};

describe("GitHub Enterprise Server (GITHUB_API_URL ends in /api/v3)", () => {
  it("mints a token, reads a run and its jobs over two pages, and reaps the runner whose job completed", async () => {
    const s = await ghes();
    expect(s.env.GITHUB_API_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v3$/);
    const er = await s.runner({ name: "arc-runners-abcde-runner-gh1", workflowRunId: 1801 });
    for (let i = 0; i < 120; i++)
      await s.github.putJob({ repo: REPO, run_id: 1801, status: "in_progress", runner_name: `arc-runners-abcde-runner-o${i}`, started_at: before(NOW, 600) });
    await s.github.putJob({
      repo: REPO,
      run_id: 1801,
      status: "completed",
      conclusion: "cancelled",
      runner_name: er.metadata.name,
      started_at: before(NOW, 900),
      completed_at: before(NOW, 400),
    });
    await s.sweep(NOW - RECONCILE_SETTLE_MS); // first sight of a busy runner without facts: wait for its webhook
    await s.sweep(NOW);
    expect((await adminRunners(s.env)).runners.find((r) => r["name"] === er.metadata.name)).toMatchObject({
      state: "reaped",
      code: "JobCompleted",
    });
    expect(await apiCalls(s)).toEqual([
      `GET /repos/${REPO}/installation`,
      `POST /app/installations/${INSTALLATION}/access_tokens`,
      `GET /repos/${REPO}/actions/runs/1801`,
      `GET /repos/${REPO}/actions/runs/1801/jobs?page=1`,
      `GET /repos/${REPO}/actions/runs/1801/jobs?page=2`,
    ]);
    expect((await s.github.tokenRequests()).map((t) => t.permissions)).toEqual([{ actions: "read" }]);
    // No x-ratelimit headers on GHES with rate limits off: nothing to report, nothing counted as an error.
    const metrics = await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text();
    expect(metrics).not.toMatch(/^arc_reaper_github_rate_limit_remaining /m);
    expect(metrics).not.toMatch(/^arc_reaper_errors_total\{kind="github"\} [1-9]/m);
  });

  it("re-reads a job with no completion heard past REAPER_RECHECK_SECONDS, and reaps it on GitHub's word", async () => {
    const s = await ghes();
    const er = await s.runner({ name: "arc-runners-abcde-runner-gh2", workflowRunId: 1802 });
    const job = await s.github.putJob({
      repo: REPO,
      run_id: 1802,
      status: "completed",
      conclusion: "failure",
      runner_name: er.metadata.name,
      started_at: before(NOW, 4000),
      completed_at: before(NOW, 600),
    });
    expect((await s.jobStarted({ runner: er.metadata.name, runId: 1802, jobId: Number(job.id), startedAt: before(NOW, 4000) })).status).toBe(202);
    await s.sweep(NOW);
    // The repository's runs in progress first (run 1802 has ended: not listed), then the job.
    expect(await apiCalls(s)).toEqual([
      `POST /app/installations/${INSTALLATION}/access_tokens`,
      `GET /repos/${REPO}/actions/runs?page=1`,
      `GET /repos/${REPO}/actions/jobs/${job.id}`,
    ]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped", code: "JobCompleted" });
  });

  it("lists the App's deliveries under /api/v3, following its Link, and redelivers a failed one by its exact id", async () => {
    const T = Date.now();
    const s = await stack({ REAPER_REDELIVERY_LOOKBACK_SECONDS: "3600" }, { github: { ghes: true } });
    // Failed deliveries only are listed (status=failure): 120 of them, over two pages; one is a workflow_job (asked
    // again), the others are events arc-reaper never records (listed, never asked for).
    for (let i = 0; i < 120; i++) {
      const job = i === 3;
      await s.github.addDelivery({
        guid: `guid-g${i}`,
        event: job ? "workflow_job" : "push",
        action: job ? "completed" : null,
        statusCode: 502,
        deliveredAt: before(T, 900 - i),
      });
    }
    await s.sweep(T);
    const listings = (await s.github.calls()).filter((c) => c.path === "/app/hook/deliveries");
    expect(listings.length).toBeGreaterThanOrEqual(2); // more than a page: the Link's cursor was followed under /api/v3
    expect(listings.every((c) => c.status === 200 && c.auth === "jwt")).toBe(true);
    expect(listings.slice(1).every((c) => typeof c.query["cursor"] === "string")).toBe(true);
    const failed = (await s.github.deliveries()).find((d) => d.guid === "guid-g3" && !d.redelivery);
    expect(await s.github.redeliveries()).toEqual([expect.objectContaining({ deliveryId: failed?.id, guid: "guid-g3" })]);
    expect(await apiCalls(s)).toEqual([`POST /app/hook/deliveries/${failed?.id}/attempts`]);
  });
});
