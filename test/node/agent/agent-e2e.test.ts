// Agent mode end to end: the real Worker under `wrangler dev` (CLUSTER_MODE=agent),
// the real agent (src/agent) against the stand-in cluster under infra/agent's
// Role, dialing GET /agent through a relay this test can cut. Everything on
// 127.0.0.1; every wait is bounded; the stack stops in afterAll.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startLocalStack, waitFor, workflowJobPayload, type LocalStack } from "../../../scripts/lib/local-stack.ts";
import { makeEphemeralRunner, type KubeCall } from "../../standins/kube/control.ts";

const NS = "arc-runners";
const REPO = "octo-org/octo-repo";
const INSTALLATION = 4242;
const GRACE_SECONDS = 5;
const AGENT_USER = "system:serviceaccount:arc-reaper-agent:arc-reaper-agent";

let stack: LocalStack;
const figures: string[] = [];

beforeAll(async () => {
  stack = await startLocalStack({ agent: { relay: true }, settings: { REAPER_GRACE_SECONDS: String(GRACE_SECONDS) }, startTimeoutMs: 150_000 });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  // The measured figures, shown even when every test passes.
  if (figures.length > 0) process.stderr.write(`\nagent mode under wrangler dev:\n${figures.map((f) => `  ${f}`).join("\n")}\n`);
}, 30_000);

/** GitHub's time: whole seconds. */
const iso = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, "Z");

async function seed(name: string, runId?: number, createdAt = iso(Date.now() - 3_600_000)): Promise<string> {
  const o = await stack.kube.seed(
    makeEphemeralRunner({
      namespace: NS,
      scaleSet: "arc-runners",
      name,
      workflowRunId: runId,
      jobRepositoryName: runId === undefined ? undefined : REPO,
      creationTimestamp: createdAt,
    }),
  );
  return o.metadata.uid;
}

async function job(action: "in_progress" | "completed", name: string, runId: number, completedAt?: string): Promise<void> {
  const payload = workflowJobPayload(action, {
    runner: name,
    repo: REPO,
    runId,
    runAttempt: 1,
    jobId: runId * 10,
    installationId: INSTALLATION,
    startedAt: iso(Date.now() - 600_000),
    ...(completedAt ? { completedAt, conclusion: "cancelled" } : {}),
  });
  const { status, body } = await stack.postWebhook("workflow_job", payload);
  expect(status, JSON.stringify(body)).toBe(202);
}

const deletesOf = (calls: KubeCall[], name?: string): KubeCall[] =>
  calls.filter((c) => c.method === "DELETE" && (name === undefined || c.path.endsWith(`/ephemeralrunners/${name}`)));

async function metric(name: string, labels = ""): Promise<number> {
  const text = await stack.metrics();
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  if (line === undefined) throw new Error(`no ${name}${labels} in /metrics:\n${text}`);
  return Number(line.split(" ")[1]);
}

async function adminPage(): Promise<string> {
  const res = await fetch(`${stack.url}/admin`, { headers: { authorization: `Bearer ${stack.adminToken}` }, signal: AbortSignal.timeout(10_000) });
  expect(res.status).toBe(200);
  return res.text();
}

/** Waits until the ledger's view holds `n` runners (the admin banner says so). */
const viewHolds = (n: number) =>
  waitFor(`the ledger's view to hold ${n} runners`, async () => ((await adminPage()).includes(`${n} runners in view`) ? true : undefined), 10_000);

async function row(name: string) {
  return (await stack.adminRunners()).find((r) => r.name === name);
}

function dial(token: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${stack.url.replace(/^http/, "ws")}/agent`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      handshakeTimeout: 10_000,
    });
    ws.on("unexpected-response", (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => {
      ws.terminate();
      resolve(101);
    });
    ws.on("error", (e) => (e.message.includes("Unexpected server response") ? undefined : reject(e)));
  });
}

describe("agent mode under wrangler dev", () => {
  it("reaps a cancelled run's runner through the agent at the grace end, within 2 s", async () => {
    const name = "arc-runners-e2e01-runner-cncl1";
    const uid = await seed(name, 101);
    await job("in_progress", name, 101);
    const completedAt = iso(Date.now());
    const graceEnd = Date.parse(completedAt) + GRACE_SECONDS * 1000;
    await job("completed", name, 101, completedAt);
    // Inside the grace nothing happens.
    expect(deletesOf(await stack.kube.calls(), name)).toEqual([]);
    const [del] = await waitFor(
      "the agent's DELETE",
      async () => {
        const d = deletesOf(await stack.kube.calls(), name);
        return d.length > 0 ? d : undefined;
      },
      (GRACE_SECONDS + 10) * 1000,
      50,
    );
    const deletedAt = Date.parse(del!.time);
    // The ledger's log line may reach wrangler's stdout a moment after the DELETE.
    const order = await waitFor("the ledger's order log line", async () => stack.logLines("agent order").find((l) => l.name === name), 5_000, 50);
    const orderedAt = Date.parse(String(order!.at));
    figures.push(`grace end -> DELETE at the API server: ${deletedAt - graceEnd} ms; order sent -> DELETE: ${deletedAt - orderedAt} ms`);
    expect(deletedAt).toBeGreaterThanOrEqual(graceEnd); // never before the grace ends
    expect(deletedAt - graceEnd).toBeLessThan(2000);
    expect(del).toMatchObject({ user: AGENT_USER, status: 200, body: { preconditions: { uid } } });
    expect(deletesOf(await stack.kube.calls())).toHaveLength(1);
    await waitFor("the ledger to record the reaping", async () => ((await row(name))?.state === "reaped" ? true : undefined), 5_000);
    expect((await row(name))?.reason).toMatch(/job 1010 in octo-org\/octo-repo is cancelled, completed \d+s ago/);
  });

  it("an order for a uid that changed is refused by the agent and nothing is deleted; the next snapshot settles it", async () => {
    const name = "arc-runners-e2e02-runner-uidch";
    await seed(name, 102);
    await job("in_progress", name, 102);
    await viewHolds(2);
    // The ledger's view goes stale: the agent's word on this runner is lost on the way.
    stack.relay!.drop = (m) => (m.type === "upsert" && (m.runner as { name?: string }).name === name) || (m.type === "remove" && m.name === name);
    await stack.kube.remove(NS, name);
    const newUid = await seed(name); // ARC made a new, idle runner of the same name
    await job("completed", name, 102, iso(Date.now() - 60_000)); // past the grace: due at once
    const report = await waitFor("the agent's report", async () => stack.logLines("agent report").find((l) => l.name === name), 10_000, 50);
    expect(report).toMatchObject({ outcome: "refused", why: expect.stringContaining(`now has uid ${newUid}`) });
    stack.relay!.drop = undefined;
    expect(deletesOf(await stack.kube.calls(), name)).toEqual([]);
    expect((await stack.kube.get(NS, name))?.metadata).toMatchObject({ uid: newUid });
    expect((await stack.kube.get(NS, name))?.metadata.deletionTimestamp).toBeUndefined();
    expect(await row(name)).toMatchObject({ state: "finished", reason: expect.stringContaining("the agent refused the order") });

    // A cut: the agent reconnects and its snapshot shows the new object, so the job's runner is gone.
    const snapshots = stack.logLines("agent snapshot").length;
    stack.relay!.cut();
    await waitFor("a fresh snapshot after the cut", async () => (stack.logLines("agent snapshot").length > snapshots ? true : undefined), 15_000);
    const { summary } = await stack.sweep();
    expect(summary.deleted).toBe(0);
    expect(await row(name)).toMatchObject({ state: "gone" });
    expect(deletesOf(await stack.kube.calls(), name)).toEqual([]);
  });

  it("GET /agent answers 401 to a wrong or missing AGENT_TOKEN, before any upgrade, and keeps the connected agent", async () => {
    const connections = stack.logLines("agent connected").length;
    expect(await dial("wrong-token-0123456789-0123456789-0123456789")).toBe(401);
    expect(await dial(`${stack.agentToken}x`)).toBe(401);
    expect(await dial(undefined)).toBe(401);
    const plain = await fetch(`${stack.url}/agent`, { headers: { authorization: "Bearer nope" } });
    expect(plain.status).toBe(401);
    expect(plain.headers.get("www-authenticate")).toBe("Bearer");
    expect(await plain.json()).toEqual({
      error: "a valid agent token for cluster default is required (AGENT_TOKEN admits only default; another cluster needs the token made for it)",
    });
    const noUpgrade = await fetch(`${stack.url}/agent`, { headers: { authorization: `Bearer ${stack.agentToken}` } });
    expect(noUpgrade.status).toBe(426);
    expect(stack.logLines("agent connected")).toHaveLength(connections);
    expect(await metric("arc_reaper_agent_connected", `{cluster="default"}`)).toBe(1);
  });

  it("with the agent stopped nothing is deleted, runners are kept and counted; once it is back the alarm reaps at once", async () => {
    const name = "arc-runners-e2e04-runner-stopd";
    await seed(name, 104);
    await job("in_progress", name, 104);
    await viewHolds(3);
    const agentErrors = await metric("arc_reaper_errors_total", '{kind="agent"}');
    await stack.agent!.stop();
    await waitFor(
      "arc_reaper_agent_connected 0",
      async () => ((await metric("arc_reaper_agent_connected", `{cluster="default"}`)) === 0 ? true : undefined),
      10_000,
    );
    await job("completed", name, 104, iso(Date.now() - 60_000)); // due at once: the alarm cannot see it
    // Not judged at all: what cannot be seen is neither condemned nor gone.
    const cannotJudge = "cannot judge: CLUSTER_MODE=agent: no agent is connected";
    await waitFor("the alarm to keep it", async () => ((await row(name))?.reason === cannotJudge ? true : undefined), 10_000);
    const { summary, decisions } = await stack.sweep();
    expect(summary.deleted).toBe(0);
    expect(summary.errorsByKind.agent).toBeGreaterThanOrEqual(1);
    expect(decisions.find((d) => d.runner === name)).toMatchObject({ verdict: "keep", error: "agent", reason: cannotJudge });
    expect(deletesOf(await stack.kube.calls(), name)).toEqual([]);
    expect((await stack.kube.get(NS, name))?.metadata.deletionTimestamp).toBeUndefined();
    expect(await row(name)).toMatchObject({ state: "finished", reason: cannotJudge });
    expect(await metric("arc_reaper_errors_total", '{kind="agent"}')).toBeGreaterThanOrEqual(agentErrors + 2); // the alarm's and the sweep's
    expect(await adminPage()).toContain("No agent is connected");

    // Back: its snapshot makes what was kept due at once, and the alarm reaps without waiting for the cron.
    const snapshots = stack.logLines("agent snapshot").length;
    stack.agent!.start();
    const whole = await waitFor("the agent's snapshot", async () => stack.logLines("agent snapshot")[snapshots], 15_000, 50);
    const [del] = await waitFor(
      "the DELETE after the reconnect",
      async () => {
        const d = deletesOf(await stack.kube.calls(), name);
        return d.length > 0 ? d : undefined;
      },
      10_000,
      50,
    );
    figures.push(`agent back -> kept runner deleted: ${Date.parse(del!.time) - Date.parse(String(whole.at))} ms after its snapshot was whole (no sweep)`);
    expect(Date.parse(del!.time) - Date.parse(String(whole.at))).toBeLessThan(2000);
    expect(await metric("arc_reaper_agent_connected", `{cluster="default"}`)).toBe(1);
    await waitFor("the ledger to record the reaping", async () => ((await row(name))?.state === "reaped" ? true : undefined), 5_000);
    expect(deletesOf(await stack.kube.calls(), name)).toHaveLength(1);
  });

  it("a 410 from the API server leads the agent to list again and send the ledger a fresh snapshot", async () => {
    const snapshots = stack.logLines("agent snapshot").length;
    const count = (msg: string) => stack.agent!.logs.filter((l) => l.msg === msg).length;
    const [expired, relists] = [count("watch expired (410 Gone): listing again"), count("listed again")];
    await stack.kube.expireWatches();
    await waitFor("a fresh snapshot after 410", async () => (stack.logLines("agent snapshot").length > snapshots ? true : undefined), 15_000);
    expect(count("watch expired (410 Gone): listing again")).toBeGreaterThan(expired);
    expect(count("listed again")).toBeGreaterThan(relists);
    expect(await metric("arc_reaper_agent_connected", `{cluster="default"}`)).toBe(1);
    await viewHolds(3);
  });

  it("soak: runners come and go while the link is cut and the agent restarts; 0 wrongful deletions, 0 left behind", async () => {
    const ROUNDS = 6;
    const condemned = new Map<string, { uid: string; graceEnd: number }>();
    const spared = new Set<string>();
    let disconnects = 0;
    const seen = (msg: string) => stack.logLines(msg).length;
    for (let round = 0; round < ROUNDS; round++) {
      const runBase = 1000 + round * 10;
      const names = ["cancl", "runng", "idlex", "repld"].map((k) => `arc-runners-soak${round}-runner-${k}`);
      const [cancelled, running, idle, replaced] = names as [string, string, string, string];
      const cancelledUid = await seed(cancelled, runBase + 1);
      await seed(running, runBase + 2);
      await seed(idle);
      await seed(replaced, runBase + 3);
      for (const [n, run] of [
        [cancelled, runBase + 1],
        [running, runBase + 2],
        [replaced, runBase + 3],
      ] as const)
        await job("in_progress", n, run);
      // Disruptions between the facts and the grace end.
      const [gone, views] = [seen("agent disconnected"), seen("agent snapshot")];
      const disrupted = round % 3 !== 2;
      if (round % 3 === 0) {
        stack.relay!.cut();
        disconnects++;
      } else if (round % 3 === 1) {
        await stack.agent!.stop();
        disconnects++;
      }
      // ARC replaces a runner under the same name: the new object is idle and newer than the job.
      await stack.kube.remove(NS, replaced);
      await seed(replaced, undefined, iso(Date.now()));
      const completedAt = iso(Date.now());
      await job("completed", cancelled, runBase + 1, completedAt);
      await job("completed", replaced, runBase + 3, completedAt);
      condemned.set(cancelled, { uid: cancelledUid, graceEnd: Date.parse(completedAt) + GRACE_SECONDS * 1000 });
      for (const n of [running, idle, replaced]) spared.add(n);
      // The ledger saw the link go; the agent comes back (the relay's agent dials again by itself) with a fresh view.
      if (disrupted) await waitFor("the ledger to see the agent go", async () => (seen("agent disconnected") > gone ? true : undefined), 15_000);
      if (!stack.agent!.running) stack.agent!.start();
      if (round % 2 === 1) await stack.sweep();
      if (disrupted) await waitFor("the agent back with its view", async () => (seen("agent snapshot") > views ? true : undefined), 15_000);
    }
    // Past the last grace end, with the agent connected, the sweep repairs whatever the alarms could not do.
    const lastGrace = Math.max(...[...condemned.values()].map((c) => c.graceEnd));
    // Time itself must pass here (the grace periods run out): the one fixed wait left.
    await new Promise((r) => setTimeout(r, Math.max(0, lastGrace + 1000 - Date.now())));
    await waitFor("the agent connected with its view", async () => ((await adminPage()).includes("runners in view") ? true : undefined), 15_000);
    await stack.sweep();
    await stack.sweep();

    const deletes = deletesOf(await stack.kube.calls()).filter((d) => d.path.includes("-soak"));
    const nameOf = (d: KubeCall) => d.path.split("/").pop() ?? "";
    const wrongful = deletes.filter(
      (d) =>
        !condemned.has(nameOf(d)) ||
        (d.body as { preconditions?: { uid?: string } }).preconditions?.uid !== condemned.get(nameOf(d))!.uid ||
        Date.parse(d.time) < condemned.get(nameOf(d))!.graceEnd,
    );
    const leftBehind: string[] = [];
    for (const [name] of condemned) if ((await stack.kube.get(NS, name))?.metadata.deletionTimestamp === undefined) leftBehind.push(name);
    for (const name of spared) expect((await stack.kube.get(NS, name))?.metadata.deletionTimestamp, name).toBeUndefined();
    figures.push(
      `soak: ${ROUNDS * 4} runners over ${ROUNDS} rounds, ${disconnects} disconnects (${Math.ceil(ROUNDS / 3)} cuts, ${Math.floor((ROUNDS + 1) / 3)} agent restarts): ${condemned.size} condemned, ${deletes.length} deleted, ${wrongful.length} wrongful deletions, ${leftBehind.length} left behind`,
    );
    expect(wrongful.map((d) => `${d.path} at ${d.time}`)).toEqual([]);
    expect(leftBehind).toEqual([]);
    expect(deletes).toHaveLength(condemned.size); // one DELETE each: orders are idempotent by uid
    for (const name of condemned.keys()) expect((await row(name))?.state, name).toBe("reaped");
    // The Worker never called the API server: every call was the agent's, under infra/agent's Role.
    const calls = await stack.kube.calls();
    expect(calls.length).toBeGreaterThan(0);
    expect([...new Set(calls.map((c) => c.user))]).toEqual([AGENT_USER]);
    expect(calls.filter((c) => c.status === 403)).toEqual([]);
    // The ledger (workerd, hibernatable socket) answered every ping of the agent's.
    expect(stack.agent!.logs.filter((l) => l.msg.includes("did not answer a ping"))).toEqual([]);
    expect(stack.agent!.logs.filter((l) => l.msg.includes("ledger refused") || l.msg.includes("did not accept"))).toEqual([]);
  }, 120_000);

  it("the ledger answers protocol pings, and a second agent replaces the first (4001)", async () => {
    const ws = new WebSocket(`${stack.url.replace(/^http/, "ws")}/agent`, { headers: { authorization: `Bearer ${stack.agentToken}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const pong = new Promise<string>((resolve) => ws.once("pong", (data) => resolve(String(data))));
    ws.ping("are-you-there");
    expect(await pong).toBe("are-you-there");
    // The real agent was replaced: it logs why and stays away for its longest back-off.
    await waitFor(
      "the agent to hear it was replaced",
      async () => (stack.agent!.logs.some((l) => l.msg.startsWith("another agent replaced this one")) ? true : undefined),
      10_000,
    );
    expect(stack.agent!.logs.filter((l) => l.msg === "disconnected from the ledger").at(-1)?.fields.code).toBe(4001);
    ws.close(1000, "done");
  });
});
