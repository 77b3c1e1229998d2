// Issue 24, item 3: with REAPER_FINISH_STUCK=true, a deletion ARC holds (stuck)
// has ARC's finalizers removed by a JSON patch that tests the uid and the
// finalizers, only once GitHub says its job completed (read at that moment);
// never while GitHub says it runs. A 403 (the Role overlay not applied) is shown
// on the row and in /healthz/deep, and not retried in a loop. On each ARC version's CRD.
import { describe, expect, inject, it } from "vitest";
import { ARC_VERSIONS_HOLDING_DELETIONS, jobStartedStatus, makeEphemeralRunner, type ArcVersion } from "../../standins/kube/control.ts";
import { before, NS, REPO, stack, type Stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call } from "../support/worker.ts";

const NOW = Date.now() + 86_400_000;
const TOKEN = "reaper-sa-token-from-the-secret";
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function heldRunner(s: Stack, version: ArcVersion, name: string, runId: number, jobId: number): Promise<void> {
  await s.kube.seed(
    makeEphemeralRunner({
      namespace: NS,
      scaleSet: "arc-runners",
      name,
      phase: "Running",
      arcVersion: version,
      creationTimestamp: before(NOW, 86_400).replace(/\.\d{3}Z$/, "Z"),
    }),
  );
  await s.kube.patchStatus(NS, name, jobStartedStatus({ workflowRunId: runId, jobRepositoryName: REPO }));
  await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, status: "in_progress", runner_name: name, started_at: before(NOW, 900) });
  expect(
    (await s.jobCompleted({ runner: name, runId, jobId, startedAt: before(NOW, 900), completedAt: before(NOW, 600), conclusion: "cancelled" })).status,
  ).toBe(202);
}

const calls = async (s: Stack, method: string): Promise<string[]> =>
  (await s.kube.calls()).filter((c) => c.method === method && !c.path.endsWith("/status")).map((c) => `${c.status} ${c.path.split("/").pop() ?? ""}`);
const metrics = async (s: Stack): Promise<string> => (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: bearer }))).text();
const rowOf = async (s: Stack, name: string) => (await adminRunners(s.env)).runners.find((r) => r["name"] === name);

// ARC 0.15 holds no deletion (its finalizer goes first, #4664): there is nothing to finish (arc-versions.test.ts).
describe.each(ARC_VERSIONS_HOLDING_DELETIONS)("ARC %s: held deletions finished", (version) => {
  it("never without REAPER_FINISH_STUCK; with it, never while GitHub says the job runs, then once GitHub says completed: ARC's finalizers removed, the row reaped with how long ARC held it", async () => {
    const off = await stack({ REAPER_STUCK_SECONDS: "60" }, { arcVersion: version, autoFinalize: true });
    await off.kube.setJobsStillRunning(true);
    await heldRunner(off, version, "held-off", 710, 7100);
    await off.github.putJob({
      repo: REPO,
      id: 7100,
      run_id: 710,
      status: "completed",
      conclusion: "cancelled",
      runner_name: "held-off",
      started_at: before(NOW, 900),
      completed_at: before(NOW, 600),
    });
    for (const t of [0, 61_000, 122_000]) await off.sweep(NOW + t);
    expect(await calls(off, "PATCH")).toEqual([]);
    expect(await rowOf(off, "held-off")).toMatchObject({ state: "stuck" });

    const s = await stack({ REAPER_STUCK_SECONDS: "60", REAPER_FINISH_STUCK: "true" }, { arcVersion: version, autoFinalize: true });
    await s.kube.setJobsStillRunning(true);
    await heldRunner(s, version, "held", 711, 7110);
    await s.sweep(NOW);
    expect(await calls(s, "DELETE")).toEqual(["200 held"]);
    await s.sweep(NOW + 61_000);
    expect(await calls(s, "PATCH")).toEqual([]);
    expect(await rowOf(s, "held")).toMatchObject({ state: "stuck", code: "StillRunning" });

    await s.github.putJob({
      repo: REPO,
      id: 7110,
      run_id: 711,
      status: "completed",
      conclusion: "cancelled",
      runner_name: "held",
      started_at: before(NOW, 900),
      completed_at: before(NOW, 30),
    });
    await s.sweep(NOW + 90_000); // not due yet: no look, no patch
    expect(await calls(s, "PATCH")).toEqual([]);
    await s.sweep(NOW + 122_000);
    expect(await calls(s, "PATCH")).toEqual(["200 held"]);
    expect(await s.kube.get(NS, "held")).toBeUndefined();
    expect(await rowOf(s, "held")).toMatchObject({ state: "reaped", code: "Finished" });
    expect(await metrics(s)).toContain('arc_reaper_finishes_total{outcome="finished"} 1');
    await s.sweep(NOW + 200_000);
    expect(await calls(s, "PATCH")).toHaveLength(1);
  });

  it("never while paused: the held deletion stays stuck, saying so, until resumed", async () => {
    const s = await stack({ REAPER_STUCK_SECONDS: "60", REAPER_FINISH_STUCK: "true" }, { arcVersion: version, autoFinalize: true });
    await s.kube.setJobsStillRunning(true);
    await heldRunner(s, version, "held-paused", 713, 7130);
    await s.sweep(NOW);
    expect(await calls(s, "DELETE")).toEqual(["200 held-paused"]);
    await s.github.putJob({
      repo: REPO,
      id: 7130,
      run_id: 713,
      status: "completed",
      conclusion: "cancelled",
      runner_name: "held-paused",
      started_at: before(NOW, 900),
      completed_at: before(NOW, 30),
    });
    expect((await call(s.env, new Request("https://arc-reaper.test/admin/pause", { method: "POST", headers: bearer }))).status).toBe(200);
    await s.sweep(NOW + 61_000);
    expect(await calls(s, "PATCH")).toEqual([]);
    expect(await rowOf(s, "held-paused")).toMatchObject({ state: "stuck", code: "Paused" });
    expect((await call(s.env, new Request("https://arc-reaper.test/admin/resume", { method: "POST", headers: bearer }))).status).toBe(200);
    await s.sweep(NOW + 122_000);
    expect(await calls(s, "PATCH")).toEqual(["200 held-paused"]);
  });

  it("a 403 on the patch (the overlay not applied) is shown on the row and in /healthz/deep with the overlay's command, and not retried in a loop", async () => {
    const s = await stack({ REAPER_STUCK_SECONDS: "60", REAPER_FINISH_STUCK: "true" }, { arcVersion: version, autoFinalize: true });
    const rbac = inject("reaperRbac"); // infra/kubernetes's default Role: get, list, delete
    await s.kube.addServiceAccount({ ...rbac.serviceAccount, token: TOKEN, bindings: rbac.bindings });
    s.env.KUBE_TOKEN = TOKEN;
    await s.kube.setJobsStillRunning(true);
    await heldRunner(s, version, "held-403", 712, 7120);
    await s.github.putJob({
      repo: REPO,
      id: 7120,
      run_id: 712,
      status: "completed",
      conclusion: "cancelled",
      runner_name: "held-403",
      started_at: before(NOW, 900),
      completed_at: before(NOW, 600),
    });
    await s.sweep(NOW);
    await s.sweep(NOW + 61_000);
    for (const t of [70_000, 80_000, 100_000]) await s.sweep(NOW + t);
    expect(await calls(s, "PATCH")).toEqual(["403 held-403"]);
    expect(await rowOf(s, "held-403")).toMatchObject({ state: "stuck", code: "FinishRefused" });
    expect(await metrics(s)).toContain('arc_reaper_finishes_total{outcome="refused"} 1');
    const health = (await (await call(s.env, new Request("https://arc-reaper.test/healthz/deep", { headers: bearer }))).json()) as {
      ok: boolean;
      checks: { name: string; ok: boolean; detail: string }[];
    };
    expect(health.ok).toBe(false);
    expect(health.checks.find((c) => c.name === "finish stuck")).toEqual({
      name: "finish stuck",
      ok: false,
      detail: expect.stringMatching(
        /^removing ARC's finalizers was refused for 1 held deletion \(default\/arc-runners\/held-403: HTTP 403: .*\): .*kubectl apply -k infra\/kubernetes\/finish-stuck/,
      ),
    });
    expect(await s.kube.get(NS, "held-403")).toBeDefined();
  });
});
