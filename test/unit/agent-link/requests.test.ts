// The agent link's one matcher of requests and answers (src/agent-link): a read
// that times out is not the end of it: its late answer lands in the view (as of
// when it was asked) and the connection is asked to read again; answers from
// another connection, or to no request, are ignored.
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentRequests, READ_TIMEOUT_MS } from "../../../src/agent-link/requests.ts";
import type { AgentRunner, ReadOrder } from "../../../src/cluster/agent-protocol.ts";
import { AGENT_API_TIMEOUT_MS } from "../../../src/cluster/agent-protocol.ts";
import { AgentViewTable } from "../../../src/ledger/agent-view-table.ts";
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
