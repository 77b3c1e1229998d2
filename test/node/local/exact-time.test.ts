// Exact time, under `wrangler dev` with no cron sweep triggered: the ledger's
// alarm fires at GitHub's completed_at (or the run's updated_at) plus the grace
// and deletes at once; a completion that arrives after its grace already ran
// out is reaped within 2 s of arriving.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { startLocalStack, workflowJobPayload, workflowRunPayload, type LocalStack } from "../../../scripts/lib/local-stack.ts";

const REPO = "octo-org/octo-repo";
const INSTALLATION = 4242;
const GRACE_SECONDS = 5;
const iso = (ms: number) => new Date(ms).toISOString();

let s: LocalStack;
beforeAll(async () => {
  s = await startLocalStack({
    repositories: [REPO],
    installationId: INSTALLATION,
    settings: { REAPER_GRACE_SECONDS: String(GRACE_SECONDS), REAPER_DRY_RUN: "false" },
  });
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

async function busyRunner(name: string, runId: number): Promise<void> {
  await s.kube.seed(
    makeEphemeralRunner({
      namespace: s.namespace,
      scaleSet: "arc-runners",
      name,
      workflowRunId: runId,
      jobRepositoryName: REPO,
      creationTimestamp: iso(Date.now() - 600_000).replace(/\.\d{3}Z$/, "Z"),
    }),
  );
}

async function started(name: string, runId: number, jobId: number): Promise<void> {
  const payload = workflowJobPayload("in_progress", {
    runner: name,
    repo: REPO,
    runId,
    runAttempt: 1,
    jobId,
    installationId: INSTALLATION,
    startedAt: iso(Date.now() - 120_000),
  });
  expect((await s.postWebhook("workflow_job", payload)).status).toBe(202);
}

/** When (ms, this machine's clock, polled every 50 ms) the runner got its deletionTimestamp. */
async function deletedAt(name: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await s.kube.get(s.namespace, name))?.metadata.deletionTimestamp) return Date.now();
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} was not deleted within ${timeoutMs} ms`);
}

describe("exact-time reaping, no cron", () => {
  it("deletes a completed job's runner 5–7 s after its completed_at", async () => {
    const name = "arc-runners-exact-runner-job01";
    await busyRunner(name, 6101);
    await started(name, 6101, 61010);
    const completedAt = Date.now();
    const payload = workflowJobPayload("completed", {
      runner: name,
      repo: REPO,
      runId: 6101,
      runAttempt: 1,
      jobId: 61010,
      installationId: INSTALLATION,
      startedAt: iso(completedAt - 120_000),
      completedAt: iso(completedAt),
      conclusion: "cancelled",
    });
    expect((await s.postWebhook("workflow_job", payload)).status).toBe(202);
    const delay = (await deletedAt(name, 15_000)) - completedAt;
    console.log(`exact time: job completed → deleted after ${delay} ms (grace ${GRACE_SECONDS} s)`);
    expect(delay).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000);
    expect(delay).toBeLessThanOrEqual(GRACE_SECONDS * 1000 + 2000);
  }, 30_000);

  it("deletes a cancelled run's runners 5–7 s after the run's updated_at", async () => {
    const names = ["arc-runners-exact-runner-run01", "arc-runners-exact-runner-run02"];
    for (const [i, name] of names.entries()) {
      await busyRunner(name, 6102);
      await started(name, 6102, 61020 + i);
    }
    const updatedAt = Date.now();
    const run = workflowRunPayload({
      repo: REPO,
      runId: 6102,
      runAttempt: 1,
      installationId: INSTALLATION,
      updatedAt: iso(updatedAt),
      conclusion: "cancelled",
    });
    expect((await s.postWebhook("workflow_run", run)).status).toBe(202);
    const delays = await Promise.all(names.map(async (n) => (await deletedAt(n, 15_000)) - updatedAt));
    console.log(`exact time: run cancelled → runners deleted after ${delays.join(", ")} ms (grace ${GRACE_SECONDS} s)`);
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000);
      expect(delay).toBeLessThanOrEqual(GRACE_SECONDS * 1000 + 2000);
    }
  }, 30_000);

  it("reaps a completion that arrives after its grace ran out within 2 s of arriving", async () => {
    const name = "arc-runners-exact-runner-late1";
    await busyRunner(name, 6103);
    await started(name, 6103, 61030);
    const payload = workflowJobPayload("completed", {
      runner: name,
      repo: REPO,
      runId: 6103,
      runAttempt: 1,
      jobId: 61030,
      installationId: INSTALLATION,
      startedAt: iso(Date.now() - 180_000),
      completedAt: iso(Date.now() - 60_000),
      conclusion: "success",
    });
    const arrived = Date.now();
    expect((await s.postWebhook("workflow_job", payload)).status).toBe(202);
    const delay = (await deletedAt(name, 10_000)) - arrived;
    console.log(`exact time: late completion → deleted ${delay} ms after it arrived`);
    expect(delay).toBeLessThanOrEqual(2000);
  }, 30_000);

  it("never needed the cron: no sweep ran", () => {
    expect(s.logs().filter((l) => l.includes('"msg":"sweep"'))).toEqual([]);
  });
});
