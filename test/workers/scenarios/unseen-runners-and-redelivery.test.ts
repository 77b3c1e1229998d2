// Nothing lost: runners no webhook told us about are judged from GitHub, within
// the call budget; failed deliveries are redelivered once per GUID.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { before, INSTALLATION, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners, deliver, ledgerOf } from "../support/worker.ts";
import { workflowJobPayload, workflowRunPayload } from "../support/payloads.ts";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { SETTLE_MS as RECONCILE_SETTLE_MS } from "../../../src/model/policy.ts";
import { NOW, deletes } from "../support/kube-calls.ts";

// A day ahead of the clock: the sweeps here run on the cron's time, and no alarm is due meanwhile.
type S = Awaited<ReturnType<typeof stack>>;
const accepted = (s: S) => deletes(s, { accepted: true });
const runnerCalls = async (s: S) => (await s.github.calls()).filter((c) => c.path !== "/app/hook/deliveries");
// The first sweep that sees a busy runner without facts waits for its webhook; the next one asks.
const settle = async (s: S) => {
  await s.sweep(NOW - RECONCILE_SETTLE_MS);
  expect(await runnerCalls(s)).toEqual([]);
};

describe("reconcile: busy runners without facts", () => {
  it("reaps a runner whose run completed past the grace, records what GitHub said, and does not ask again", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-old", workflowRunId: 800 });
    await s.github.putJob({
      repo: REPO,
      run_id: 800,
      status: "completed",
      conclusion: "cancelled",
      runner_name: er.metadata.name,
      started_at: before(NOW, 4000),
      completed_at: before(NOW, 3600),
    });
    await s.github.putRun({ repo: REPO, id: 800, status: "completed", conclusion: "cancelled", updated_at: before(NOW, 3600) });
    await settle(s);
    await s.sweep(NOW);
    expect((await accepted(s)).map((c) => c.path)).toEqual([`/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/${er.metadata.name}`]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({
      name: er.metadata.name,
      state: "reaped",
      code: "RunCompleted",
    });
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({
      workflow: "CI",
      job: null,
      branch: "main",
      runUrl: `https://github.com/${REPO}/actions/runs/800`,
    });
    expect((await runnerCalls(s)).map((c) => `${c.method} ${c.path}`)).toEqual([
      `GET /repos/${REPO}/installation`,
      "POST /app/installations/4242/access_tokens",
      `GET /repos/${REPO}/actions/runs/800`,
    ]);
    await s.github.clearCalls();
    await s.sweep(NOW + 60_000); // the facts now say it all: no second look-up
    expect(await runnerCalls(s)).toEqual([]);
  });

  it("finds the runner's job among the run's jobs when the run is still going, and judges it by completed_at", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-job", workflowRunId: 801 });
    for (let i = 0; i < 120; i++)
      await s.github.putJob({ repo: REPO, run_id: 801, status: "in_progress", runner_name: `arc-runners-abcde-runner-o${i}`, started_at: before(NOW, 600) });
    await s.github.putJob({
      repo: REPO,
      run_id: 801,
      status: "completed",
      conclusion: "cancelled",
      runner_name: er.metadata.name,
      started_at: before(NOW, 900),
      completed_at: before(NOW, 400),
    });
    await settle(s);
    await s.sweep(NOW);
    expect(await accepted(s)).toHaveLength(1);
    expect((await adminRunners(s.env)).runners.find((r) => r.name === er.metadata.name)).toMatchObject({
      state: "reaped",
      code: "JobCompleted",
    });
    // What GitHub's REST answer named it, as a webhook would have.
    expect((await adminRunners(s.env)).runners.find((r) => r.name === er.metadata.name)).toMatchObject({
      workflow: "CI",
      job: "linters",
      branch: "main",
      runUrl: `https://github.com/${REPO}/actions/runs/801`,
    }); // the stand-in names jobs after the examples
    expect((await runnerCalls(s)).filter((c) => c.path.endsWith("/jobs")).map((c) => c.query.page)).toEqual(["1", "2"]);
  });

  it("waits for a webhook before asking GitHub about a runner that just became busy", async () => {
    const s = await stack();
    await s.runner({ name: "arc-runners-abcde-runner-new", workflowRunId: 804 });
    await s.sweep(NOW);
    await s.sweep(NOW + RECONCILE_SETTLE_MS - 60_000);
    expect(await runnerCalls(s)).toEqual([]);
    // Its webhook arrives: no GitHub call is ever needed.
    await s.jobStarted({ runner: "arc-runners-abcde-runner-new", runId: 804, jobId: 8040, startedAt: before(NOW, 30) });
    await s.sweep(NOW + RECONCILE_SETTLE_MS + 60_000);
    expect(await runnerCalls(s)).toEqual([]);
  });

  it("keeps a running job within the bound, remembers it, and asks nothing at the next sweep", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-run", workflowRunId: 802 });
    await s.github.putJob({ repo: REPO, run_id: 802, status: "in_progress", runner_name: er.metadata.name, started_at: before(NOW, 600) });
    await settle(s);
    await s.sweep(NOW);
    expect(await accepted(s)).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ name: er.metadata.name, state: "running", runId: 802 });
    await s.github.clearCalls();
    await s.sweep(NOW + 60_000);
    expect(await runnerCalls(s)).toEqual([]);
  });

  it("idle runners and runners being deleted cost no GitHub call", async () => {
    const s = await stack();
    for (let i = 0; i < 5; i++) await s.runner({ name: `arc-runners-abcde-runner-i${i}` });
    await s.runner({ name: "arc-runners-abcde-runner-dd", workflowRunId: 803, deletionTimestamp: before(NOW, 10) });
    await s.sweep(NOW - RECONCILE_SETTLE_MS);
    await s.sweep(NOW);
    expect(await runnerCalls(s)).toEqual([]);
    expect(await accepted(s)).toEqual([]);
  });

  it.each([
    ["REAPER_MAX_GITHUB_CALLS_PER_MINUTE", { REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "4" }],
    // An upgrading user's config: the old name, beside the new one at the default the shipped wrangler.toml once set.
    ["the old name beside the new at 100", { REAPER_MAX_GITHUB_CALLS_PER_SWEEP: "4", REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "100" }],
  ])("spends at most 4 a minute (%s), oldest runner first, and finishes over later sweeps", async (_what, settings) => {
    const s = await stack(settings);
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const name = `arc-runners-abcde-runner-b${i}`;
      names.push(name);
      await s.kube.seed(
        makeEphemeralRunner({
          namespace: NS,
          scaleSet: "arc-runners",
          name,
          workflowRunId: 900 + i,
          jobRepositoryName: REPO,
          creationTimestamp: before(NOW, 10_000 - i * 100),
        }),
      );
      await s.github.putRun({ repo: REPO, id: 900 + i, status: "completed", conclusion: "cancelled", updated_at: before(NOW, 3600) });
    }
    await settle(s);
    const perSweep: number[] = [];
    for (let sweep = 0; sweep < 6 && (await accepted(s)).length < 6; sweep++) {
      await s.github.clearCalls();
      await s.sweep(NOW + sweep * 60_000);
      perSweep.push((await s.github.calls()).length);
    }
    expect(Math.max(...perSweep)).toBeLessThanOrEqual(4);
    const order = (await accepted(s)).map((c) => c.path.split("/").pop());
    expect(order).toEqual(names); // oldest first
  });

  it("honours 429 with Retry-After: stops asking for the rest of the sweep", async () => {
    const s = await stack();
    for (let i = 0; i < 3; i++) {
      await s.runner({ name: `arc-runners-abcde-runner-r${i}`, workflowRunId: 950 + i });
      await s.github.putRun({ repo: REPO, id: 950 + i, status: "completed", conclusion: "cancelled", updated_at: before(NOW, 3600) });
    }
    await s.github.addFault({ match: { pathIncludes: "/actions/runs/" }, status: 429, retryAfterSeconds: 1, times: 1 });
    await settle(s);
    await s.sweep(NOW);
    const asked = (await s.github.calls()).filter((c) => c.path.includes("/actions/runs/"));
    expect(asked.map((c) => c.status)).toEqual([429]);
    expect(await accepted(s)).toEqual([]);
    // The back-off GitHub asked for (1 s, on the real clock the call budget reads) is held in the ledger's memory:
    // it is moved into the past, as if the second had passed, instead of the test waiting it out.
    const backOffs = await runInDurableObject(ledgerOf(s.env), (_i, state) => {
      const rows = state.storage.sql.exec<{ key: string; value: string }>("SELECT key, value FROM memory WHERE key LIKE 'backoff/%'").toArray();
      state.storage.sql.exec("UPDATE memory SET value = ? WHERE key LIKE 'backoff/%'", JSON.stringify(Date.now() - 1));
      return rows.map((r) => Number(JSON.parse(r.value)) - Date.now());
    });
    expect(backOffs).toHaveLength(1);
    expect(backOffs[0]).toBeGreaterThan(0); // still held: the sweep alone would not have asked
    expect(backOffs[0]).toBeLessThanOrEqual(1000); // Retry-After: 1
    await s.sweep(NOW + 60_000);
    expect(await accepted(s)).toHaveLength(3);
  });
});

describe("redelivery", () => {
  it("asks once per GUID for failed workflow_job/workflow_run deliveries in the look-back that never succeeded", async () => {
    const s = await stack({ REAPER_REDELIVERY_LOOKBACK_SECONDS: "3600" });
    const at = (secondsAgo: number) => before(NOW, secondsAgo);
    const failedJob = await s.github.addDelivery({ guid: "guid-a", event: "workflow_job", action: "completed", statusCode: 502, deliveredAt: at(300) });
    await s.github.addDelivery({ guid: "guid-b", event: "workflow_run", action: "completed", statusCode: 500, deliveredAt: at(400) });
    await s.github.addDelivery({ guid: "guid-b", event: "workflow_run", action: "completed", statusCode: 202, deliveredAt: at(350), redelivery: true });
    // The redelivery that succeeded reached the ledger: its GUID is recorded as received.
    await deliver(
      s.env,
      "workflow_run",
      workflowRunPayload({ repo: REPO, runId: 901, runAttempt: 1, updatedAt: before(Date.now(), 400), conclusion: "success", installationId: INSTALLATION }),
      { delivery: "guid-b" },
    );
    await s.github.addDelivery({ guid: "guid-c", event: "push", statusCode: 500, deliveredAt: at(200) });
    await s.github.addDelivery({ guid: "guid-d", event: "workflow_job", action: "completed", statusCode: 500, deliveredAt: at(7200) });
    await s.github.addDelivery({ guid: "guid-e", event: "workflow_job", action: "in_progress", statusCode: 200, deliveredAt: at(100) });
    await s.sweep(NOW);
    expect(await s.github.redeliveries()).toEqual([expect.objectContaining({ deliveryId: failedJob.id, guid: "guid-a" })]);
    await s.github.setRedeliveryStatus(503);
    await s.sweep(NOW + 60_000);
    await s.sweep(NOW + 120_000);
    expect((await s.github.redeliveries()).map((r) => r.guid)).toEqual(["guid-a"]);
  });
});

describe("redelivery over several listings", () => {
  it("lists every REAPER_DELIVERIES_EVERY_SECONDS; a redelivery that failed too is asked again at a later listing, never twice in one", async () => {
    // Real time here: the stand-in stamps a redelivered attempt with its own clock.
    const T = Date.now();
    const s = await stack({ REAPER_REDELIVERY_LOOKBACK_SECONDS: "3600", REAPER_DELIVERIES_EVERY_SECONDS: "300" });
    await s.github.addDelivery({ guid: "guid-r1", event: "workflow_job", action: "completed", statusCode: 502, deliveredAt: before(T, 30) });
    await s.github.setRedeliveryStatus(503); // the redelivered attempt fails too
    const listings = async () => (await s.github.calls()).filter((c) => c.method === "GET" && c.path === "/app/hook/deliveries").length;
    // The first sweep runs late (its now is the real clock, after the setup): later ones are timed from it.
    const late = Date.now() - T + 1_000;
    await s.sweep(T);
    expect((await s.github.redeliveries()).map((r) => r.guid)).toEqual(["guid-r1"]);
    for (const t of [T + 60_000, T + 120_000, T + 240_000]) await s.sweep(t + late); // no listing before 300 s
    expect(await listings()).toBe(1);
    expect(await s.github.redeliveries()).toHaveLength(1);
    await s.sweep(T + 300_000 + late); // the next listing sees the failed redelivery and asks once more
    expect(await listings()).toBe(2);
    expect((await s.github.redeliveries()).map((r) => r.guid)).toEqual(["guid-r1", "guid-r1"]);
  });

  it("takes at most half the budget and resumes a cut listing where it ended, at the next sweep", async () => {
    const T = Date.now();
    const s = await stack({ REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "4", REAPER_REDELIVERY_LOOKBACK_SECONDS: "3600" });
    // 250 failed deliveries (the queued ones are nothing to redeliver): three pages of the failure listing.
    for (let i = 0; i < 250; i++) {
      await s.github.addDelivery({
        guid: `guid-p${i}`,
        event: "workflow_job",
        action: i === 5 ? "completed" : "queued",
        statusCode: 500,
        deliveredAt: before(T, 600 - i),
      });
    }
    // The first sweep runs late (its now is the real clock, after the setup): later ones are timed from it.
    const late = Date.now() - T + 1_000;
    await s.sweep(T);
    const pages = async () => (await s.github.calls()).filter((c) => c.path === "/app/hook/deliveries");
    expect((await pages()).map((c) => c.query.cursor ?? "first")).toEqual(["first", expect.any(String)]); // 2 calls: half of 4
    await s.github.clearCalls();
    await s.sweep(T + 60_000 + late); // resumes with the cursor, not from the top
    expect((await pages()).map((c) => c.query.cursor ?? "first")).toEqual([expect.any(String)]);
    expect((await s.github.redeliveries()).map((r) => r.guid)).toEqual(["guid-p5"]);
  });
});

describe("redelivery lists failed deliveries only", () => {
  const listings = async (s: S) => (await s.github.calls()).filter((c) => c.method === "GET" && c.path === "/app/hook/deliveries");

  it("lists with status=failure, and never asks for a GUID the ledger received (its first attempt timed out after it was recorded)", async () => {
    const T = Date.now();
    const s = await stack({ REAPER_REDELIVERY_LOOKBACK_SECONDS: "3600" });
    const payload = workflowJobPayload("completed", {
      repo: REPO,
      runner: "arc-runners-abcde-runner-t1",
      runId: 950,
      jobId: 9500,
      runAttempt: 1,
      startedAt: before(T, 600),
      completedAt: before(T, 90),
      conclusion: "success",
      installationId: INSTALLATION,
    });
    expect((await deliver(s.env, "workflow_job", payload, { delivery: "guid-slow" })).status).toBe(202);
    await s.github.addDelivery({ guid: "guid-slow", event: "workflow_job", action: "completed", statusCode: 504, deliveredAt: before(T, 60) });
    const lost = await s.github.addDelivery({ guid: "guid-lost", event: "workflow_job", action: "completed", statusCode: 503, deliveredAt: before(T, 50) });
    await s.sweep(T);
    expect((await listings(s)).map((c) => c.query.status)).toEqual(["failure"]);
    expect((await s.github.redeliveries()).map((r) => r.deliveryId)).toEqual([lost.id]);
  });

  it("a GitHub Enterprise Server that answers 422 to status is listed in full, and not asked with status again that day", async () => {
    const T = Date.now();
    const s = await stack({ REAPER_REDELIVERY_LOOKBACK_SECONDS: "3600", REAPER_DELIVERIES_EVERY_SECONDS: "300" });
    await s.github.setDeliveriesStatusFilter(false);
    await s.github.addDelivery({ guid: "guid-g1", event: "workflow_run", action: "completed", statusCode: 500, deliveredAt: before(T, 30) });
    await s.github.addDelivery({ guid: "guid-g2", event: "workflow_run", action: "completed", statusCode: 200, deliveredAt: before(T, 20) });
    const late = Date.now() - T + 1_000; // the first sweep's now is the real clock, after the setup
    await s.sweep(T);
    expect((await listings(s)).map((c) => `${c.status} ${c.query.status ?? "all"}`)).toEqual(["422 failure", "200 all"]);
    expect((await s.github.redeliveries()).map((r) => r.guid)).toEqual(["guid-g1"]);
    await s.github.clearCalls();
    await s.sweep(T + 300_000 + late);
    expect((await listings(s)).map((c) => `${c.status} ${c.query.status ?? "all"}`)).toEqual(["200 all"]);
  });
});
