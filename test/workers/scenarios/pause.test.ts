// The pause switch: POST /admin/pause keeps every condemned runner (the alarm
// and the sweep still decide, and say "paused: would delete"), in the ledger so
// it outlives any isolate; POST /admin/resume makes them due now and the alarm
// reaps them at once.
import { describe, expect, it } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { before, NS, stack } from "../support/stack.ts";
import { waitFor } from "../support/wait-for.ts";
import { ADMIN_TOKEN, adminRunners, alarmAt, call, evictLedger, runAlarm, settleAlarms } from "../support/worker.ts";

const BASE = "https://arc-reaper.test";
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const post = (env: WorkerEnv, path: string) => call(env, new Request(`${BASE}${path}`, { method: "POST", headers: bearer }));
const get = (env: WorkerEnv, path: string) => call(env, new Request(`${BASE}${path}`, { headers: bearer }));

describe("pause and resume", () => {
  it("paused: neither the alarm nor a sweep deletes a completed job's runner, across an eviction; resume: the alarm deletes it", async () => {
    const s = await stack();
    const paused = await post(s.env, "/admin/pause");
    expect(paused.status).toBe(200);
    expect(await paused.json()).toEqual({ paused: { since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), by: "bearer" } });

    const er = await s.runner({ name: "arc-runners-abcde-runner-pz", workflowRunId: 901 });
    const now = Date.now();
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 901,
      jobId: 9010,
      startedAt: before(now, 900),
      completedAt: before(now, 600),
      conclusion: "cancelled",
    });
    await settleAlarms(s.env); // due at once: past the grace
    const stillThere = async () => (await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp;
    expect(await stillThere()).toBeUndefined();
    const row = async () => (await adminRunners(s.env)).runners[0]!;
    expect(await row()).toMatchObject({ state: "finished", code: "Paused" });

    // A fresh instance of the ledger still knows it is paused.
    await evictLedger(s.env);
    await s.sweep(Date.now());
    expect(await stillThere()).toBeUndefined();
    expect(await row()).toMatchObject({ state: "finished", code: "Paused" });
    const metrics = await (await call(s.env, new Request(`${BASE}/metrics`, { headers: bearer }))).text();
    expect(metrics).toMatch(/^arc_reaper_paused 1$/m);
    const page = await (await get(s.env, "/admin")).text();
    expect(page).toContain('id="paused"');
    expect(page).toContain("paused: nothing is deleted · grace");
    expect(page).toContain('<form method="post" action="/admin/resume">');
    expect((await s.kube.calls()).filter((c) => c.method === "DELETE")).toEqual([]);

    const resumed = await post(s.env, "/admin/resume");
    expect(resumed.status).toBe(200);
    expect(await resumed.json()).toEqual({ paused: null, wasPaused: true, madeDue: 1 });
    expect(await alarmAt(s.env)).toBeLessThanOrEqual(Date.now()); // due now, not at the next sweep
    await settleAlarms(s.env);
    expect(await stillThere()).toEqual(expect.any(String));
    expect(await row()).toMatchObject({ state: "reaped", code: "JobCompleted" });
    expect(await (await get(s.env, "/admin")).text()).toContain('<form method="post" action="/admin/pause">');
  });

  it("answers a pause only once a run already deleting has finished: after the answer nothing more is deleted", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-abcde-runner-pr", workflowRunId: 902 });
    // The alarm's delete takes 1.5 s: the pause arrives while it is in flight.
    await s.kube.addFault({ match: { method: "DELETE", pathIncludes: er.metadata.name }, delayMs: 1500, times: 1 });
    const now = Date.now();
    await s.jobCompleted({
      runner: er.metadata.name,
      runId: 902,
      jobId: 9020,
      startedAt: before(now, 900),
      completedAt: before(now, 600),
      conclusion: "cancelled",
    });
    const alarm = runAlarm(s.env);
    await waitFor("the alarm's delete to reach the cluster", async () => (await s.kube.faults()).length === 0); // its one-time delay is taken
    expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined(); // the delete is still in flight
    expect((await post(s.env, "/admin/pause")).status).toBe(200);
    // The run that read the switch before it was set finished its delete before the pause answered.
    expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped" });
    await alarm;
  });

  it("a second pause keeps the first one's time; a resume when not paused changes nothing", async () => {
    const s = await stack();
    const first = (await (await post(s.env, "/admin/pause")).json()) as { paused: { since: string } };
    const second = (await (await post(s.env, "/admin/pause")).json()) as { paused: { since: string } };
    expect(second.paused.since).toBe(first.paused.since);
    expect(await (await post(s.env, "/admin/resume")).json()).toEqual({ paused: null, wasPaused: true, madeDue: 0 });
    expect(await (await post(s.env, "/admin/resume")).json()).toEqual({ paused: null, wasPaused: false, madeDue: 0 });
  });
});
