// "Runner ids match" is known per cluster identity (the kube-system namespace's uid), never per name: a name
// re-pointed at another cluster (a new KUBE_API_URL, a reused agent cluster name) carries nothing over, and the
// change is logged (ClusterIdentityChanged), counted and shown; an identity that cannot be read trusts no id.
import { describe, expect, inject, it } from "vitest";
import { clusterToken } from "../../../src/http/agent-token.ts";
import { createKubeTenant, makeEphemeralRunner } from "../../standins/kube/control.ts";
import { AGENT_TOKEN, agentEnv, connect, REPO, runner as agentRunner } from "../support/fake-agent.ts";
import { before, NS, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call, deliver, ledgerOf, settleAlarms } from "../support/worker.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { waitFor } from "../support/wait-for.ts";
import { NOW, preconditionUid } from "../support/kube-calls.ts";

const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
type Env = Parameters<typeof call>[0];
const metrics = async (env: Env) => (await call(env, new Request("https://arc-reaper.test/metrics", { headers: bearer }))).text();
const gauge = (text: string, cluster = "default") => new RegExp(`^arc_reaper_runner_ids_match\\{cluster="${cluster}"\\} (\\d)$`, "m").exec(text)?.[1];
const changes = (text: string, cluster = "default") =>
  new RegExp(`^arc_reaper_cluster_identity_changes_total\\{cluster="${cluster}"\\} (\\d+)$`, "m").exec(text)?.[1];
async function deepCheck(env: Env, name: string): Promise<string | undefined> {
  const body = (await (await call(env, new Request("https://arc-reaper.test/healthz/deep", { headers: bearer }))).json()) as {
    checks: { name: string; detail: string }[];
  };
  return body.checks.find((c) => c.name === name)?.detail;
}
const kubeSystemUid = async (kube: { baseUrl: string; adminToken: string }) =>
  (
    (await (await fetch(`${kube.baseUrl}/api/v1/namespaces/kube-system`, { headers: { authorization: `Bearer ${kube.adminToken}` } })).json()) as {
      metadata: { uid: string };
    }
  ).metadata.uid;

type S = Awaited<ReturnType<typeof stack>>;
async function completedJob(s: S, o: { runner: string; runnerId: number; runId: number; jobId: number }) {
  await s.jobStarted({ ...o, startedAt: before(NOW, 1200) });
  await s.jobCompleted({ ...o, startedAt: before(NOW, 1200), completedAt: before(NOW, 600), conclusion: "cancelled" });
}

describe("direct mode: KUBE_API_URL re-pointed at another cluster", () => {
  it("carries no 'ids match' over: the job's runner there (another id space) is reaped by its run, never closed gone while present", async () => {
    const s = await stack();
    // Cluster A: a job's runner found by its id: ids match in A.
    const first = "arc-runners-cid01-runner-first";
    await s.runner({ name: first, runnerId: 41_001 });
    await completedJob(s, { runner: first, runnerId: 41_001, runId: 4100, jobId: 41_000 });
    await s.sweep(NOW);
    expect(gauge(await metrics(s.env))).toBe("1");
    expect(await deepCheck(s.env, "cluster identity")).toBe(`kube-system uid ${await kubeSystemUid(s.kube)}`);

    // The same name ("default") now points at cluster B, whose ARC numbers runners otherwise.
    const b = await createKubeTenant(inject("kubeStandinUrl"), { namespaces: [NS] });
    s.env.KUBE_API_URL = b.baseUrl;
    s.env.KUBE_TOKEN = b.adminToken;
    // The ledger's settings as a deploy with the new KUBE_API_URL gives them (the test ledger reads them from its memory).
    await ledgerOf(s.env).useTestSettings(Object.fromEntries(Object.entries(s.env).filter((e): e is [string, string] => typeof e[1] === "string")));
    const name = "arc-runners-cid01-runner-again";
    const busy = await b.seed(
      makeEphemeralRunner({
        namespace: NS,
        scaleSet: "arc-runners",
        name,
        workflowRunId: 4101,
        jobRepositoryName: REPO,
        runnerId: 7,
        creationTimestamp: new Date(Date.now() - 10 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
      }),
    );
    await completedJob(s, { runner: name, runnerId: 41_010, runId: 4101, jobId: 41_010 });
    await s.sweep(NOW + 60_000);
    await s.sweep(NOW + 120_000);
    const deleted = (await b.calls()).filter((c) => c.method === "DELETE").map((c) => preconditionUid(c));
    expect(deleted).toEqual([busy.metadata.uid]);
    expect((await adminRunners(s.env)).runners.find((r) => r.name === name)).toMatchObject({ state: "reaped", code: "JobCompleted" });
    const text = await metrics(s.env);
    expect(gauge(text)).toBe("0");
    expect(changes(text)).toBe("1");
    const identity = await deepCheck(s.env, "cluster identity");
    expect(identity).toMatch(
      new RegExp(`^kube-system uid ${await kubeSystemUid(b)}; changed .* from ${await kubeSystemUid(s.kube)}: what was known of its runner ids was forgotten$`),
    );
  });
});

describe("agent mode: the identity the agent's hello reports", () => {
  it("a cluster name reused by an agent of another cluster trusts no id; an agent that reports none trusts none", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: "eu-west" });
    const token = await clusterToken(AGENT_TOKEN, "eu-west");
    const agent = await connect(env, { cluster: "eu-west", token });
    agent.send({ type: "hello", version: "0.1.0", namespaces: [NS], dryRun: false, cluster: "eu-west", identity: "uid-of-cluster-a" });
    const name = "arc-runners-cid02-runner-agent";
    agent.send({ type: "snapshot", id: "s1", part: 1, parts: 1, runners: [agentRunner(name, { runnerId: 42_001 })] });
    await waitFor("the agent's whole view", async () => (await ledgerOf(env).agentStatus("eu-west")).complete);
    const res = await deliver(
      env,
      "workflow_job",
      workflowJobPayload("completed", {
        runner: name,
        runnerId: 42_001,
        repo: REPO,
        runId: 4200,
        runAttempt: 1,
        jobId: 42_000,
        installationId: 4242,
        startedAt: before(Date.now(), 900),
        completedAt: before(Date.now(), 600),
        conclusion: "cancelled",
      }),
    );
    expect(res.status).toBe(202);
    await settleAlarms(env);
    expect(agent.orders.map((o) => o.name)).toEqual([name]);
    expect(gauge(await metrics(env), "eu-west")).toBe("1");

    // Another cluster's agent under the same name: its identity differs.
    agent.send({ type: "hello", version: "0.1.0", namespaces: [NS], dryRun: false, cluster: "eu-west", identity: "uid-of-cluster-b" });
    await waitFor("the change counted", async () => changes(await metrics(env), "eu-west") === "1");
    expect(gauge(await metrics(env), "eu-west")).toBe("0");
    expect(await deepCheck(env, "cluster identity")).toMatch(/^kube-system uid uid-of-cluster-b; changed .* from uid-of-cluster-a/);

    // Back to cluster A (ids were forgotten with the change), then an agent that says nothing: unknown, nothing trusted.
    agent.send({ type: "hello", version: "0.1.0", namespaces: [NS], dryRun: false, cluster: "eu-west" });
    await waitFor("the identity unknown", async () => (await deepCheck(env, "cluster identity"))?.startsWith("unknown: ") === true);
    expect(gauge(await metrics(env), "eu-west")).toBe("0");
    agent.ws.close(1000, "done");
  });
});
