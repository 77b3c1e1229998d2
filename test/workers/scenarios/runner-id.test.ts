// Identity by runner id, end to end in workerd against the stand-ins: GitHub's workflow_job.runner_id
// names the registration ARC's controller wrote on the object (status.runnerId) before any job, so a
// hung runner whose job fields the listener never wrote is still the job's runner, and a namesake of
// another id never is, once ids have been seen to match in the cluster.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { before, NS, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call, deliver, evictLedger, ledgerOf, settleAlarms } from "../support/worker.ts";
import { agentEnv, connect, REPO, runner as agentRunner } from "../support/fake-agent.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { waitFor } from "../support/wait-for.ts";
import { deletes, NOW, preconditionUid } from "../support/kube-calls.ts";

const OTHER_NS = "other-runners";
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
type S = Awaited<ReturnType<typeof stack>>;
const rows = async (s: S, name: string) => (await adminRunners(s.env)).runners.filter((r) => r.name === name);
const deepIds = async (s: S) => {
  const res = await call(s.env, new Request("https://arc-reaper.test/healthz/deep", { headers: bearer }));
  const body = (await res.json()) as { checks: { name: string; detail: string }[] };
  return body.checks.find((c) => c.name === "runner ids")?.detail;
};
const idsGauge = async (s: S) => {
  const text = await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: bearer }))).text();
  return /^arc_reaper_runner_ids_match\{cluster="default"\} (\d)$/m.exec(text)?.[1];
};

/** A job that ran on `runner` (registration `runnerId`) and completed ten minutes ago. */
async function completedJob(s: S, o: { runner: string; runnerId: number | null; runId: number; jobId: number }) {
  await s.jobStarted({ ...o, startedAt: before(NOW, 1200) });
  await s.jobCompleted({ ...o, startedAt: before(NOW, 1200), completedAt: before(NOW, 600), conclusion: "cancelled" });
}

describe("a hung runner whose job fields ARC never wrote", () => {
  it("is reaped by its runner id, once, by uid; an idle namesake of another id in another namespace is untouched", async () => {
    const s = await stack({ REAPER_NAMESPACES: `${NS},${OTHER_NS}` });
    const name = "arc-runners-rid01-runner-h1ng1";
    // The controller wrote status.runnerId; the listener's patch (workflowRunId, jobRepositoryName) was lost.
    const hung = await s.runner({ name, runnerId: 31_001 });
    const twin = await s.runner({ name, namespace: OTHER_NS, runnerId: 31_002 });
    expect(await deepIds(s)).toBe("ARC's runner ids not yet seen matching GitHub's: identity by name, run and uid only, another id rules nothing out");
    await completedJob(s, { runner: name, runnerId: 31_001, runId: 3100, jobId: 31_000 });

    await s.sweep(NOW);
    await s.sweep(NOW + 60_000);
    const sent = await deletes(s);
    expect(sent.map((d) => [d.path, preconditionUid(d)])).toEqual([
      [`/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/${name}`, hung.metadata.uid],
    ]);
    expect(await s.kube.get(OTHER_NS, name)).toMatchObject({ metadata: { uid: twin.metadata.uid } });
    expect(await rows(s, name)).toEqual([expect.objectContaining({ state: "reaped", code: "JobCompleted", jobId: 31000 })]);
    expect(await deepIds(s)).toMatch(/^ARC's runner ids match GitHub's \(seen .*\): a job's runner is named by its id$/);
    expect(await idsGauge(s)).toBe("1");
  });

  it("once ids are seen to match, a namesake of another id busy on the job's run is not its runner: never deleted on those facts", async () => {
    const s = await stack({ REAPER_NAMESPACES: `${NS},${OTHER_NS}` });
    // A first job establishes that ARC's ids are GitHub's in this cluster.
    const first = "arc-runners-rid02-runner-first";
    await s.runner({ name: first, runnerId: 32_001 });
    await completedJob(s, { runner: first, runnerId: 32_001, runId: 3200, jobId: 32_000 });
    await s.sweep(NOW);
    expect((await deletes(s)).length).toBe(1);

    // Then: the job's registration (32_010) is gone; an object of its name, re-registered as 32_011, is busy on the same run.
    const name = "arc-runners-rid02-runner-again";
    const other = await s.runner({ name, runnerId: 32_011, workflowRunId: 3201 });
    await completedJob(s, { runner: name, runnerId: 32_010, runId: 3201, jobId: 32_010 });
    await s.sweep(NOW + 60_000);
    await s.sweep(NOW + 120_000);
    expect((await deletes(s)).map((d) => preconditionUid(d))).not.toContain(other.metadata.uid);
    expect(await s.kube.get(NS, name)).toMatchObject({ metadata: { uid: other.metadata.uid } });
    expect(await rows(s, name)).toEqual([expect.objectContaining({ state: "gone", code: "Gone" })]);
  });
});

describe("where ARC's ids and GitHub's never match (another id space): no worse than before ids", () => {
  it("the runner busy on the job's run is reaped by its run as before; the ids are said not to match", async () => {
    const s = await stack();
    const name = "arc-runners-rid03-runner-busy1";
    const busy = await s.runner({ name, runnerId: 33_001, workflowRunId: 3300 });
    await completedJob(s, { runner: name, runnerId: 7, runId: 3300, jobId: 33_000 });
    await s.sweep(NOW);
    expect((await deletes(s)).map((d) => preconditionUid(d))).toEqual([busy.metadata.uid]);
    expect(await deepIds(s)).toMatch(/not yet seen matching/);
    expect(await idsGauge(s)).toBe("0");
  });

  it("a payload without a runner id (null) is judged by name, run and uid", async () => {
    const s = await stack();
    const name = "arc-runners-rid04-runner-nulls";
    const busy = await s.runner({ name, runnerId: 34_001, workflowRunId: 3400 });
    await completedJob(s, { runner: name, runnerId: null, runId: 3400, jobId: 34_000 });
    await s.sweep(NOW);
    expect((await deletes(s)).map((d) => preconditionUid(d))).toEqual([busy.metadata.uid]);
  });
});

describe("agent mode: the runner id travels in the agent's snapshot and view", () => {
  it("a hung runner of the agent's view without job fields is ordered deleted by its id; its idle namesake of another id is not", async () => {
    const env = agentEnv();
    const name = "arc-runners-rid05-runner-agent";
    const agent = await connect(env, {});
    agent.namespaces = [NS, OTHER_NS];
    agent.send({ type: "hello", version: "0.1.0", namespaces: [NS, OTHER_NS], dryRun: false });
    agent.send({
      type: "snapshot",
      id: "s1",
      part: 1,
      parts: 1,
      runners: [agentRunner(name, { runnerId: 35_001 }), agentRunner(name, { namespace: OTHER_NS, uid: "uid-twin", runnerId: 35_002 })],
    });
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    const res = await deliver(
      env,
      "workflow_job",
      workflowJobPayload("completed", {
        runner: name,
        runnerId: 35_001,
        repo: REPO,
        runId: 3500,
        runAttempt: 1,
        jobId: 35_000,
        installationId: 4242,
        startedAt: before(Date.now(), 900),
        completedAt: before(Date.now(), 600),
        conclusion: "cancelled",
      }),
    );
    expect(res.status).toBe(202);
    await settleAlarms(env);
    expect(agent.orders.map((o) => [o.namespace, o.name, o.uid])).toEqual([[NS, name, `uid-${name}`]]);
    agent.ws.close(1000, "done");
  });
});

describe("the runner-id migration", () => {
  it("a ledger of the release before it (schema 11), its row open, is read after it and reaped by the id a later delivery names", async () => {
    const s = await stack();
    const name = "arc-runners-rid06-runner-upgr1";
    const hung = await s.runner({ name, runnerId: 36_001 });
    await s.jobStarted({ runner: name, runnerId: 36_001, runId: 3600, jobId: 36_000, startedAt: before(NOW, 1200) });
    // Back to schema 11: no runner_id anywhere, the open row as release 11 kept it.
    await runInDurableObject(ledgerOf(s.env), (_i, state) => {
      for (const table of ["runners", "agent_view", "agent_snapshot"]) state.storage.sql.exec(`ALTER TABLE ${table} DROP COLUMN runner_id`);
      state.storage.sql.exec("ALTER TABLE unseen DROP COLUMN verdict_key"); // migration 14, run again too
      state.storage.sql.exec("ALTER TABLE runners DROP COLUMN check_code"); // and 15
      state.storage.sql.exec("UPDATE schema_version SET version = 11");
    });
    await evictLedger(s.env);
    await s.jobCompleted({
      runner: name,
      runnerId: 36_001,
      runId: 3600,
      jobId: 36_000,
      startedAt: before(NOW, 1200),
      completedAt: before(NOW, 600),
      conclusion: "success",
    });
    await s.sweep(NOW);
    const after = await runInDurableObject(ledgerOf(s.env), (_i, state) => ({
      version: state.storage.sql.exec<{ version: number }>("SELECT version FROM schema_version").one().version,
      rows: state.storage.sql.exec("SELECT runner, runner_id, state FROM runners").toArray(),
    }));
    expect(after).toEqual({ version: SCHEMA_VERSION, rows: [{ runner: name, runner_id: 36_001, state: "reaped" }] });
    expect((await deletes(s)).map((d) => preconditionUid(d))).toEqual([hung.metadata.uid]);
  });
});
