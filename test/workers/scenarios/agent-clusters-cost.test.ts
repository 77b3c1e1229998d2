// What several clusters cost a sweep (issue 17): the same live runners split
// over two clusters' agents against one cluster holding them all. Rows read are
// the ledger's own count (deterministic) and must stay within 1.2x; the sweep's
// wall time inside workerd is reported, not held (the machine is shared).
import { describe, expect, it } from "vitest";
import { clusterToken } from "../../../src/http/agent-token.ts";
import { AGENT_TOKEN, agentEnv, connect, REPO, runner } from "../support/fake-agent.ts";
import { before } from "../support/stack.ts";
import { jobStartedFact, recordFacts } from "../support/seed.ts";
import { waitFor } from "../support/wait-for.ts";
import { ledgerOf, ran, report } from "../support/worker.ts";

const PER_PART = 1000;

interface Measured {
  clusters: number;
  runners: number;
  first: { rowsRead: number; rowsWritten: number; ms: number };
  steady: { rowsRead: number; rowsWritten: number; ms: number };
}

async function measure(clusters: string[], perCluster: number): Promise<Measured> {
  const env = agentEnv({ AGENT_CLUSTERS: clusters.join(",") });
  const now = Date.now();
  const agents = [];
  let runId = 100_000;
  for (const cluster of clusters) {
    const agent = await connect(env, cluster === "default" ? {} : { cluster, token: await clusterToken(AGENT_TOKEN, cluster) });
    const runners = [];
    const facts = [];
    for (let i = 0; i < perCluster; i++) {
      runId++;
      const name = `arc-runners-abcde-runner-${cluster}-${i}`;
      runners.push(runner(name, { uid: `${cluster}-${i}`, workflowRunId: runId, jobRepositoryName: REPO }));
      facts.push(jobStartedFact({ runner: name, repo: REPO, runId, jobId: runId * 10, startedAt: before(now, 600) }));
    }
    const parts = Math.ceil(runners.length / PER_PART);
    for (let p = 0; p < parts; p++)
      agent.send({ type: "snapshot", id: `${cluster}-s`, part: p + 1, parts, runners: runners.slice(p * PER_PART, (p + 1) * PER_PART) });
    for (let i = 0; i < facts.length; i += 500) await recordFacts(env, facts.slice(i, i + 500));
    agents.push(agent);
  }
  for (const cluster of clusters)
    await waitFor(`cluster ${cluster}'s whole view of ${perCluster}`, async () => (await ledgerOf(env).agentStatus(cluster)).runners === perCluster, {
      timeoutMs: 30_000,
    });
  const one = async (at: number) => {
    const r = ran(await ledgerOf(env).sweep(at));
    expect(r.checked).toBe(clusters.length * perCluster);
    return { rowsRead: r.cost.rowsRead, rowsWritten: r.cost.rowsWritten, ms: r.durationMs };
  };
  const first = await one(now);
  // Steady state: the median of three sweeps (wall time on a shared machine varies).
  const steadies = [await one(now + 60_000), await one(now + 120_000), await one(now + 180_000)].sort((a, b) => a.ms - b.ms);
  const steady = steadies[1]!;
  for (const a of agents) a.ws.close(1000, "done");
  return { clusters: clusters.length, runners: clusters.length * perCluster, first, steady };
}

describe("a sweep over two clusters against one", () => {
  it("2 x 5,000 live runners read at most 1.2x the rows of 1 x 10,000", { timeout: 300_000 }, async () => {
    // A warm-up first, so that neither pays for the JIT; then each shape twice, alternating, the better of two kept.
    await measure(["default"], 2000);
    const best = (a: Measured, b: Measured): Measured => (a.steady.ms <= b.steady.ms ? a : b);
    const d1 = await measure(["eu-west", "us-east"], 5000);
    const s1 = await measure(["default"], 5000 * 2);
    const d2 = await measure(["eu-west", "us-east"], 5000);
    const s2 = await measure(["default"], 5000 * 2);
    const double = best(d1, d2);
    const single = best(s1, s2);
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    const line = (m: Measured) =>
      `${m.clusters} x ${m.runners / m.clusters}: first sweep ${m.first.rowsRead} rows read, ${m.first.rowsWritten} written, ${m.first.ms} ms; ` +
      `steady ${m.steady.rowsRead} read, ${m.steady.rowsWritten} written, ${m.steady.ms} ms`;
    await report(`[agent-clusters-cost] ${line(single)}`);
    await report(`[agent-clusters-cost] ${line(double)}`);
    await report(
      `[agent-clusters-cost] steady rows read ${ratio(double.steady.rowsRead, single.steady.rowsRead)}x, wall ${ratio(double.steady.ms, single.steady.ms)}x`,
    );
    expect(double.steady.rowsRead).toBeLessThanOrEqual(single.steady.rowsRead * 1.2);
    expect(double.first.rowsRead).toBeLessThanOrEqual(single.first.rowsRead * 1.2);
  });
});
