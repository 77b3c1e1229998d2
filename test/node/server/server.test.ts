// The in-cluster server (workerd with the config made from wrangler.toml, as the
// image runs it) against the stand-ins: a webhook's runner reaped at the grace
// end by the ledger's alarm, sweeps with no cron, a kill and restart on the
// same directory, and a bad setting that answers at start and deletes nothing.
// A real process must let real time pass for its alarm: grace and sweep periods
// are a few seconds, each wait bounded.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, workflowJobPayload } from "../../../scripts/lib/local-stack.ts";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { INSTALLATION, NAMESPACE, postSigned, REPO, serverWorld, type ServerWorld } from "./server-rig.ts";

let world: ServerWorld;
beforeAll(async () => {
  world = await serverWorld();
}, 120_000);
afterAll(async () => world?.close());

const iso = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().replace(/\.\d+Z$/, "Z");
let nextRun = 7000;

/** A busy runner in the cluster and its job's deliveries: in progress, then completed `completedMsAgo` ago. */
async function finishedJob(url: string, completedMsAgo: number): Promise<{ name: string; completedAt: number }> {
  const runId = nextRun++;
  const name = `arc-runners-srv-runner-${runId}`;
  await world.kube.seed(
    makeEphemeralRunner({
      namespace: NAMESPACE,
      scaleSet: "arc-runners",
      name,
      workflowRunId: runId,
      jobRepositoryName: REPO,
      creationTimestamp: iso(3_600_000),
    }),
  );
  const job = { runner: name, repo: REPO, runId, runAttempt: 1, jobId: runId * 10, installationId: INSTALLATION, startedAt: iso(120_000) };
  expect((await postSigned(world, url, "workflow_job", workflowJobPayload("in_progress", job))).status).toBeLessThan(300);
  const completedAt = iso(completedMsAgo);
  const done = await postSigned(world, url, "workflow_job", workflowJobPayload("completed", { ...job, completedAt, conclusion: "cancelled" }));
  expect(done.status).toBeLessThan(300);
  return { name, completedAt: Date.parse(completedAt) };
}

async function deletedAt(name: string): Promise<number | undefined> {
  const call = (await world.kube.calls()).find((c) => c.method === "DELETE" && c.path.endsWith(`/${name}`) && c.status < 300);
  return call ? Date.parse(call.time) : undefined;
}

async function runnerRows(url: string): Promise<{ name: string; state: string }[]> {
  const res = await fetch(`${url}/admin/runners`, { headers: { authorization: `Bearer ${world.adminToken}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { runners: { name: string; state: string }[] }).runners;
}

describe("the in-cluster server", () => {
  it("reaps a signed webhook's runner at the grace end, by the ledger's alarm", async () => {
    const server = await world.start({ settings: { REAPER_GRACE_SECONDS: "3" } });
    try {
      // Completed 1 s ago with a 3 s grace: due in 2 s.
      const { name, completedAt } = await finishedJob(server.url, 1_000);
      const at = await waitFor(`the DELETE of ${name}`, () => deletedAt(name), 15_000, 50);
      const delay = at - (completedAt + 3_000);
      expect(delay).toBeGreaterThanOrEqual(-1_000); // never before the grace end (the stand-in's clock is whole seconds)
      expect(delay).toBeLessThan(3_000);
      process.stdout.write(`in-cluster server: reap delay after the grace ${delay} ms\n`);
      expect((await runnerRows(server.url)).find((r) => r.name === name)?.state).toMatch(/reaped|finished/);
    } finally {
      await server.kill();
    }
  });

  it("sweeps with no cron: the ledger's alarm runs one every REAPER_SWEEP_EVERY_SECONDS", async () => {
    const server = await world.start({ settings: { REAPER_SWEEP_EVERY_SECONDS: "1" } });
    try {
      // The first probe wakes the ledger, which starts the clock; two sweeps show it re-arms itself.
      await waitFor("two sweeps", async () => (server.lines("sweep").length >= 2 ? true : undefined), 15_000, 100);
      const [first, second] = server.lines("sweep");
      expect(Date.parse(String(second?.at)) - Date.parse(String(first?.at))).toBeGreaterThanOrEqual(900);
    } finally {
      await server.kill();
    }
  });

  it("keeps every row across a kill and a restart on the same directory, and fires the pending alarm after", async () => {
    const first = await world.start({ settings: { REAPER_GRACE_SECONDS: "4" } });
    const { name } = await finishedJob(first.url, 0);
    const other = await finishedJob(first.url, 0);
    const before = await runnerRows(first.url);
    expect(before.map((r) => r.name)).toEqual(expect.arrayContaining([name, other.name]));
    await first.kill("SIGKILL");
    expect(await deletedAt(name)).toBeUndefined();
    const second = await world.start({ dataDir: first.dataDir, settings: { REAPER_GRACE_SECONDS: "4" } });
    try {
      expect((await runnerRows(second.url)).map((r) => r.name).sort()).toEqual(before.map((r) => r.name).sort());
      // Nothing calls the ledger after the restart: the alarm set before the kill fires by itself.
      await waitFor("the pending alarm's DELETEs", async () => ((await deletedAt(name)) && (await deletedAt(other.name)) ? true : undefined), 20_000, 100);
    } finally {
      await second.kill();
    }
  });

  it("answers a missing or bad setting at start, naming it, and deletes nothing", async () => {
    const server = await world.start({ settings: { KUBE_TOKEN: undefined, REAPER_GRACE_SECONDS: "soon", REAPER_SWEEP_EVERY_SECONDS: "1" } });
    try {
      const name = `arc-runners-srv-idle-${nextRun++}`;
      await world.kube.seed(makeEphemeralRunner({ namespace: NAMESPACE, scaleSet: "arc-runners", name, workflowRunId: 1, jobRepositoryName: REPO }));
      const res = await fetch(`${server.url}/healthz`, { headers: { authorization: `Bearer ${world.adminToken}` } });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { errors: string[] }).errors).toEqual(["KUBE_TOKEN is missing", "REAPER_GRACE_SECONDS must be a whole number >= 0"]);
      expect(server.lines("healthz: arc-reaper is misconfigured").length).toBeGreaterThan(0);
      expect((await postSigned(world, server.url, "ping", { zen: "hi", hook_id: 1 })).status).toBe(503);
      // The sweep clock still ticks, and every pass is skipped: no call reaches the cluster.
      await waitFor("a skipped sweep", async () => (server.lines("sweep skipped: arc-reaper is misconfigured").length > 0 ? true : undefined), 10_000, 100);
      expect((await world.kube.calls()).filter((c) => c.method === "DELETE" && c.path.endsWith(`/${name}`))).toEqual([]);
    } finally {
      await server.kill();
    }
  });

  it("reaches the API server with the ServiceAccount's token file, read again at each request", async () => {
    const server = await world.start({ settings: { KUBE_TOKEN: "service-account-token-file" } });
    const namespaceCheck = async () => {
      const res = await fetch(`${server.url}/healthz/deep`, { headers: { authorization: `Bearer ${world.adminToken}` } });
      return ((await res.json()) as { checks: { name: string; ok: boolean }[] }).checks.find((c) => c.name === `namespace ${NAMESPACE}`)?.ok;
    };
    try {
      expect(await namespaceCheck()).toBe(true);
      world.writeServiceAccountToken("a-token-the-api-server-refuses");
      expect(await namespaceCheck()).toBe(false);
      world.writeServiceAccountToken(world.kubeToken);
      expect(await namespaceCheck()).toBe(true);
      // The token is the file's, never the marker: every call the stand-in saw came as arc-reaper's ServiceAccount or was refused.
      const users = new Set((await world.kube.calls()).map((c) => c.user));
      expect([...users].every((u) => u === null || u === "system:serviceaccount:arc-reaper:arc-reaper" || u === "admin")).toBe(true);
    } finally {
      await server.kill();
    }
  });
});
