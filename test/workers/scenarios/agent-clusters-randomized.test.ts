// Many clusters, randomized (issue 17): two clusters, each with its own fake
// agent, runner lifecycles spread over both (ARC's HA layout: one scale set
// name in both), idle twins of busy names in the other cluster, and agents
// that leave and come back at random while jobs complete. Every order is
// audited as it arrives: only to the runner's own cluster's agent, only for a
// completed job's very object, never twice, never an idle twin. At the end:
// nothing left behind, nothing closed as gone while its object was present.
import { describe, expect, it } from "vitest";
import type { AgentRunner, DeleteOrder } from "../../../src/cluster/agent-protocol.ts";
import { clusterToken } from "../../../src/http/agent-token.ts";
import { AGENT_TOKEN, agentEnv, connect, REPO, type Agent } from "../support/fake-agent.ts";
import { prng } from "../support/fleet-types.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { before, NS } from "../support/stack.ts";
import { waitFor } from "../support/wait-for.ts";
import { adminRunners, deliver, ledgerOf, report, runScheduled, settleAlarms } from "../support/worker.ts";

const CLUSTERS = ["eu-west", "us-east"] as const;
type ClusterName = (typeof CLUSTERS)[number];

/** A small seeded generator (mulberry32, shared with the fleets): the same seed, the same run. */
const random = prng;

interface Life {
  cluster: ClusterName;
  name: string;
  uid: string;
  runId: number;
  completed: boolean;
  deleted: boolean;
}

async function soak(seed: number, lifecycles: number, rounds: number) {
  const rand = random(seed);
  // The deletion cap counts real time here: lifted, so that the end is not a minute away.
  const env = agentEnv({ AGENT_CLUSTERS: CLUSTERS.join(","), REAPER_MAX_DELETIONS_PER_MINUTE: "1000" });
  const objects: Record<ClusterName, Map<string, AgentRunner>> = { "eu-west": new Map(), "us-east": new Map() };
  const lives: Life[] = [];
  const byUid = new Map<string, Life>();
  const problems: string[] = [];
  const agents: Partial<Record<ClusterName, Agent>> = {};
  let orders = 0;
  let flaps = 0;

  const onOrder = (cluster: ClusterName, agent: Agent, order: DeleteOrder) => {
    orders++;
    const life = byUid.get(order.uid);
    const object = objects[cluster].get(order.name);
    if (!life) problems.push(`order for ${cluster}/${order.name} (${order.uid}): not a job's runner (an idle twin?)`);
    else if (life.cluster !== cluster) problems.push(`order for ${order.name} went to ${cluster}, but it lives in ${life.cluster}`);
    else if (!life.completed) problems.push(`wrongful: ${cluster}/${order.name} deleted while its job runs`);
    else if (life.deleted) problems.push(`twice: ${cluster}/${order.name} ordered deleted again`);
    if (!object || object.uid !== order.uid) {
      agent.send({ type: "report", id: order.id, uid: order.uid, outcome: "gone", why: "no such object" });
      return;
    }
    if (life) life.deleted = true;
    objects[cluster].delete(order.name);
    agent.send({ type: "report", id: order.id, uid: order.uid, outcome: "deleted", why: "deleted" });
    agent.send({ type: "remove", namespace: NS, name: order.name, uid: order.uid });
  };

  const up = async (cluster: ClusterName) => {
    const agent = await connect(env, { cluster, token: await clusterToken(AGENT_TOKEN, cluster) });
    agent.answer = undefined;
    // Reads by name are answered from the cluster's objects (fake-agent.ts answers them); orders here.
    agent.readAnswer = (ns, name) => (ns === NS ? (objects[cluster].get(name) ?? null) : null);
    agent.ws.addEventListener("message", (e) => {
      const message = JSON.parse(String(e.data)) as DeleteOrder | { type: "read" };
      if (message.type === "order") onOrder(cluster, agent, message);
    });
    agent.send({ type: "snapshot", id: `s-${Date.now()}`, part: 1, parts: 1, runners: [...objects[cluster].values()] });
    agents[cluster] = agent;
  };
  const down = async (cluster: ClusterName) => {
    const agent = agents[cluster];
    delete agents[cluster];
    agent?.ws.close(1000, "away");
    await agent?.closed;
  };
  const place = (cluster: ClusterName, r: AgentRunner) => {
    objects[cluster].set(r.name, r);
    agents[cluster]?.send({ type: "upsert", runner: r });
  };
  // Every message sent is in: each agent that is up has its whole view, as many runners as its cluster holds; each away one is.
  const caughtUp = () =>
    waitFor("each cluster's view as its agent sent it", async () => {
      for (const c of CLUSTERS) {
        const status = await ledgerOf(env).agentStatus(c);
        if (agents[c] ? !status.complete || status.runners !== objects[c].size : status.connected) return false;
      }
      return true;
    });
  const job = (l: Life) => ({
    runner: l.name,
    repo: REPO,
    runId: l.runId,
    runAttempt: 1,
    jobId: l.runId * 10,
    installationId: 4242,
    startedAt: before(Date.now(), 900),
  });

  for (const c of CLUSTERS) await up(c);
  for (let round = 0; round < rounds; round++) {
    // New runners: ARC's HA layout, one scale set name in both clusters; now and then an idle twin in the other.
    for (let i = 0; i < Math.ceil(lifecycles / rounds); i++) {
      if (lives.length >= lifecycles) break;
      const n = lives.length;
      const cluster = CLUSTERS[rand() < 0.5 ? 0 : 1]!;
      const life: Life = { cluster, name: `arc-runners-abcde-runner-r${n}`, uid: `uid-${seed}-${n}`, runId: 50_000 + n, completed: false, deleted: false };
      lives.push(life);
      byUid.set(life.uid, life);
      place(cluster, {
        namespace: NS,
        name: life.name,
        uid: life.uid,
        creationTimestamp: before(Date.now(), 3600),
        workflowRunId: life.runId,
        jobRepositoryName: REPO,
      });
      if (rand() < 0.3) {
        const other = CLUSTERS.find((c) => c !== cluster)!;
        place(other, { namespace: NS, name: life.name, uid: `twin-${seed}-${n}`, creationTimestamp: before(Date.now(), 3600) });
      }
      expect((await deliver(env, "workflow_job", workflowJobPayload("in_progress", job(life)))).status).toBe(202);
    }
    // Some running jobs complete (cancelled 600 s ago: due at once).
    for (const l of lives) {
      if (l.completed || rand() > 0.35) continue;
      l.completed = true;
      const res = await deliver(
        env,
        "workflow_job",
        workflowJobPayload("completed", { ...job(l), completedAt: before(Date.now(), 600), conclusion: "cancelled" }),
      );
      expect(res.status).toBe(202);
    }
    // An agent leaves or comes back.
    if (rand() < 0.5) {
      const c = CLUSTERS[rand() < 0.5 ? 0 : 1]!;
      flaps++;
      if (agents[c]) await down(c);
      else await up(c);
    }
    await caughtUp();
    await settleAlarms(env);
    if (rand() < 0.5) await runScheduled(env, Date.now());
  }
  // Everyone back, every job over: the net catches everything.
  for (const l of lives) {
    if (l.completed) continue;
    l.completed = true;
    await deliver(env, "workflow_job", workflowJobPayload("completed", { ...job(l), completedAt: before(Date.now(), 600), conclusion: "success" }));
  }
  for (const c of CLUSTERS) if (!agents[c]) await up(c);
  for (let i = 0; i < 3; i++) {
    await caughtUp();
    await settleAlarms(env);
    await runScheduled(env, Date.now());
  }
  await settleAlarms(env);

  const rows = (await adminRunners(env, "?limit=500")).runners;
  const leftBehind = lives.filter((l) => !l.deleted).map((l) => `${l.cluster}/${l.name}`);
  const goneWhilePresent = rows
    .filter((r) => r.state === "gone" && [...CLUSTERS].some((c) => objects[c].get(String(r.name))?.uid === r.uid))
    .map((r) => r.name);
  const twinsTouched = CLUSTERS.flatMap((c) => [...objects[c].values()].filter((r) => r.uid.startsWith("twin-"))).length;
  for (const a of Object.values(agents)) a?.ws.close(1000, "done");
  const why = (n: string) =>
    rows
      .filter((row) => `${String(row.cluster)}/${String(row.name)}` === n || n.endsWith(`/${String(row.name)}`))
      .map((row) => [row.state, row.code, row.cluster, row.reason]); // for people reading a failure: the words too
  return { why, problems, leftBehind, goneWhilePresent, orders, flaps, lifecycles: lives.length, twinsLeft: twinsTouched, rows: rows.length };
}

describe("two clusters, randomized", () => {
  it.each([17, 4242])(
    "seed %i: 0 wrongful, 0 twice, 0 to the wrong cluster, 0 left behind, 0 gone while present; idle twins untouched",
    { timeout: 240_000 },
    async (seed) => {
      const r = await soak(seed, 120, 16);
      await report(
        `[agent-clusters-randomized] seed ${seed}: ${r.lifecycles} lifecycles over 2 clusters, ${r.orders} orders, ${r.flaps} agent flaps, ${r.twinsLeft} idle twins all untouched, ${r.problems.length} problems, ${r.leftBehind.length} left behind, ${r.goneWhilePresent.length} gone while present`,
      );
      expect(r.problems).toEqual([]);
      expect(r.leftBehind.map((n) => `${n}: ${JSON.stringify(r.why(n))}`)).toEqual([]);
      expect(r.goneWhilePresent).toEqual([]);
      expect(r.orders).toBeGreaterThanOrEqual(r.lifecycles);
      expect(r.twinsLeft).toBeGreaterThan(0);
    },
  );
});
