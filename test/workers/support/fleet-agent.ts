// An in-cluster agent for the randomized fleets in agent mode, inside workerd:
// it mirrors the stand-in cluster into the ledger the way the real agent does
// (snapshot, then upserts and removes from a watch) but lags like real ones:
// a watch that stalls (its events come later), a relist (a fresh snapshot that
// drops objects without remove events), and short outages (the link is cut, then
// a new connection and snapshot). Orders are checked against the cluster and
// carried out with the uid precondition, as the agent does.
import type { AgentRunner, DeleteOrder, ReadOrder } from "../../../src/cluster/agent-protocol.ts";
import { toAgentRunner } from "../../../src/agent/runner-view.ts";
import type { KubeTenant } from "../../standins/kube/control.ts";
import { call, type testEnv } from "./worker.ts";

export const FLEET_AGENT_TOKEN = "agent-token-for-the-fleet-0123456789abcdef";

export type SyncMode = "watch" | "stalled" | "relist" | "outage";

export interface FleetAgent {
  /** One step of the agent's life before an alarm or a sweep. */
  sync(mode: SyncMode): Promise<void>;
  /**
   * The cluster's name now points at another cluster (issue 46): the link drops and the next step's hello reports
   * another identity (kube-system's uid) under the same name, whose runners are the ones already shown.
   */
  repoint(): Promise<void>;
  figures: { stalls: number; relists: number; outages: number; orders: number; reads: number; repoints: number };
}

type Env = ReturnType<typeof testEnv>;

export async function fleetAgent(env: Env, kube: KubeTenant, namespaces: string[]): Promise<FleetAgent> {
  let ws: WebSocket | undefined;
  /** What the ledger's view holds, by uid, as this agent last told it. */
  let told = new Map<string, AgentRunner>();
  const figures = { stalls: 0, relists: 0, outages: 0, orders: 0, reads: 0, repoints: 0 };
  // What the real agent reads at start (src/cluster/kube-system-uid.ts): the kube-system namespace's uid.
  const namespace = await fetch(`${kube.baseUrl}/api/v1/namespaces/kube-system`, { headers: { authorization: `Bearer ${kube.adminToken}` } });
  if (namespace.status !== 200) throw new Error(`fleet agent: reading kube-system answered ${namespace.status}`);
  let identity = ((await namespace.json()) as { metadata: { uid: string } }).metadata.uid;
  const send = (m: unknown) => ws?.send(JSON.stringify(m));

  const current = async (): Promise<AgentRunner[]> =>
    (await kube.list())
      .filter((o) => namespaces.includes(o.metadata.namespace))
      // The real agent's reader: what it sends of each object (its runner id included).
      .map((o) => toAgentRunner(o));

  const order = async (o: DeleteOrder): Promise<void> => {
    figures.orders++;
    const report = (outcome: string, why: string) => send({ type: "report", id: o.id, uid: o.uid, outcome, why });
    const object = await kube.get(o.namespace, o.name);
    if (!object || object.metadata.uid !== o.uid) return report("gone", "no object of that uid");
    if (object.status?.workflowRunId !== undefined && object.status.workflowRunId !== o.runId)
      return report("refused", `it works on run ${object.status.workflowRunId}`);
    const res = await fetch(`${kube.baseUrl}/apis/actions.github.com/v1alpha1/namespaces/${o.namespace}/ephemeralrunners/${o.name}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${kube.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ preconditions: { uid: o.uid }, propagationPolicy: "Background" }),
      redirect: "manual",
    });
    const message = String(((await res.json().catch(() => ({}))) as { message?: unknown }).message ?? "");
    if (res.status === 200 || res.status === 202) return report("deleted", "deleted");
    // As the agent does (src/agent/kube-runners.ts): 404, or 409 for the uid precondition only.
    if (res.status === 404 || (res.status === 409 && /precondition failed: uid/i.test(message)))
      return report("gone", `the API server answered ${res.status}: ${message}`);
    return report("failed", `the API server answered ${res.status}`);
  };

  // A read: the cluster's truth now (the agent's GET by name), whatever its watch has sent.
  const read = async (r: ReadOrder): Promise<void> => {
    figures.reads++;
    const o = (await current()).find((x) => x.namespace === r.namespace && x.name === r.name);
    send({ type: "read-report", id: r.id, runner: o ?? null });
  };

  const connect = async (): Promise<void> => {
    const res = await call(
      env,
      new Request("https://arc-reaper.test/agent", { headers: { upgrade: "websocket", authorization: `Bearer ${FLEET_AGENT_TOKEN}` } }),
    );
    if (res.status !== 101 || !res.webSocket) throw new Error(`fleet agent: GET /agent answered ${res.status}`);
    ws = res.webSocket;
    ws.accept();
    ws.addEventListener("message", (e) => {
      const m = JSON.parse(String(e.data)) as DeleteOrder | ReadOrder;
      void (m.type === "read" ? read(m) : order(m));
    });
    send({ type: "hello", version: "0.1.0", namespaces, dryRun: false, identity });
    await snapshot();
  };

  const snapshot = async (): Promise<void> => {
    const listedAt = Date.now();
    const runners = await current();
    // A list is whole as of its start.
    send({
      type: "snapshot",
      id: crypto.randomUUID(),
      part: 1,
      parts: 1,
      runners,
      namespaces: namespaces.map((namespace) => ({ namespace, wholeMsAgo: Date.now() - listedAt })),
    });
    told = new Map(runners.map((r) => [r.uid, r]));
  };

  const watch = async (): Promise<void> => {
    const listedAt = Date.now();
    const now = await current();
    const seen = new Set<string>();
    for (const r of now) {
      seen.add(r.uid);
      if (JSON.stringify(told.get(r.uid)) !== JSON.stringify(r)) send({ type: "upsert", runner: r });
    }
    for (const [uid, r] of told) if (!seen.has(uid)) send({ type: "remove", namespace: r.namespace, name: r.name, uid });
    told = new Map(now.map((r) => [r.uid, r]));
    // Every event up to the list above is sent: a bookmark makes the real agent say so. The list was
    // taken before the events went, so its age is the time since the list began.
    send({ type: "namespaces", namespaces: namespaces.map((namespace) => ({ namespace, wholeMsAgo: Date.now() - listedAt })) });
  };

  // Pacing, not a wait for a condition: each step lets 20 ms of real time pass. The ledger dates facts and the
  // agent's word on freshness by its own real clock, so the time a step takes is part of the seeded scenario:
  // waiting only until the ledger has the messages (as the other agent tests do) changes the figures the fleets print.
  const settle = () => new Promise((r) => setTimeout(r, 20));
  await connect();
  await settle();
  return {
    figures,
    async repoint() {
      figures.repoints++;
      identity = crypto.randomUUID();
      ws?.close(1000, "the cluster name now points at another cluster");
      ws = undefined;
      await settle();
    },
    async sync(mode) {
      if (!ws) {
        await connect(); // back from an outage: a new connection, a fresh snapshot
      } else if (mode === "watch") {
        await watch();
      } else if (mode === "stalled") {
        figures.stalls++; // its events come with a later step
      } else if (mode === "relist") {
        figures.relists++;
        await snapshot();
      } else {
        figures.outages++;
        ws.close(1000, "a short outage");
        ws = undefined;
      }
      await settle();
    },
  };
}
