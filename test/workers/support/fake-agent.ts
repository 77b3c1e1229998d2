// A fake in-cluster agent inside workerd: it dials GET /agent, says hello, sends
// what a test gives it and answers orders. Shared by the agent-mode tests.
import { expect } from "vitest";
import type { AgentRunner, DeleteOrder, FinishOrder, FinishOrderOutcome, ReadOrder } from "../../../src/cluster/agent-protocol.ts";
import { before, NS } from "./stack.ts";
import { workflowJobPayload } from "./payloads.ts";
import { runInDurableObject } from "cloudflare:test";
import { waitFor } from "./wait-for.ts";
import { call, configureLedger, deliver, ledgerOf, testEnv } from "./worker.ts";

export const AGENT_TOKEN = "agent-token-for-workers-tests-0123456789";
export const REPO = "octo-org/octo-repo";
const NOW = Date.now();

export const agentEnv = (over: Record<string, string | undefined> = {}) =>
  testEnv({ CLUSTER_MODE: "agent", AGENT_TOKEN, KUBE_API_URL: undefined, KUBE_TOKEN: undefined, ...over });

export function dial(env: ReturnType<typeof testEnv>, headers: Record<string, string>): Promise<Response> {
  return call(env, new Request("https://arc-reaper.test/agent", { headers }));
}

export interface Agent {
  ws: WebSocket;
  orders: DeleteOrder[];
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  /** Answers every order with this outcome (none: orders go unanswered). */
  answer: "deleted" | "refused" | undefined;
  /** Finish orders (REAPER_FINISH_STUCK) the ledger sent. */
  finishes: FinishOrder[];
  /** Answers every finish order with this outcome (none: unanswered). */
  finishAnswer: FinishOrderOutcome | undefined;
  /** Reads the ledger asked for (namespace/name). */
  reads: string[];
  /** How a read is answered: the runner, null (404), or undefined: "cannot read" (as an agent without the API server would). */
  readAnswer: (namespace: string, name: string) => AgentRunner | null | undefined;
  /**
   * The namespaces of its last hello. A snapshot's last part sent without `namespaces` gets them,
   * each whole as of now (as the real agent says of a namespace it has just listed).
   */
  namespaces: string[];
  /** Says each namespace is whole as of now, as a watch bookmark makes the real agent say. */
  fresh(namespaces?: string[]): void;
  /** Reads are answered this long after they came (a slow API server). */
  readDelayMs: number;
}

/** An agent of the cluster "default" with AGENT_TOKEN, or of `opts.cluster` with the token given (its HMAC token, in the tests of many clusters). */
export async function connect(env: ReturnType<typeof testEnv>, opts: { cluster?: string; token?: string } = {}): Promise<Agent> {
  const named: Record<string, string> = opts.cluster === undefined ? {} : { "x-arc-reaper-cluster": opts.cluster };
  const res = await dial(env, { upgrade: "websocket", authorization: `Bearer ${opts.token ?? AGENT_TOKEN}`, ...named });
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const agent: Agent = {
    ws,
    orders: [],
    answer: "deleted",
    finishes: [],
    finishAnswer: "finished",
    reads: [],
    readAnswer: () => undefined,
    closed: new Promise((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason }))),
    namespaces: [NS],
    readDelayMs: 0,
    // A message to a socket the ledger already closed (a replaced agent answering late) is dropped, as the network would.
    send: (m) => {
      const message = m as { type?: string; part?: number; parts?: number; namespaces?: unknown };
      if (message.type === "hello" && Array.isArray(message.namespaces)) agent.namespaces = message.namespaces as string[];
      const whole =
        message.type === "snapshot" && message.part === message.parts && message.namespaces === undefined
          ? { namespaces: agent.namespaces.map((namespace) => ({ namespace, wholeMsAgo: 0 })) }
          : {};
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ ...message, ...whole }));
    },
    fresh: (namespaces) => agent.send({ type: "namespaces", namespaces: (namespaces ?? agent.namespaces).map((namespace) => ({ namespace, wholeMsAgo: 0 })) }),
  };
  ws.addEventListener("message", (e) => {
    const message = JSON.parse(String(e.data)) as DeleteOrder | ReadOrder | FinishOrder;
    if (message.type === "finish") {
      agent.finishes.push(message);
      if (agent.finishAnswer)
        agent.send({ type: "finish-report", id: message.id, uid: message.uid, outcome: agent.finishAnswer, why: `the fake agent says ${agent.finishAnswer}` });
      return;
    }
    if (message.type === "read") {
      agent.reads.push(`${message.namespace}/${message.name}`);
      const answer = () => {
        const runner = agent.readAnswer(message.namespace, message.name);
        agent.send(
          runner === undefined
            ? { type: "read-report", id: message.id, runner: null, why: "this fake agent cannot read" }
            : { type: "read-report", id: message.id, runner },
        );
      };
      if (agent.readDelayMs > 0) setTimeout(answer, agent.readDelayMs);
      else answer();
      return;
    }
    const order = message;
    agent.orders.push(order);
    if (agent.answer)
      agent.send({ type: "report", id: order.id, uid: order.uid, outcome: agent.answer, why: agent.answer === "deleted" ? "deleted" : "dry run" });
  });
  const cluster = opts.cluster === undefined || opts.cluster === "default" ? {} : { cluster: opts.cluster };
  agent.send({ type: "hello", version: "0.1.0", namespaces: [NS], dryRun: false, ...cluster });
  return agent;
}

export const runner = (name: string, o: Partial<AgentRunner> = {}): AgentRunner => ({
  namespace: NS,
  name,
  uid: `uid-${name}`,
  creationTimestamp: before(NOW, 86_400),
  ...o,
});

/** A job on `name` in run `runId` that completed 600 s ago: due at once. */
export async function completed(env: ReturnType<typeof testEnv>, name: string, runId: number): Promise<void> {
  const res = await deliver(
    env,
    "workflow_job",
    workflowJobPayload("completed", {
      runner: name,
      repo: REPO,
      runId,
      runAttempt: 1,
      jobId: runId * 10,
      installationId: 4242,
      startedAt: before(NOW, 900),
      completedAt: before(NOW, 600),
      conclusion: "cancelled",
    }),
  );
  expect(res.status).toBe(202);
}

/** What the ledger has taken in of one cluster's agent: its view's runners and the uids the watch removed. */
export interface LedgerView {
  /** A whole snapshot arrived on the current connection. */
  complete: boolean;
  runners: { name: string; uid: string; deletionTimestamp: string | null }[];
  removed: string[];
}

/**
 * Waits until the ledger has taken in what the agent sent, as `probe` says, instead of a fixed wait: the agent's
 * messages reach the ledger over a WebSocket, after `send` returns.
 */
export async function untilLedger(env: ReturnType<typeof testEnv>, what: string, probe: (view: LedgerView) => boolean, cluster = "default"): Promise<void> {
  await configureLedger(env);
  await waitFor(`the ledger to take in ${what}`, async () => {
    const complete = (await ledgerOf(env).agentStatus(cluster)).complete;
    const view = await runInDurableObject(ledgerOf(env), (_i, state) => ({
      runners: state.storage.sql
        .exec<{ name: string; uid: string; deletion_timestamp: string | null }>(
          "SELECT name, uid, deletion_timestamp FROM agent_view WHERE cluster = ?",
          cluster,
        )
        .toArray()
        .map((r) => ({ name: r.name, uid: r.uid, deletionTimestamp: r.deletion_timestamp })),
      removed: state.storage.sql
        .exec<{ uid: string }>("SELECT uid FROM agent_removed WHERE cluster = ?", cluster)
        .toArray()
        .map((r) => r.uid),
    }));
    return probe({ complete, ...view });
  });
}
