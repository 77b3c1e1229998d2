// The agent link's one matcher of requests and answers (src/agent-link): a read
// that times out is not the end of it: its late answer lands in the view (as of
// when it was asked) and the connection is asked to read again; answers from
// another connection, or to no request, are ignored.
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentRequests, READ_TIMEOUT_MS } from "../../../src/agent-link/requests.ts";
import type { AgentRunner, ReadOrder } from "../../../src/cluster/agent-protocol.ts";
import { AGENT_API_TIMEOUT_MS } from "../../../src/cluster/agent-protocol.ts";
import { AgentViewTable } from "../../../src/agent-link/agent-view-table.ts";
import { migrate } from "../../../src/ledger/schema.ts";
import { nodeSql } from "../support/node-sql.ts";

const runner: AgentRunner = {
  namespace: "arc-runners",
  name: "arc-runners-x-runner-1",
  uid: "u-1",
  creationTimestamp: "2026-11-30T10:00:00Z",
  workflowRunId: 5,
};

function fakeView() {
  const landed: string[] = [];
  const view = {
    upsertRead: (r: AgentRunner) => landed.push(`upsert ${r.namespace}/${r.name}`) > 0,
    absentByRead: (ns: string, name: string, at: number) => landed.push(`absent ${ns}/${name} as of ${at}`),
  } as unknown as AgentViewTable;
  return { view, landed };
}

describe("AgentRequests: reads", () => {
  it("waits at least as long as the agent's own GET may take", () => {
    expect(READ_TIMEOUT_MS).toBeGreaterThanOrEqual(AGENT_API_TIMEOUT_MS);
  });

  it("a read that timed out: its late answer lands in the view, and the connection is asked to read again", async () => {
    const requests = new AgentRequests(() => undefined, { readTimeoutMs: 20 });
    const { view, landed } = fakeView();
    const sent: ReadOrder[] = [];
    const send = (m: object) => sent.push(m as ReadOrder);
    expect(await requests.read("default", "c1", send, runner.namespace, runner.name)).toBe(false); // timed out
    // While it stays silent, the next read is not waited on (nor sent).
    expect(await requests.read("default", "c1", send, runner.namespace, "other")).toBe(false);
    expect(sent).toHaveLength(1);
    // The late answer lands, and reads are on again.
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[0]!.id, runner });
    expect(landed).toEqual([`upsert ${runner.namespace}/${runner.name}`]);
    const again = requests.read("default", "c1", send, runner.namespace, "third");
    expect(sent).toHaveLength(2);
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[1]!.id, runner: null });
    expect(await again).toBe(true);
    expect(landed[1]).toMatch(/^absent arc-runners\/third as of \d+$/);
  });

  it("ignores an answer from another connection, or to a read never sent", async () => {
    const requests = new AgentRequests(() => undefined, { readTimeoutMs: 50 });
    const { view, landed } = fakeView();
    const sent: ReadOrder[] = [];
    const pending = requests.read("default", "c1", (m) => sent.push(m as ReadOrder), runner.namespace, runner.name);
    requests.readReport("default", "c2", view, { type: "read-report", id: sent[0]!.id, runner });
    requests.readReport("default", "c1", view, { type: "read-report", id: "never-sent", runner });
    expect(await pending).toBe(false);
    expect(landed).toEqual([]);
  });
});

describe("AgentRequests: a late read against the real view", () => {
  afterEach(() => vi.useRealTimers());
  const setup = () => {
    vi.useFakeTimers({ now: Date.parse("2026-12-01T10:00:00Z"), toFake: ["Date"] });
    const { sql } = nodeSql();
    migrate(sql);
    const view = new AgentViewTable(sql, "default");
    const requests = new AgentRequests(() => undefined);
    const sent: ReadOrder[] = [];
    const pending = requests.read("default", "c1", (m) => sent.push(m as ReadOrder), runner.namespace, runner.name);
    return { view, requests, sent, pending };
  };

  it("an answer read before the watch saw the runner leave does not bring it back", async () => {
    const { view, requests, sent, pending } = setup();
    view.upsert(runner);
    // The agent's GET found it; then the watch's DELETED event arrives before the read report does.
    view.remove(runner.namespace, runner.name, runner.uid, Date.now());
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[0]!.id, runner });
    expect(await pending).toBe(true);
    expect(view.get(runner.namespace, runner.name)).toBeUndefined();
  });

  it("an answer older than a later read that found none does not bring it back; a newer object of the name lands", async () => {
    const { view, requests, sent, pending } = setup();
    vi.advanceTimersByTime(1_000);
    const later = requests.read("default", "c1", (m) => sent.push(m as ReadOrder), runner.namespace, runner.name);
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[1]!.id, runner: null });
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[0]!.id, runner });
    expect([await pending, await later]).toEqual([true, true]);
    expect(view.get(runner.namespace, runner.name)).toBeUndefined();
    vi.advanceTimersByTime(1_000);
    const next = requests.read("default", "c1", (m) => sent.push(m as ReadOrder), runner.namespace, runner.name);
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[2]!.id, runner: { ...runner, uid: "u-2" } });
    expect(await next).toBe(true);
    expect(view.get(runner.namespace, runner.name)?.uid).toBe("u-2");
  });
});

describe("AgentRequests: orders", () => {
  it("matches a report by id, connection and uid; one in flight per uid; a silent connection is not waited on again until it speaks", async () => {
    const requests = new AgentRequests(() => undefined, { orderTimeoutMs: 20 });
    const sent: { id: string; uid: string }[] = [];
    const send = (m: object) => sent.push(m as { id: string; uid: string });
    const order = { namespace: "arc-runners", name: runner.name, uid: "u-1", runId: 5, reason: "done" };
    const first = requests.order("default", "c1", send, order);
    expect(requests.order("default", "c1", send, order)).toBe(first);
    requests.report("c1", { type: "report", id: sent[0]!.id, uid: "u-other", outcome: "deleted", why: "x" });
    expect(await first).toBeUndefined(); // the wrong uid is no answer: it timed out
    expect(await requests.order("default", "c1", send, { ...order, uid: "u-2" })).toBeUndefined();
    expect(sent).toHaveLength(1);
    requests.heard("c1");
    const third = requests.order("default", "c1", send, { ...order, uid: "u-3" });
    requests.report("c1", { type: "report", id: sent[1]!.id, uid: "u-3", outcome: "deleted", why: "deleted" });
    expect(await third).toEqual({ outcome: "deleted", why: "deleted" });
  });
});

describe("AgentRequests: what an order carries and how it ends", () => {
  const order = { namespace: "arc-runners", name: runner.name, uid: "u-1", runId: 5, reason: "done" };

  it("an order's reason is cut to 2,000 characters; its report is logged with the cluster (none for default)", async () => {
    const logs: Record<string, unknown>[] = [];
    const requests = new AgentRequests((l) => void logs.push(l as Record<string, unknown>));
    const sent: Record<string, unknown>[] = [];
    const send = (m: object) => void sent.push(m as Record<string, unknown>);
    const east = requests.order("east", "c1", send, { ...order, reason: "x".repeat(2_001) });
    expect(sent[0]).toEqual({ type: "order", id: sent[0]!.id, ...order, reason: "x".repeat(2_000) });
    requests.report("c1", { type: "report", id: sent[0]!.id as string, uid: "u-1", outcome: "gone", why: "404" });
    expect(await east).toEqual({ outcome: "gone", why: "404" });
    expect(logs.map((l) => [l.msg, l.cluster])).toEqual([
      ["agent order", "east"],
      ["agent report", "east"],
    ]);
    expect(logs[1]).toMatchObject({ id: sent[0]!.id, uid: "u-1", outcome: "gone", why: "404" });
    const dflt = requests.order("default", "c1", send, { ...order, uid: "u-2" });
    requests.report("c1", { type: "report", id: sent[1]!.id as string, uid: "u-2", outcome: "deleted", why: "deleted" });
    await dflt;
    expect(logs.slice(2).every((l) => !("cluster" in l))).toBe(true);
  });

  it("an order that could not be sent fails at once, naming why; the uid may be ordered again", async () => {
    const requests = new AgentRequests(() => undefined);
    const broken = () => {
      throw new Error("socket closed");
    };
    expect(await requests.order("default", "c1", broken, order)).toEqual({ outcome: "failed", why: "the order could not be sent: socket closed" });
    const sent: object[] = [];
    const again = requests.order("default", "c1", (m) => void sent.push(m), order);
    expect(sent).toHaveLength(1);
    requests.dropConn("c1", "gone");
    await again;
  });

  it("a connection that closes fails its orders and finish orders with why, and reads with false; it is waited on again", async () => {
    const requests = new AgentRequests(() => undefined, { orderTimeoutMs: 20, readTimeoutMs: 20 });
    const sent: object[] = [];
    const send = (m: object) => void sent.push(m);
    const o = requests.order("default", "c1", send, order);
    const f = requests.finish("default", "c1", send, order);
    const r = requests.read("default", "c1", send, runner.namespace, runner.name);
    const kept = requests.order("default", "c2", send, { ...order, uid: "u-9" });
    requests.dropConn("c1", "the agent disconnected before it reported");
    expect(await o).toEqual({ outcome: "failed", why: "the agent disconnected before it reported" });
    expect(await f).toEqual({ outcome: "failed", why: "the agent disconnected before it reported" });
    expect(await r).toBe(false);
    expect(await kept).toBeUndefined(); // c2's order was not c1's to fail: it timed out
    // c2 let an order time out: not waited on; after dropConn, c2 is waited on again.
    expect(await requests.order("default", "c2", send, { ...order, uid: "u-10" })).toBeUndefined();
    const before = sent.length;
    expect(await requests.read("default", "c1", send, runner.namespace, runner.name)).toBe(false); // times out
    expect(sent.length).toBe(before + 1);
    requests.dropConn("c2", "replaced");
    requests.dropConn("c1", "replaced");
    void requests.order("default", "c2", send, { ...order, uid: "u-11" });
    void requests.read("default", "c1", send, runner.namespace, runner.name);
    expect(sent.length).toBe(before + 3);
    requests.dropConn("c1", "end");
    requests.dropConn("c2", "end");
  });
});

describe("AgentRequests: finish orders", () => {
  const order = { namespace: "arc-runners", name: runner.name, uid: "u-1", reason: "stuck" };

  it("matches a finish report by id, connection and uid; the reason is cut; the report is logged", async () => {
    const logs: Record<string, unknown>[] = [];
    const requests = new AgentRequests((l) => void logs.push(l as Record<string, unknown>), { orderTimeoutMs: 50 });
    const sent: Record<string, unknown>[] = [];
    const f = requests.finish("east", "c1", (m) => void sent.push(m as Record<string, unknown>), { ...order, reason: "y".repeat(3_000) });
    expect(sent[0]).toEqual({ type: "finish", id: sent[0]!.id, ...order, reason: "y".repeat(2_000) });
    const id = sent[0]!.id as string;
    requests.finishReport("c2", { type: "finish-report", id, uid: "u-1", outcome: "finished", why: "other conn" });
    requests.finishReport("c1", { type: "finish-report", id, uid: "u-2", outcome: "finished", why: "other uid" });
    requests.finishReport("c1", { type: "finish-report", id, uid: "u-1", outcome: "conflict", why: "409" });
    expect(await f).toEqual({ outcome: "conflict", why: "409" });
    expect(logs.filter((l) => l.msg === "agent finish report for no waiting order")).toHaveLength(2);
    expect(logs.at(-1)).toMatchObject({
      msg: "agent finish report",
      cluster: "east",
      namespace: order.namespace,
      name: order.name,
      outcome: "conflict",
      why: "409",
    });
  });

  it("unanswered: undefined, and that connection is not waited on again until it speaks", async () => {
    const logs: Record<string, unknown>[] = [];
    const requests = new AgentRequests((l) => void logs.push(l as Record<string, unknown>), { orderTimeoutMs: 20 });
    const sent: object[] = [];
    const send = (m: object) => void sent.push(m);
    expect(await requests.finish("default", "c1", send, order)).toBeUndefined();
    expect(logs.at(-1)).toMatchObject({ msg: "agent finish report", outcome: "none", why: "no report" });
    expect(await requests.finish("default", "c1", send, order)).toBeUndefined();
    expect(sent).toHaveLength(1);
    requests.heard("c1");
    void requests.finish("default", "c1", send, order);
    expect(sent).toHaveLength(2);
    requests.dropConn("c1", "end");
  });

  it("a finish order that could not be sent fails at once, naming why", async () => {
    const requests = new AgentRequests(() => undefined);
    const broken = () => {
      throw new Error("socket closed");
    };
    expect(await requests.finish("default", "c1", broken, order)).toEqual({ outcome: "failed", why: "the finish order could not be sent: socket closed" });
  });
});

describe("AgentRequests: read failures", () => {
  it("a read that could not be sent is false at once", async () => {
    const requests = new AgentRequests(() => undefined);
    const broken = () => {
      throw new Error("socket closed");
    };
    expect(await requests.read("default", "c1", broken, runner.namespace, runner.name)).toBe(false);
  });

  it("a read the agent could not make is false, changes nothing in the view, and is logged with why", async () => {
    const logs: Record<string, unknown>[] = [];
    const requests = new AgentRequests((l) => void logs.push(l as Record<string, unknown>));
    const { view, landed } = fakeView();
    const sent: ReadOrder[] = [];
    const r = requests.read("east", "c1", (m) => sent.push(m as ReadOrder), runner.namespace, runner.name);
    expect(sent[0]).toEqual({ type: "read", id: sent[0]!.id, namespace: runner.namespace, name: runner.name });
    requests.readReport("east", "c1", view, { type: "read-report", id: sent[0]!.id, runner, why: "403 forbidden" });
    expect(await r).toBe(false);
    expect(landed).toEqual([]);
    expect(logs).toEqual([{ msg: "agent read failed", cluster: "east", namespace: runner.namespace, name: runner.name, why: "403 forbidden" }]);
    // Answered once: a second answer to the same id is for no read.
    requests.readReport("east", "c1", view, { type: "read-report", id: sent[0]!.id, runner });
    expect(landed).toEqual([]);
  });

  it("an answer about another runner than the one asked lands nothing", async () => {
    const requests = new AgentRequests(() => undefined);
    const { view, landed } = fakeView();
    const sent: ReadOrder[] = [];
    for (const other of [
      { ...runner, name: "other" },
      { ...runner, namespace: "other-ns" },
    ]) {
      const r = requests.read("default", "c1", (m) => sent.push(m as ReadOrder), runner.namespace, runner.name);
      requests.readReport("default", "c1", view, { type: "read-report", id: sent.at(-1)!.id, runner: other });
      expect(await r).toBe(true);
    }
    expect(landed).toEqual([]);
  });

  it("an answer the view refuses (older than a removal) and a late answer are logged", async () => {
    const logs: Record<string, unknown>[] = [];
    const requests = new AgentRequests((l) => void logs.push(l as Record<string, unknown>), { readTimeoutMs: 10 });
    const view = { upsertRead: () => false } as unknown as AgentViewTable;
    const sent: ReadOrder[] = [];
    expect(await requests.read("default", "c1", (m) => sent.push(m as ReadOrder), runner.namespace, runner.name)).toBe(false);
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[0]!.id, runner });
    expect(logs.map((l) => l.msg)).toEqual([
      "agent read unanswered in time: not waited on again until this connection answers a read",
      "agent read report older than the runner's removal: not put back",
      "agent read report came late: it lands in the view",
    ]);
    expect(logs[0]).toMatchObject({ cluster: "default", namespace: runner.namespace, name: runner.name, ms: 10 });
  });
});

describe("AgentRequests: reads remembered for a late answer", () => {
  it("the last 1,000 reads sent are remembered; an answer to an older one is for no read", async () => {
    const requests = new AgentRequests(() => undefined);
    const { view, landed } = fakeView();
    const sent: ReadOrder[] = [];
    const answers = Array.from({ length: 1_001 }, (_, i) => requests.read("default", "c1", (m) => sent.push(m as ReadOrder), runner.namespace, `r-${i}`));
    requests.dropConn("c1", "gone");
    await Promise.all(answers);
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[0]!.id, runner: null });
    expect(landed).toEqual([]);
    requests.readReport("default", "c1", view, { type: "read-report", id: sent[1]!.id, runner: null });
    expect(landed).toEqual([expect.stringMatching(/^absent arc-runners\/r-1 as of /)]);
  });
});
