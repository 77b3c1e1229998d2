// Freshness from the agent, per namespace (issue 22): absence dates from when
// the agent's list or watch of a namespace was last whole (its snapshot's and
// bookmarks' word), never from when a message arrived; a namespace it cannot
// read holds its runners, named on /metrics, /healthz/deep and /admin. A job
// reaped in one cluster costs no call to another, whatever the number of clusters.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AGENT_WHOLE_MARGIN_MS } from "../../../src/cluster/agent-cluster.ts";
import { AgentViewTable, REMOVED_KEPT_MS } from "../../../src/agent-link/agent-view-table.ts";
import { Sql } from "../../../src/ledger/sql.ts";
import { clusterToken } from "../../../src/http/agent-token.ts";
import { AGENT_TOKEN, agentEnv, connect, REPO, runner, type Agent } from "../support/fake-agent.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { before, NS } from "../support/stack.ts";
import { waitFor } from "../support/wait-for.ts";
import { adminRunners, call, deliver, ledgerOf, report, settleAlarms } from "../support/worker.ts";

const SCALE_SET = "arc-runners-abcde";
const NS2 = "team-b-runners";
const bearer = { authorization: "Bearer test-admin-token-0123456789abcdef" };

type Env = ReturnType<typeof agentEnv>;
const rowOf = async (env: Env, name: string) => (await adminRunners(env)).runners.find((r) => r.name === name);

async function jobCompleted(env: Env, name: string, runId: number, completedSecondsAgo: number): Promise<void> {
  const now = Date.now();
  const payload = workflowJobPayload("completed", {
    runner: name,
    repo: REPO,
    runId,
    runAttempt: 1,
    jobId: runId * 10,
    installationId: 4242,
    startedAt: before(now, completedSecondsAgo + 300),
    completedAt: before(now, completedSecondsAgo),
    conclusion: "cancelled",
  });
  expect((await deliver(env, "workflow_job", payload)).status).toBe(202);
}

describe("cluster calls per webhook-reaped runner", () => {
  // Each cluster holds one busy runner; each job completes now and is reaped at its grace end (300 s), by
  // which time every agent has said (as a watch bookmark makes it say) that its namespace is whole.
  async function reap(clusters: string[]): Promise<{ calls: number; perRunner: number; toOthers: number }> {
    const env = agentEnv({ AGENT_CLUSTERS: clusters.join(",") });
    const agents = new Map<string, Agent>();
    const lives = clusters.map((cluster, i) => ({ cluster, name: `${SCALE_SET}-runner-${cluster}-${i}`, runId: 7100 + i }));
    for (const life of lives) {
      const agent = await connect(env, { cluster: life.cluster, token: await clusterToken(AGENT_TOKEN, life.cluster) });
      const object = runner(life.name, { uid: `uid-${life.cluster}`, workflowRunId: life.runId, jobRepositoryName: REPO });
      agent.readAnswer = (ns, name) => (ns === NS && name === life.name ? object : null);
      agent.send({ type: "snapshot", id: `${life.cluster}-s1`, part: 1, parts: 1, runners: [object, runner(`${SCALE_SET}-runner-${life.cluster}-idle`)] });
      agents.set(life.cluster, agent);
    }
    for (const life of lives) await waitFor(`cluster ${life.cluster}'s whole view`, async () => (await ledgerOf(env).agentStatus(life.cluster)).complete);
    for (const life of lives) await jobCompleted(env, life.name, life.runId, 0);
    // The facts are in; a bookmark later than them by more than the margin, each agent's namespace is whole as of then.
    // The facts are dated back by the margin instead of the test waiting it out.
    await runInDurableObject(ledgerOf(env), (_i, state) => {
      state.storage.sql.exec("UPDATE runners SET fact_at = fact_at - ? WHERE fact_at IS NOT NULL", AGENT_WHOLE_MARGIN_MS + 300);
    });
    const bookmarkAt = Date.now();
    for (const agent of agents.values()) agent.fresh();
    for (const life of lives)
      await waitFor(
        `cluster ${life.cluster}'s bookmark`,
        async () => Date.parse((await ledgerOf(env).agentStatus(life.cluster)).wholeAt[NS] ?? "") >= bookmarkAt,
      );
    const t = Date.now();
    await ledgerOf(env).alarmAt(t + 301_000);
    // The watch then sees each deleted runner leave (the deletion's own look then needs no call).
    for (const life of lives) agents.get(life.cluster)!.send({ type: "remove", namespace: NS, name: life.name, uid: `uid-${life.cluster}` });
    for (const life of lives)
      await waitFor(`cluster ${life.cluster}'s view without ${life.name}`, async () => (await ledgerOf(env).agentStatus(life.cluster)).runners === 1);
    for (const life of lives) expect(await rowOf(env, life.name), life.name).toMatchObject({ state: "reaped", cluster: life.cluster });
    let calls = 0;
    let toOthers = 0;
    for (const [cluster, agent] of agents) {
      calls += agent.orders.length + agent.reads.length;
      // What an agent was asked about runners of other clusters.
      const mine = lives.find((l) => l.cluster === cluster)!.name;
      toOthers += agent.orders.filter((o) => o.name !== mine).length + agent.reads.filter((r) => r !== `${NS}/${mine}`).length;
      expect(agent.orders.map((o) => o.name)).toEqual([mine]);
      agent.ws.close(1000, "done");
    }
    return { calls, perRunner: calls / lives.length, toOthers };
  }

  it("is at most 2 with 1, 2 and 3 clusters, and none of them to another cluster's agent", { timeout: 60_000 }, async () => {
    const figures: string[] = [];
    for (const n of [1, 2, 3]) {
      const clusters = ["eu-west", "us-east", "ap-south"].slice(0, n);
      const r = await reap(clusters);
      figures.push(
        `${n} cluster${n === 1 ? "" : "s"}: ${r.calls} calls for ${n} reaped runner${n === 1 ? "" : "s"} (${r.perRunner} per runner, ${r.toOthers} to another cluster)`,
      );
      expect(r.perRunner).toBeLessThanOrEqual(2);
      expect(r.toOthers).toBe(0);
    }
    await report(`[agent-freshness] cluster calls per webhook-reaped runner: ${figures.join("; ")}`);
  });
});

describe("absence dates from each namespace's own freshness", () => {
  it("a snapshot that re-sends an old cache is not fresh: a runner created there since is read, not closed as gone", async () => {
    const env = agentEnv();
    const name = `${SCALE_SET}-runner-since1`;
    const agent = await connect(env);
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] });
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    const object = runner(name, { uid: "uid-since1", workflowRunId: 7201, jobRepositoryName: REPO });
    agent.readAnswer = (ns, n) => (ns === NS && n === name ? object : null);
    // Facts two minutes old (a job that ran on a runner the stalled watch never saw) ...
    await jobCompleted(env, name, 7201, 0);
    await runInDurableObject(ledgerOf(env), (_i, state) => state.storage.sql.exec("UPDATE runners SET fact_at = fact_at - 120000 WHERE runner = ?", name));
    // ... then the agent relists another namespace and re-sends its whole cache, this one last whole 10 minutes ago.
    agent.send({ type: "snapshot", id: "s2", part: 1, parts: 1, runners: [], namespaces: [{ namespace: NS, wholeMsAgo: 600_000 }] });
    await waitFor(
      "the re-sent cache dated 10 minutes ago",
      async () => Date.parse((await ledgerOf(env).agentStatus()).wholeAt[NS] ?? "") < Date.now() - 500_000,
    );
    await ledgerOf(env).alarmAt(Date.now() + 301_000);
    expect(agent.reads).toEqual([`${NS}/${name}`]);
    expect(agent.orders.map((o) => [o.name, o.uid])).toEqual([[name, "uid-since1"]]);
    expect(await rowOf(env, name)).toMatchObject({ state: "reaped" });
    agent.ws.close(1000, "done");
  });

  it("a snapshot that says nothing of its namespaces (an older agent) leaves absence to reads", async () => {
    const env = agentEnv();
    const name = `${SCALE_SET}-runner-older1`;
    const agent = await connect(env);
    await jobCompleted(env, name, 7301, 600);
    await runInDurableObject(ledgerOf(env), (_i, state) => state.storage.sql.exec("UPDATE runners SET fact_at = fact_at - 120000 WHERE runner = ?", name));
    agent.ws.send(JSON.stringify({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] }));
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    await settleAlarms(env);
    expect(agent.reads).toContain(`${NS}/${name}`);
    // The fake agent cannot read: nothing says the runner left, so its row stays open.
    expect(await rowOf(env, name)).toMatchObject({ state: "finished" });
    agent.ws.close(1000, "done");
  });
});

describe("a namespace the agent cannot read", () => {
  it("holds the runners it could hold as ambiguous (kept, and why), is named on /metrics, /healthz/deep and /admin, and releases them once readable", async () => {
    const env = agentEnv({ REAPER_NAMESPACES: `${NS},${NS2}` });
    const [inNs, inNs2] = [`${SCALE_SET}-runner-readable1`, `${SCALE_SET}-runner-forbidden1`];
    const agent = await connect(env);
    agent.send({ type: "hello", version: "0.1.0", namespaces: [NS, NS2], dryRun: false });
    const forbidden =
      'watch: HTTP 403 ephemeralrunners.actions.github.com is forbidden: User "system:serviceaccount:arc-reaper-agent:arc-reaper-agent" cannot watch';
    agent.send({
      type: "snapshot",
      id: "s1",
      part: 1,
      parts: 1,
      runners: [runner(inNs, { uid: "uid-r1", workflowRunId: 7401, jobRepositoryName: REPO })],
      namespaces: [
        { namespace: NS, wholeMsAgo: 0 },
        { namespace: NS2, wholeMsAgo: 3_600_000, unreadable: forbidden },
      ],
    });
    await waitFor("the view, NS2 unreadable", async () => (await ledgerOf(env).agentStatus()).unreadable.length === 1);
    await jobCompleted(env, inNs, 7401, 600);
    await jobCompleted(env, inNs2, 7402, 600);
    await settleAlarms(env);
    // No uid was seen for either job: a namespace of their cluster that cannot be read could hold the very object, so both wait.
    expect(agent.orders).toEqual([]);
    for (const name of [inNs, inNs2]) expect(await rowOf(env, name)).toMatchObject({ state: "finished", code: "CannotJudge" });

    const metrics = await (await call(env, new Request("https://arc-reaper.test/metrics", { headers: bearer }))).text();
    expect(metrics).toContain(`arc_reaper_agent_namespace_readable{cluster="default",namespace="${NS}"} 1`);
    expect(metrics).toContain(`arc_reaper_agent_namespace_readable{cluster="default",namespace="${NS2}"} 0`);
    const deep = await call(env, new Request("https://arc-reaper.test/healthz/deep", { headers: bearer }));
    expect(deep.status).toBe(503);
    const checks = ((await deep.json()) as { checks: { name: string; ok: boolean; detail: string }[] }).checks;
    expect(checks.find((c) => c.name.includes(NS2))).toMatchObject({ ok: false, detail: expect.stringContaining(`cannot read namespace ${NS2}`) });
    expect(checks.find((c) => c.name.includes(`namespace ${NS} `))).toMatchObject({ ok: true });
    const page = await (await call(env, new Request("https://arc-reaper.test/admin", { headers: bearer }))).text();
    expect(page).toMatch(new RegExp(`id="agent-status-unreadable"[^>]*>The agent cannot read namespace ${NS2}`));
    expect((await ledgerOf(env).agentStatus()).unreadable).toEqual([{ namespace: NS2, why: forbidden }]);

    // Its Role is back: the agent lists it again; the held runner is judged at once (no sweep needed).
    agent.send({ type: "upsert", runner: runner(inNs2, { namespace: NS2, uid: "uid-f1", workflowRunId: 7402, jobRepositoryName: REPO }) });
    agent.send({ type: "namespaces", namespaces: [{ namespace: NS2, wholeMsAgo: 0 }] });
    await waitFor("NS2 readable again, its runner in view", async () => {
      const status = await ledgerOf(env).agentStatus();
      return status.unreadable.length === 0 && status.runners === 2;
    });
    await settleAlarms(env);
    expect(agent.orders.map((o) => o.name).sort()).toEqual([inNs2, inNs].sort());
    expect(await rowOf(env, inNs)).toMatchObject({ state: "reaped" });
    expect(await rowOf(env, inNs2)).toMatchObject({ state: "reaped" });
    const after = await (await call(env, new Request("https://arc-reaper.test/metrics", { headers: bearer }))).text();
    expect(after).toContain(`arc_reaper_agent_namespace_readable{cluster="default",namespace="${NS2}"} 1`);
    agent.ws.close(1000, "done");
  });
});

describe("reads by name", () => {
  it("a read the agent answers after 4 s (its own GET allows 15 s) is waited for, lands in the view and decides; reads stay on", {
    timeout: 30_000,
  }, async () => {
    const env = agentEnv();
    const [slow, next] = [`${SCALE_SET}-runner-slowread1`, `${SCALE_SET}-runner-slowread2`];
    const agent = await connect(env);
    // An older agent's snapshot: nothing says how whole the namespace is, so every absence is a read.
    agent.ws.send(JSON.stringify({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] }));
    const objects = new Map([slow, next].map((name, i) => [name, runner(name, { uid: `uid-slow${i}`, workflowRunId: 7501 + i, jobRepositoryName: REPO })]));
    agent.readAnswer = (ns, name) => (ns === NS ? (objects.get(name) ?? null) : null);
    agent.readDelayMs = 4_000;
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    await jobCompleted(env, slow, 7501, 600);
    // The agent answers 4 s later (a real timer in the ledger must not give up first): the order that follows shows it was waited for.
    await settleAlarms(env, 20_000);
    expect(agent.reads).toEqual([`${NS}/${slow}`]);
    expect(agent.orders.map((o) => [o.name, o.uid])).toEqual([[slow, "uid-slow0"]]);
    expect(await rowOf(env, slow)).toMatchObject({ state: "reaped" });
    // The connection is still asked to read.
    agent.readDelayMs = 0;
    await jobCompleted(env, next, 7502, 600);
    await settleAlarms(env);
    expect(agent.reads).toEqual([`${NS}/${slow}`, `${NS}/${next}`]);
    expect(await rowOf(env, next)).toMatchObject({ state: "reaped" });
    agent.ws.close(1000, "done");
  });
});

describe("agent_removed", () => {
  it("is pruned as it goes: 3,000 removals over 50 minutes keep at most REMOVED_KEPT_MS of them, and the newest still answer", async () => {
    const env = agentEnv();
    const agent = await connect(env);
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] });
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    const { kept, newest, oldest, bound } = await runInDurableObject(ledgerOf(env), async (_i, state) => {
      const view = new AgentViewTable(new Sql(state.storage.sql), "default");
      const t0 = Date.now();
      for (let i = 0; i < 3000; i++) view.remove(NS, `${SCALE_SET}-runner-r${i}`, `uid-r${i}`, t0 + i * 1000);
      return {
        kept: view.removedCount(),
        newest: view.removedAt(NS, `${SCALE_SET}-runner-r2999`) - t0,
        oldest: view.removedAt(NS, `${SCALE_SET}-runner-r0`),
        bound: REMOVED_KEPT_MS / 1000 + 1,
      };
    });
    await report(`[agent-freshness] agent_removed after 3,000 removals over 50 min: ${kept} rows kept (bound ${bound})`);
    expect(kept).toBeLessThanOrEqual(bound);
    expect(kept).toBeGreaterThan(bound - 10);
    expect(newest).toBe(2_999_000);
    expect(oldest).toBe(0);
    agent.ws.close(1000, "done");
  });
});
