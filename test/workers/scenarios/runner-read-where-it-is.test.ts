// A runner is read only where it is (place-runner.ts): with two clusters, each with its agent, a runner reaped on
// a webhook is read and deleted in its own cluster and costs no call at all (no read, no order) to the other;
// where nothing places it (no row's cluster, no view shows it), every cluster is asked, as before (safe).
import { describe, expect, it } from "vitest";
import { clusterToken } from "../../../src/http/agent-token.ts";
import { AGENT_TOKEN, agentEnv, completed, connect, REPO, runner, type Agent } from "../support/fake-agent.ts";
import { adminRunners, ledgerOf, settleAlarms } from "../support/worker.ts";
import { waitFor } from "../support/wait-for.ts";

const EU = "eu-west";
const US = "us-east";
const SCALE_SET = "arc-runners-abcde";

async function clusterAgent(env: ReturnType<typeof agentEnv>, cluster: string, runners: ReturnType<typeof runner>[]): Promise<Agent> {
  const agent = await connect(env, { cluster, token: await clusterToken(AGENT_TOKEN, cluster) });
  agent.send({ type: "snapshot", id: `${cluster}-s1`, part: 1, parts: 1, runners });
  await waitFor(`cluster ${cluster}'s whole view`, async () => (await ledgerOf(env).agentStatus(cluster)).complete);
  return agent;
}

/** Every call the ledger made to one cluster: its reads by name and its orders. */
const callsTo = (a: Agent) => [...a.reads.map((r) => `read ${r}`), ...a.orders.map((o) => `delete ${o.namespace}/${o.name}`)];

describe("a runner is read only where it is", () => {
  it("reaped on a webhook in one cluster: read and deleted there, zero calls to the other", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const [inEu, inUs] = [`${SCALE_SET}-runner-eu201`, `${SCALE_SET}-runner-us201`];
    const eu = await clusterAgent(env, EU, [runner(inEu, { workflowRunId: 1201, jobRepositoryName: REPO })]);
    const us = await clusterAgent(env, US, [runner(inUs, { workflowRunId: 1202, jobRepositoryName: REPO })]);
    // The completion comes after both views were last whole: a view cannot answer "absent" for it.
    await completed(env, inEu, 1201);
    await settleAlarms(env);
    expect(eu.orders.map((o) => o.name)).toEqual([inEu]);
    expect(callsTo(us)).toEqual([]);
    // And the other way round: the row of the US runner costs the EU cluster nothing.
    await completed(env, inUs, 1202);
    await settleAlarms(env);
    expect(us.orders.map((o) => o.name)).toEqual([inUs]);
    expect(callsTo(eu)).toEqual([`delete arc-runners/${inEu}`]);
    const rows = (await adminRunners(env)).runners;
    expect(rows.find((r) => r.name === inEu)).toMatchObject({ state: "reaped", cluster: EU });
    expect(rows.find((r) => r.name === inUs)).toMatchObject({ state: "reaped", cluster: US });
    eu.ws.close(1000, "done");
    us.ws.close(1000, "done");
  });

  it("placement unknown (no view shows the runner, its row has no cluster): every cluster is asked, nothing deleted", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const nowhere = `${SCALE_SET}-runner-nw201`;
    const eu = await clusterAgent(env, EU, [runner(`${SCALE_SET}-runner-eu202`)]);
    const us = await clusterAgent(env, US, [runner(`${SCALE_SET}-runner-us202`)]);
    await completed(env, nowhere, 1203);
    await settleAlarms(env);
    expect(eu.reads).toEqual([`arc-runners/${nowhere}`]);
    expect(us.reads).toEqual([`arc-runners/${nowhere}`]);
    expect([...eu.orders, ...us.orders]).toEqual([]);
    eu.ws.close(1000, "done");
    us.ws.close(1000, "done");
  });
});
