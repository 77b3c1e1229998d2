// Agent mode inside workerd: GET /agent refuses before any upgrade, the ledger
// accepts the agent's WebSocket (Hibernation API), builds its view only from
// complete snapshots, judges nothing it cannot see, and deletes by order.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORDER_TIMEOUT_MS } from "../../../src/agent-link/requests.ts";
import { AGENT_API_TIMEOUT_MS, CLOSE_REPLACED } from "../../../src/cluster/agent-protocol.ts";
import { AGENT_TOKEN, agentEnv, completed, connect, dial, REPO, runner } from "../support/fake-agent.ts";
import { NS } from "../support/stack.ts";
import { waitFor } from "../support/wait-for.ts";
import { adminRunners, call, evictLedger, ledgerOf, runScheduled, settleAlarms, testEnv } from "../support/worker.ts";

describe("GET /agent", () => {
  it("answers 401 to a wrong or missing AGENT_TOKEN before any upgrade, 426 without an upgrade, 404 in direct mode", async () => {
    const env = agentEnv();
    const refused: Record<string, string>[] = [
      { authorization: "Bearer wrong-token-0123456789-0123456789-01" },
      { authorization: `Bearer ${AGENT_TOKEN}x` },
      {},
    ];
    for (const auth of refused) {
      const res = await dial(env, { upgrade: "websocket", ...auth });
      expect(res.status).toBe(401);
      expect(res.webSocket).toBeNull();
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
    expect((await dial(env, { authorization: `Bearer ${AGENT_TOKEN}` })).status).toBe(426);
    expect((await ledgerOf(env).agentStatus()).connected).toBe(false);
    const direct = await dial(testEnv({ AGENT_TOKEN }), { upgrade: "websocket", authorization: `Bearer ${AGENT_TOKEN}` });
    expect(direct.status).toBe(404);
    expect(direct.webSocket).toBeNull();
  });

  it("judges nothing until the last snapshot part is in, then deletes by order", async () => {
    const env = agentEnv();
    const name = "arc-runners-abcde-runner-agent1";
    const agent = await connect(env);
    await completed(env, name, 321);
    await settleAlarms(env);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ state: "finished", code: "CannotJudge" });

    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 2, runners: [runner(name, { workflowRunId: 321, jobRepositoryName: REPO })] });
    // The ledger holds part 1 (gathered apart from the view) before the sweep looks.
    await waitFor("part 1 gathered", () =>
      runInDurableObject(ledgerOf(env), (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM agent_snapshot").one().n === 1),
    );
    await runScheduled(env, Date.now());
    expect(await ledgerOf(env).agentStatus()).toMatchObject({ connected: true, complete: false, runners: 0 });
    expect(agent.orders).toEqual([]);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ state: "finished", code: "CannotJudge" });

    agent.send({ type: "snapshot", id: "s1", part: 2, parts: 2, runners: [runner("arc-runners-abcde-runner-idle1")] });
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    expect(await ledgerOf(env).agentStatus()).toMatchObject({ connected: true, complete: true, runners: 2, namespaces: [NS] });
    // The whole view makes the runner kept for want of it due at once: the alarm, not the cron, reaps it.
    // (No sweep from here: without that wake-up nothing would be due and no order would go out.)
    await settleAlarms(env);
    expect(agent.orders).toEqual([
      {
        type: "order",
        id: expect.any(String),
        namespace: NS,
        name,
        uid: `uid-${name}`,
        runId: 321,
        reason: expect.any(String), // for the agent's log: the row's code says why
      },
    ]);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ state: "reaped", code: "JobCompleted", jobId: 3210 });
    const metrics = await (
      await call(env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }))
    ).text();
    expect(metrics).toContain('arc_reaper_agent_connected{cluster="default"} 1');
    agent.ws.close(1000, "done");
  });

  it("a refused order keeps the runner as an agent error; a removed runner is gone only once the view says so", async () => {
    const env = agentEnv();
    const name = "arc-runners-abcde-runner-agent2";
    const agent = await connect(env);
    agent.answer = "refused";
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [runner(name, { workflowRunId: 322, jobRepositoryName: REPO })] });
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    await completed(env, name, 322);
    await settleAlarms(env);
    expect(agent.orders).toHaveLength(1);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ state: "finished", code: "DeleteFailed" });
    // A remove for another uid (a name that came back) changes nothing; the right uid does.
    agent.send({ type: "remove", namespace: NS, name, uid: "some-other-uid" });
    // A barrier: an upsert sent after it is in, so the remove was taken, and left the runner.
    agent.send({ type: "upsert", runner: runner("arc-runners-abcde-runner-barrier") });
    await waitFor("the barrier runner in the view", async () => (await ledgerOf(env).agentStatus()).runners === 2);
    agent.send({ type: "remove", namespace: NS, name, uid: `uid-${name}` });
    await waitFor("the view without the runner", async () => (await ledgerOf(env).agentStatus()).runners === 1);
    await runScheduled(env, Date.now());
    expect((await adminRunners(env)).runners[0]).toMatchObject({ state: "gone" });
    const metrics = await (
      await call(env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }))
    ).text();
    expect(metrics).toMatch(/arc_reaper_errors_total\{kind="agent"\} [1-9]/);
    agent.ws.close(1000, "done");
  });

  it("a second agent replaces the first (4001); a disconnected agent means hands off; an invalid message closes the socket", async () => {
    const env = agentEnv();
    const first = await connect(env);
    const second = await connect(env);
    expect((await first.closed).code).toBe(CLOSE_REPLACED);
    second.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [] });
    await waitFor("the second agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    expect(await ledgerOf(env).agentStatus()).toMatchObject({ connected: true, complete: true });
    second.send({ type: "upsert", runner: { ...runner("arc-runners-abcde-runner-x"), surprise: true } });
    expect((await second.closed).code).toBe(1008);
    await waitFor("the ledger to see the agent gone", async () => !(await ledgerOf(env).agentStatus()).connected);
    expect(await ledgerOf(env).agentStatus()).toMatchObject({ connected: false, complete: false });
    const metrics = await (
      await call(env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }))
    ).text();
    expect(metrics).toContain('arc_reaper_agent_connected{cluster="default"} 0');
  });

  it("an order without a report fails after ORDER_TIMEOUT_MS (a GET and a DELETE at the agent's own timeout); while that agent stays silent the next orders fail at once", {
    timeout: 90_000,
  }, async () => {
    const env = agentEnv();
    const [a, b] = ["arc-runners-abcde-runner-silent1", "arc-runners-abcde-runner-silent2"];
    const agent = await connect(env);
    agent.answer = undefined; // a hung agent: the socket is open, nothing comes back
    agent.send({
      type: "snapshot",
      id: "s1",
      part: 1,
      parts: 1,
      runners: [runner(a, { workflowRunId: 331, jobRepositoryName: REPO }), runner(b, { workflowRunId: 332, jobRepositoryName: REPO })],
    });
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    await completed(env, a, 331);
    await completed(env, b, 332);
    // The ledger's own timer must run out here (real time: ORDER_TIMEOUT_MS); how long it waits is the unit test's
    // (test/unit/agent-link/requests.test.ts). One timeout, not one per runner: the second order is never sent.
    await settleAlarms(env, ORDER_TIMEOUT_MS + 20_000);
    expect(agent.orders).toHaveLength(1); // the second was not sent to an agent that did not answer the first
    expect(ORDER_TIMEOUT_MS).toBeGreaterThanOrEqual(2 * AGENT_API_TIMEOUT_MS);
    const rows = (await adminRunners(env)).runners;
    expect(rows.map((r) => [r.state, r.code])).toEqual([
      ["finished", "DeleteFailed"],
      ["finished", "DeleteFailed"],
    ]);
    agent.ws.close(1000, "done");
  });

  it("the connection, its hello and its whole view outlive the ledger's instance (hibernation)", async () => {
    const env = agentEnv();
    const name = "arc-runners-abcde-runner-hiber1";
    const agent = await connect(env);
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [runner(name, { workflowRunId: 341, jobRepositoryName: REPO })] });
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus()).complete);
    await evictLedger(env); // a fresh instance next: only the socket's attachment and SQL remain
    expect(await ledgerOf(env).agentStatus()).toMatchObject({ connected: true, complete: true, namespaces: [NS], runners: 1 });
    await completed(env, name, 341);
    await settleAlarms(env);
    expect(agent.orders).toHaveLength(1);
    expect((await adminRunners(env)).runners[0]).toMatchObject({ state: "reaped" });
    agent.ws.close(1000, "done");
  });
});
