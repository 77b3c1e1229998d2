// Issue 24 in agent mode: a deletion ARC holds (the agent's view shows it being
// deleted) is finished through a "finish" order, only once GitHub says its job
// completed; never while GitHub says it runs. The agent's refusal (403: the
// overlay not applied) is shown on the row with the overlay's command.
import { describe, expect, it } from "vitest";
import { AGENT_TOKEN, connect, runner as agentRunner, untilLedger } from "../support/fake-agent.ts";
import { before, NS, REPO, stack, type Stack } from "../support/stack.ts";
import { adminRunners } from "../support/worker.ts";

const T = Date.now() + 86_400_000;
const agentSettings = {
  CLUSTER_MODE: "agent",
  AGENT_TOKEN,
  KUBE_API_URL: undefined,
  KUBE_TOKEN: undefined,
  REAPER_STUCK_SECONDS: "60",
  REAPER_FINISH_STUCK: "true",
};
const rowOf = async (s: Stack, name: string) => (await adminRunners(s.env)).runners.find((r) => r["name"] === name);

async function heldThroughAgent(s: Stack, name: string, runId: number, jobId: number) {
  const agent = await connect(s.env);
  const busy = agentRunner(name, { workflowRunId: runId, jobRepositoryName: REPO });
  agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [busy] });
  await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, status: "in_progress", runner_name: name, started_at: before(T, 900) });
  expect((await s.jobCompleted({ runner: name, runId, jobId, startedAt: before(T, 900), completedAt: before(T, 600), conclusion: "cancelled" })).status).toBe(
    202,
  );
  await s.sweep(T);
  expect(agent.orders.map((o) => [o.name, o.runId])).toEqual([[name, runId]]);
  // ARC holds it: the watch shows it being deleted, and it stays.
  agent.send({ type: "upsert", runner: { ...busy, deletionTimestamp: new Date(T).toISOString().replace(/\.\d{3}Z$/, "Z") } });
  await untilLedger(s.env, "the runner being deleted", (v) => v.runners.some((r) => r.name === name && r.deletionTimestamp !== null));
  return { agent, busy };
}

const completedJob = (name: string, runId: number, jobId: number) => ({
  repo: REPO,
  id: jobId,
  run_id: runId,
  status: "completed" as const,
  conclusion: "cancelled" as const,
  runner_name: name,
  started_at: before(T, 900),
  completed_at: before(T, 30),
});

describe("agent mode: held deletions finished", () => {
  it("no finish order while GitHub says the job runs; once it says completed, one finish order for exactly that uid, and the row reaped", async () => {
    const s = await stack(agentSettings);
    const name = "arc-runners-x-runner-held1";
    const { agent, busy } = await heldThroughAgent(s, name, 811, 8110);
    await s.sweep(T + 61_000);
    expect(agent.finishes).toEqual([]);
    expect(await rowOf(s, name)).toMatchObject({ state: "stuck", code: "StillRunning" });

    await s.github.putJob(completedJob(name, 811, 8110));
    await s.sweep(T + 122_000);
    expect(agent.finishes).toEqual([{ type: "finish", id: expect.any(String), namespace: NS, name, uid: busy.uid, reason: expect.any(String) }]);
    expect(await rowOf(s, name)).toMatchObject({ state: "reaped", code: "Finished" });
    agent.send({ type: "remove", namespace: NS, name, uid: busy.uid });
    await s.sweep(T + 200_000);
    expect(agent.finishes).toHaveLength(1);
  });

  it("the agent's refusal (403: the overlay not applied) is shown on the row with the overlay's command, not retried before the next look", async () => {
    const s = await stack(agentSettings);
    const name = "arc-runners-x-runner-held2";
    const { agent } = await heldThroughAgent(s, name, 812, 8120);
    agent.finishAnswer = "refused";
    await s.github.putJob(completedJob(name, 812, 8120));
    await s.sweep(T + 61_000);
    expect(agent.finishes).toHaveLength(1);
    expect(await rowOf(s, name)).toMatchObject({ state: "stuck", code: "FinishRefused" });
    await s.sweep(T + 90_000);
    expect(agent.finishes).toHaveLength(1);
  });
});
