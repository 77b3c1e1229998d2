// One reconcile: the alarm and the sweep judge one view the same way, and every
// row they touch gets its next time. Each case here went wrong before the alarm
// and the sweep shared one step.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SETTLE_MS } from "../../../src/model/policy.ts";
import { agentEnv, completed, connect, runner as agentRunner, untilLedger } from "../support/fake-agent.ts";
import { waitFor } from "../support/wait-for.ts";
import { before, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners, alarmAt, configureLedger, ledgerOf, runAlarm, settleAlarms } from "../support/worker.ts";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { deletes } from "../support/kube-calls.ts";

const OTHER = "other-runners";
type S = Awaited<ReturnType<typeof stack>>;
const readsOf = async (s: S, name: string) => (await s.kube.calls()).filter((c) => c.method === "GET" && c.path.endsWith(`/ephemeralrunners/${name}`));
const githubRunnerCalls = async (s: S) => (await s.github.calls()).filter((c) => c.path !== "/app/hook/deliveries");

/** Open and unseen rows whose due time lies before `now`: after any alarm or sweep there are none. */
async function overdue(env: WorkerEnv, now: number): Promise<number> {
  await configureLedger(env);
  return runInDurableObject(ledgerOf(env), (_i, state) => {
    const sql = state.storage.sql;
    const runners = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runners WHERE state IN ('running','finished') AND due_at < ?", now).one().n;
    const unseen = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM unseen WHERE due_at < ?", now).one().n;
    return runners + unseen;
  });
}

/**
 * Moves the unseen rows' first sight `ms` into the past, and the alarm with them: a pass's now is never
 * before the real clock (one clock per pass), so a sweep cannot be made to have seen a runner earlier.
 */
async function ageUnseen(env: WorkerEnv, ms: number): Promise<void> {
  await configureLedger(env);
  await runInDurableObject(ledgerOf(env), async (_i, state) => {
    const sql = state.storage.sql;
    sql.exec("UPDATE unseen SET first_seen = first_seen - ?, due_at = due_at - ?", ms, ms);
    const due = sql.exec<{ due: number | null }>("SELECT MIN(due_at) AS due FROM unseen").one().due;
    if (due !== null) await state.storage.setAlarm(due);
  });
}

/** The unseen rows (busy runners no webhook explained yet) of this env's ledger. */
async function unseenRows(env: WorkerEnv): Promise<{ name: string; uid: string; due_at: number | null }[]> {
  await configureLedger(env);
  return runInDurableObject(ledgerOf(env), (_i, state) => [
    ...state.storage.sql.exec<{ name: string; uid: string; due_at: number | null }>("SELECT name, uid, due_at FROM unseen ORDER BY name"),
  ]);
}

describe("one view: a name in two watched namespaces", () => {
  const twins = async () => {
    const s = await stack({ REAPER_NAMESPACES: `${NS},${OTHER}` });
    const name = "arc-runners-twin1-runner-tw";
    const busy = await s.runner({ name, namespace: OTHER, workflowRunId: 500 });
    const idle = await s.runner({ name, namespace: NS });
    const now = Date.now();
    await s.jobStarted({ runner: name, runId: 500, jobId: 5000, startedAt: before(now, 900) });
    return { s, name, busy, idle, now };
  };

  it("the alarm reaps the twin busy on the facts' run and never the idle twin", async () => {
    const { s, name, busy, now } = await twins();
    await s.jobCompleted({ runner: name, runId: 500, jobId: 5000, startedAt: before(now, 900), completedAt: before(now, 600), conclusion: "cancelled" });
    await settleAlarms(s.env);
    expect((await deletes(s)).map((c) => `${c.path} ${c.status}`)).toEqual([
      `/apis/actions.github.com/v1alpha1/namespaces/${OTHER}/ephemeralrunners/${name} 200`,
    ]);
    expect((await s.kube.get(NS, name))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await s.kube.get(OTHER, name))?.metadata.uid).toBe(busy.metadata.uid);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ name, state: "reaped", namespace: OTHER, uid: busy.metadata.uid });
    expect(await overdue(s.env, Date.now())).toBe(0);
  });

  it("the sweep judges the same twins the same way", async () => {
    const { s, name, now } = await twins();
    await s.jobCompleted({ runner: name, runId: 500, jobId: 5000, startedAt: before(now, 900), completedAt: before(now, 600), conclusion: "cancelled" });
    await s.sweep(now + 1000);
    expect((await deletes(s)).map((c) => c.path)).toEqual([`/apis/actions.github.com/v1alpha1/namespaces/${OTHER}/ephemeralrunners/${name}`]);
    expect((await s.kube.get(NS, name))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it("two twins that carry no run are neither the facts' runner: both kept, the facts close as gone, and it says why", async () => {
    const s = await stack({ REAPER_NAMESPACES: `${NS},${OTHER}` });
    const name = "arc-runners-twin2-runner-tw";
    await s.runner({ name, namespace: OTHER });
    await s.runner({ name, namespace: NS });
    const now = Date.now();
    await s.jobCompleted({ runner: name, runId: 501, jobId: 5010, startedAt: before(now, 900), completedAt: before(now, 600), conclusion: "cancelled" });
    await settleAlarms(s.env);
    await s.sweep(now + 1000);
    expect(await deletes(s)).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({
      state: "gone",
      code: "Gone",
    });
  });
});

describe("unseen runners end: no alarm loops, no GitHub call for what a webhook explained", () => {
  it("a busy runner that vanishes before its wait ends costs at most 3 reads in its whole life, and leaves no alarm", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-gone1-runner-un", workflowRunId: 610 });
    // Seen busy by a sweep whose wait for a webhook has already ended: due at once.
    await s.sweep(Date.now());
    await ageUnseen(s.env, SETTLE_MS + 1000);
    expect(await unseenRows(s.env)).toEqual([{ name: er.metadata.name, uid: er.metadata.uid, due_at: expect.any(Number) }]);
    await s.kube.remove(NS, er.metadata.name);
    await settleAlarms(s.env, 3000);
    await ledgerOf(s.env).alarmAt(Date.now() + 300); // and an alarm's pass a little later, on the ledger's clock
    await settleAlarms(s.env, 1000);
    expect((await readsOf(s, er.metadata.name)).length).toBeLessThanOrEqual(3);
    expect(await githubRunnerCalls(s)).toEqual([]);
    expect(await alarmAt(s.env)).toBeNull();
    expect(await overdue(s.env, Date.now())).toBe(0);
    expect(await unseenRows(s.env)).toEqual([]); // the row ended with the runner
  });

  it("a runner seen busy just before its in_progress webhook: the webhook ends the unseen row, GitHub is never asked", async () => {
    const s = await stack();
    const er = await s.runner({ name: "arc-runners-expl1-runner-un", workflowRunId: 611 });
    const t = Date.now();
    await s.sweep(t);
    await ageUnseen(s.env, SETTLE_MS - 1500); // its wait ends 1.5 s from now
    expect((await unseenRows(s.env)).map((u) => u.name)).toEqual([er.metadata.name]);
    await s.jobStarted({ runner: er.metadata.name, runId: 611, jobId: 6110, startedAt: before(t, 5) });
    await ledgerOf(s.env).alarmAt(Date.now() + 2000); // after its wait ended, on the ledger's clock
    await settleAlarms(s.env);
    await s.sweep(t + SETTLE_MS * 2);
    expect(await githubRunnerCalls(s)).toEqual([]);
    expect((await adminRunners(s.env)).runners).toEqual([expect.objectContaining({ name: er.metadata.name, state: "running" })]);
    expect(await unseenRows(s.env)).toEqual([]); // the webhook ended it
  });
});

describe("the deletion cap is a sliding 60 s window", () => {
  it("no 60 s span deletes more than the cap, across a minute boundary", async () => {
    const s = await stack({ REAPER_MAX_DELETIONS_PER_MINUTE: "2" });
    const boundary = Math.ceil((Date.now() + 120_000) / 60_000) * 60_000;
    for (let i = 0; i < 4; i++) {
      const name = `arc-runners-capw${i}-runner-cp`;
      await s.runner({ name, workflowRunId: 620 + i });
      await s.jobCompleted({
        runner: name,
        runId: 620 + i,
        jobId: 6200 + i,
        startedAt: before(boundary, 7200),
        completedAt: before(boundary, 310),
        conclusion: "success",
      }); // due after the real clock: only these sweeps act
    }
    await s.sweep(boundary - 500);
    expect(await deletes(s)).toHaveLength(2);
    await s.sweep(boundary + 500); // a new calendar minute, the same 60 s
    expect(await deletes(s)).toHaveLength(2);
    const held = (await adminRunners(s.env, "?state=finished")).runners;
    expect(held).toHaveLength(2);
    for (const r of held) expect(r).toMatchObject({ code: "Cap" }); // the cap of 2: the 2 deletes above
    await s.sweep(boundary + 59_600); // the first two left the window
    expect(await deletes(s)).toHaveLength(4);
  });
});

describe("agent mode: a stale view never closes a live runner as gone", () => {
  it("a runner missing from a view older than its facts is kept; the next snapshot shows it and it is reaped", async () => {
    const env = agentEnv();
    const agent = await connect(env);
    const name = "arc-runners-stale-runner-ag";
    // The snapshot was taken before the runner existed (a relist after a 410, a slow watch).
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] });
    await untilLedger(env, "the empty snapshot", (v) => v.complete);
    await completed(env, name, 630);
    await settleAlarms(env);
    expect(agent.orders).toEqual([]);
    const row = (await adminRunners(env)).runners[0];
    expect(row).toMatchObject({ name, state: "finished", code: "CannotJudge" });
    // The relist completes: the runner is there, busy on the run; held rows are due at once.
    agent.send({ type: "snapshot", id: "s2", part: 1, parts: 1, runners: [agentRunner(name, { workflowRunId: 630, jobRepositoryName: REPO })] });
    await untilLedger(env, "the snapshot with the runner", (v) => v.runners.some((r) => r.name === name));
    await settleAlarms(env);
    expect(agent.orders.map((o) => o.name)).toEqual([name]);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ name, state: "reaped" });
  });

  it("a read by name through the agent is fresh evidence: a runner the stale view lacks and the cluster has not closes as gone", async () => {
    const env = agentEnv();
    const agent = await connect(env);
    agent.readAnswer = () => null; // the API server answers 404
    const name = "arc-runners-read0-runner-ag";
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] });
    await untilLedger(env, "the empty snapshot", (v) => v.complete);
    await completed(env, name, 640);
    await settleAlarms(env);
    expect(agent.reads).toEqual([`${NS}/${name}`]);
    expect(agent.orders).toEqual([]);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ name, state: "gone" });
  });

  it("a read by name that finds the runner puts it in the view: it is reaped at once, without a new snapshot", async () => {
    const env = agentEnv();
    const agent = await connect(env);
    const name = "arc-runners-read1-runner-ag";
    const r = agentRunner(name, { workflowRunId: 641, jobRepositoryName: REPO });
    agent.readAnswer = (ns, n) => (ns === NS && n === name ? r : null);
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] });
    await untilLedger(env, "the empty snapshot", (v) => v.complete);
    await completed(env, name, 641);
    await settleAlarms(env);
    expect(agent.reads).toEqual([`${NS}/${name}`]);
    expect(agent.orders.map((o) => `${o.name} ${o.uid}`)).toEqual([`${name} ${r.uid}`]);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ name, state: "reaped" });
  });

  it("the watch's remove event is fresh evidence: the runner closes as gone without a new snapshot", async () => {
    const env = agentEnv();
    const agent = await connect(env);
    const name = "arc-runners-remov-runner-ag";
    const r = agentRunner(name, { workflowRunId: 631, jobRepositoryName: REPO });
    agent.answer = undefined; // orders go unanswered
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] });
    await untilLedger(env, "the empty snapshot", (v) => v.complete);
    await completed(env, name, 631);
    agent.send({ type: "upsert", runner: r });
    agent.send({ type: "remove", namespace: NS, name, uid: r.uid });
    await untilLedger(env, "the watch's remove", (v) => v.removed.includes(r.uid));
    await settleAlarms(env);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ name, state: "gone" });
  });

  it("while the agent is away, an unseen runner is held, not looped on: a handful of alarm runs at most", async () => {
    const env = agentEnv();
    const agent = await connect(env);
    const name = "arc-runners-away1-runner-ag";
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [agentRunner(name, { workflowRunId: 632, jobRepositoryName: REPO })] });
    await untilLedger(env, "the snapshot with the runner", (v) => v.runners.some((r) => r.name === name));
    const { runScheduled } = await import("../support/worker.ts");
    await runScheduled(env, Date.now());
    await ageUnseen(env, SETTLE_MS + 1000);
    expect((await unseenRows(env)).map((u) => u.name)).toEqual([name]);
    agent.ws.close(1000, "going away");
    await agent.closed;
    await waitFor("the ledger to see the agent go", async () => !(await ledgerOf(env).agentStatus()).connected);
    let runs = 0;
    for (let i = 0; i < 20 && (await runAlarm(env)); i++) runs++;
    expect(runs).toBeLessThanOrEqual(2);
    expect(await alarmAt(env)).toBeNull();
    expect(await unseenRows(env)).toEqual([{ name, uid: `uid-${name}`, due_at: null }]); // held while the agent is away, not dropped
  });
});
