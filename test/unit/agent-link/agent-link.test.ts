// The ledger's end of GET /agent (src/agent-link/agent-link.ts) on plain Node:
// the Durable Object's sockets are fakes (tags, attachments, close codes), and
// the runtime's WebSocketPair and 101 answer are stood in for; the view is the
// real one over node:sqlite. What matters: a cluster's view is usable only after
// a whole snapshot from its current agent; a replaced or refused agent changes
// nothing; orders go to the runner's own cluster and fail plainly when none is there.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AgentLink, RETIRED_AFTER_MS } from "../../../src/agent-link/agent-link.ts";
import { type AgentRunner, CLOSE_REPLACED, CLUSTER_HEADER } from "../../../src/cluster/agent-protocol.ts";
import { migrate } from "../../../src/ledger/schema.ts";
import { nodeSql } from "../support/node-sql.ts";

class FakeSocket {
  readyState: number = WebSocket.OPEN;
  tags: string[] = [];
  sent: Record<string, unknown>[] = [];
  closes: [number, string][] = [];
  private stored: unknown = null;
  serializeAttachment(a: unknown) {
    this.stored = structuredClone(a);
  }
  deserializeAttachment() {
    return structuredClone(this.stored);
  }
  send(text: string) {
    this.sent.push(JSON.parse(text));
  }
  close(code: number, reason: string) {
    this.closes.push([code, reason]);
    this.readyState = WebSocket.CLOSED;
  }
}

class FakeCtx {
  sockets: FakeSocket[] = [];
  acceptWebSocket(ws: FakeSocket, tags: string[]) {
    ws.tags = tags;
    this.sockets.push(ws);
  }
  getWebSockets(tag: string) {
    return this.sockets.filter((s) => s.tags.includes(tag));
  }
}

const NOW = Date.parse("2026-12-03T10:00:00Z");
const runner = (name: string, namespace = "arc-runners"): AgentRunner => ({
  namespace,
  name,
  uid: `uid-${name}`,
  creationTimestamp: "2026-12-03T09:00:00Z",
  workflowRunId: 7,
});

beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
  vi.stubGlobal(
    "WebSocketPair",
    class {
      0 = new FakeSocket();
      1 = new FakeSocket();
    },
  );
  // workerd's Response takes 101 with a webSocket; Node's refuses any status under 200.
  const NodeResponse = Response;
  vi.stubGlobal(
    "Response",
    class {
      constructor(body: BodyInit | null, init: ResponseInit & { webSocket?: unknown }) {
        // biome-ignore lint/correctness/noConstructorReturn: a stand-in for the runtime's 101 answer
        if (init.status === 101) return { status: 101, webSocket: init.webSocket };
        // biome-ignore lint/correctness/noConstructorReturn: the real Response otherwise
        return new NodeResponse(body, init);
      }
    },
  );
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

function setup() {
  const { sql } = nodeSql();
  migrate(sql);
  const ctx = new FakeCtx();
  const logs: Record<string, unknown>[] = [];
  const completed: string[] = [];
  const link = new AgentLink(ctx as unknown as DurableObjectState, sql, (l) => void logs.push(l as Record<string, unknown>), {
    onViewComplete: (c) => void completed.push(c),
    timeoutMs: 50,
  });
  const connect = (cluster?: string) => {
    const headers: Record<string, string> = { upgrade: "websocket" };
    if (cluster) headers[CLUSTER_HEADER] = cluster;
    const res = link.accept(new Request("https://ledger/agent", { headers }));
    expect(res.status).toBe(101);
    const socket = ctx.sockets.at(-1)!;
    const say = (m: object) => link.message(socket as unknown as WebSocket, JSON.stringify(m));
    return { socket, say };
  };
  return { link, ctx, logs, completed, connect, sql };
}

const hello = (namespaces = ["arc-runners"], cluster?: string) => ({
  type: "hello",
  version: "1.2.3",
  namespaces,
  dryRun: false,
  ...(cluster ? { cluster } : {}),
});
const snapshot = (runners: AgentRunner[], namespaces?: object[]) => ({
  type: "snapshot",
  id: "s1",
  part: 1,
  parts: 1,
  runners,
  ...(namespaces ? { namespaces } : {}),
});

describe("AgentLink: accepting an agent", () => {
  it("refuses anything but a WebSocket upgrade", () => {
    const { link, ctx } = setup();
    const res = link.accept(new Request("https://ledger/agent"));
    expect(res.status).toBe(426);
    expect(ctx.sockets).toHaveLength(0);
  });

  it("the view is usable only after a whole snapshot: no agent, then incomplete, then ready", () => {
    const { link, connect, completed } = setup();
    const port = link.port("default");
    expect(port.unavailable("arc-runners")).toBe("CLUSTER_MODE=agent: no agent is connected");
    const { say } = connect();
    say(hello(["arc-runners"]));
    expect(port.unavailable("arc-runners")).toBe("CLUSTER_MODE=agent: the agent's snapshot is incomplete");
    say(snapshot([runner("r1")], [{ namespace: "arc-runners", wholeMsAgo: 1_000 }]));
    expect(completed).toEqual(["default"]);
    expect(port.unavailable("arc-runners")).toBeUndefined();
    expect(port.unavailable("elsewhere")).toBe("CLUSTER_MODE=agent: the agent does not watch namespace elsewhere (it watches arc-runners)");
    expect(port.runners("arc-runners").map((r) => r.name)).toEqual(["r1"]);
    expect(port.runner("arc-runners", "r1")?.uid).toBe("uid-r1");
    expect(port.wholeAt("arc-runners")).toBe(NOW - 1_000);
  });

  it("names the cluster in what it says of a cluster other than default", () => {
    const { link, connect } = setup();
    expect(link.port("east").unavailable("arc-runners")).toBe("CLUSTER_MODE=agent: no agent of cluster east is connected");
    const { say } = connect("east");
    say(hello(["arc-runners"], "east"));
    expect(link.port("east").unavailable("arc-runners")).toBe("CLUSTER_MODE=agent: the agent's snapshot of cluster east is incomplete");
    say(snapshot([runner("r1")], [{ namespace: "arc-runners", unreadable: "403 forbidden" }]));
    expect(link.port("east").unavailable("arc-runners")).toBe(
      "CLUSTER_MODE=agent: the agent of cluster east cannot read namespace arc-runners (403 forbidden): its runners are kept",
    );
    expect(link.port("default").unavailable("arc-runners")).toBe("CLUSTER_MODE=agent: no agent is connected");
  });

  it("a second agent for a cluster replaces that cluster's only; what the replaced one sends is ignored", async () => {
    const { link, connect, logs } = setup();
    const first = connect("east");
    const west = connect("west");
    first.say(snapshot([runner("old")]));
    const order = link.port("east").order({ namespace: "arc-runners", name: "old", uid: "uid-old", runId: 7, reason: "done" });
    const second = connect("east");
    expect(first.socket.closes).toEqual([[CLOSE_REPLACED, "replaced by a newer agent connection"]]);
    expect(west.socket.closes).toEqual([]);
    expect(await order).toEqual({ outcome: "failed", why: "the agent was replaced before it reported" });
    second.say(snapshot([runner("new")]));
    first.say(snapshot([]));
    first.say({ type: "remove", namespace: "arc-runners", name: "new", uid: "uid-new" });
    expect(logs.filter((l) => l.msg === "agent message from a replaced connection: ignored")).toHaveLength(2);
    expect(
      link
        .port("east")
        .runners("arc-runners")
        .map((r) => r.name),
    ).toEqual(["new"]);
  });
});

describe("AgentLink: messages", () => {
  it("an invalid or binary message closes the socket (1008) and changes nothing", () => {
    const { link, connect } = setup();
    const { socket, say } = connect();
    say(snapshot([runner("r1")]));
    say({ type: "remove", namespace: "arc-runners" });
    expect(socket.closes).toHaveLength(1);
    expect(socket.closes[0]![0]).toBe(1008);
    expect(socket.closes[0]![1]).toMatch(/^invalid message: /);
    expect(socket.closes[0]![1].length).toBeLessThanOrEqual(120);
    link.message(socket as unknown as WebSocket, new ArrayBuffer(2));
    expect(socket.closes[1]).toEqual([1008, "invalid message: a binary message (the protocol is JSON text)"]);
    expect(
      link
        .port("default")
        .runners("arc-runners")
        .map((r) => r.name),
    ).toEqual(["r1"]);
  });

  it("a hello for another cluster than its token's is refused", () => {
    const { link, connect } = setup();
    const { socket, say } = connect("east");
    say(hello(["arc-runners"], "west"));
    expect(socket.closes[0]).toEqual([1008, "invalid message: hello.cluster: expected east (the cluster its token was checked for), got west"]);
    expect(link.status("east").version).toBeNull();
    const d = connect();
    d.say(hello(["arc-runners"]));
    expect(d.socket.closes).toEqual([]);
    expect(link.status("default").version).toBe("1.2.3");
  });

  it("watch events before the snapshot is whole are dropped; after it, they change the view", () => {
    const { link, connect } = setup();
    const { say } = connect();
    say({ type: "upsert", runner: runner("early") });
    say({ type: "namespaces", namespaces: [{ namespace: "arc-runners", unreadable: "403" }] });
    say(snapshot([runner("r1")], [{ namespace: "arc-runners", wholeMsAgo: 0 }]));
    const port = link.port("default");
    expect(port.runners("arc-runners").map((r) => r.name)).toEqual(["r1"]);
    expect(port.unavailable("arc-runners")).toBeUndefined();
    say({ type: "upsert", runner: runner("r2") });
    say({ type: "remove", namespace: "arc-runners", name: "r1", uid: "uid-r1" });
    expect(port.runners("arc-runners").map((r) => r.name)).toEqual(["r2"]);
    expect(port.removedAt("arc-runners", "r1")).toBe(NOW);
  });

  it("before a whole snapshot from this connection, watch events and namespaces leave the stored view as it was", () => {
    const { link, connect } = setup();
    connect().say(snapshot([runner("r1")], [{ namespace: "arc-runners", wholeMsAgo: 0 }]));
    const { say } = connect(); // the agent reconnects: its new snapshot has not come yet
    say({ type: "upsert", runner: runner("r2") });
    say({ type: "remove", namespace: "arc-runners", name: "r1", uid: "uid-r1" });
    say({ type: "namespaces", namespaces: [{ namespace: "arc-runners", unreadable: "403" }] });
    const status = link.status("default");
    expect([status.runners, status.unreadable]).toEqual([1, []]);
    expect(link.port("default").removedAt("arc-runners", "r1")).toBe(0);
  });

  it("a namespace unreadable and then readable again: the view can be judged again", () => {
    const { link, connect, completed, logs } = setup();
    const { say } = connect();
    say(snapshot([], [{ namespace: "arc-runners", wholeMsAgo: 0 }]));
    say({ type: "namespaces", namespaces: [{ namespace: "arc-runners", unreadable: "403" }] });
    expect(logs).toContainEqual({ msg: "agent cannot read a namespace", cluster: "default", namespace: "arc-runners", why: "403" });
    expect(link.port("default").unavailable("arc-runners")).toMatch(/cannot read namespace arc-runners \(403\)/);
    expect(completed).toEqual(["default"]);
    say({ type: "namespaces", namespaces: [{ namespace: "arc-runners", wholeMsAgo: 0 }] });
    expect(completed).toEqual(["default", "default"]);
    expect(link.port("default").unavailable("arc-runners")).toBeUndefined();
  });

  it("the snapshot in progress survives a hibernation (it rides on the socket)", () => {
    const { link, connect } = setup();
    const { say } = connect();
    say({ type: "snapshot", id: "s", part: 1, parts: 2, runners: [runner("a")] });
    say({ type: "snapshot", id: "s", part: 2, parts: 2, runners: [runner("b")] });
    expect(
      link
        .port("default")
        .runners("arc-runners")
        .map((r) => r.name),
    ).toEqual(["a", "b"]);
  });
});

describe("AgentLink: orders, finishes and reads through the port", () => {
  it("without an agent: failed, naming the cluster; a read is false", async () => {
    const { link } = setup();
    const o = { namespace: "arc-runners", name: "r1", uid: "uid-r1", runId: 7, reason: "done" };
    expect(await link.port("east").order(o)).toEqual({ outcome: "failed", why: "no agent of cluster east is connected" });
    expect(await link.port("default").order(o)).toEqual({ outcome: "failed", why: "no agent is connected" });
    expect(await link.port("east").finish(o)).toEqual({ outcome: "failed", why: "no agent of cluster east is connected" });
    expect(await link.port("default").finish(o)).toEqual({ outcome: "failed", why: "no agent is connected" });
    expect(await link.port("default").read("arc-runners", "r1")).toBe(false);
  });

  it("sent on the cluster's own socket; its answer comes back through message", async () => {
    const { link, connect } = setup();
    const east = connect("east");
    const west = connect("west");
    east.say(snapshot([]));
    const port = link.port("east");
    const o = { namespace: "arc-runners", name: "r1", uid: "uid-r1", runId: 7, reason: "done" };
    const order = port.order(o);
    const finish = port.finish({ namespace: "arc-runners", name: "r1", uid: "uid-r1", reason: "stuck" });
    const read = port.read("arc-runners", "r1");
    expect(west.socket.sent).toEqual([]);
    expect(east.socket.sent.map((m) => m.type)).toEqual(["order", "finish", "read"]);
    const [so, sf, sr] = east.socket.sent as { id: string }[];
    east.say({ type: "report", id: so!.id, uid: "uid-r1", outcome: "deleted", why: "deleted" });
    east.say({ type: "finish-report", id: sf!.id, uid: "uid-r1", outcome: "finished", why: "finalizers removed" });
    east.say({ type: "read-report", id: sr!.id, runner: runner("r1") });
    expect(await order).toEqual({ outcome: "deleted", why: "deleted" });
    expect(await finish).toEqual({ outcome: "finished", why: "finalizers removed" });
    expect(await read).toBe(true);
    expect(port.runner("arc-runners", "r1")?.uid).toBe("uid-r1");
  });

  it("an order the agent never answers ends after the link's timeout, with no report", async () => {
    vi.useFakeTimers({ now: NOW, toFake: ["Date", "setTimeout", "clearTimeout"] });
    const { link, connect } = setup();
    const { socket } = connect();
    let report: unknown = "waiting";
    void link
      .port("default")
      .order({ namespace: "arc-runners", name: "r1", uid: "uid-r1", runId: 7, reason: "done" })
      .then((r) => {
        report = r;
      });
    expect(socket.sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(49);
    expect(report).toBe("waiting");
    await vi.advanceTimersByTimeAsync(1); // setup's timeoutMs: 50
    expect(report).toBeUndefined();
  });

  it("a namespace the agent said nothing of: available, whole never; no agent: whole never", () => {
    const { link, connect } = setup();
    const { socket, say } = connect();
    say(hello(["arc-runners", "quiet"]));
    say(snapshot([], [{ namespace: "arc-runners", wholeMsAgo: 0 }]));
    expect(link.port("default").unavailable("quiet")).toBeUndefined();
    expect(link.port("default").wholeAt("quiet")).toBe(0);
    expect(link.port("default").wholeAt("arc-runners")).toBe(NOW);
    socket.readyState = WebSocket.CLOSED;
    expect(link.port("default").wholeAt("arc-runners")).toBe(0);
  });

  it("an agent that disconnects fails what it was asked", async () => {
    const { link, connect } = setup();
    const { socket } = connect();
    const order = link.port("default").order({ namespace: "arc-runners", name: "r1", uid: "uid-r1", runId: 7, reason: "done" });
    link.closed(socket as unknown as WebSocket, 1006, "gone");
    expect(await order).toEqual({ outcome: "failed", why: "the agent disconnected before it reported" });
  });
});

describe("AgentLink: a new instance over the same storage and sockets (after an eviction)", () => {
  it("knows the current connection, takes its messages, and still ignores the replaced one", () => {
    const { link, ctx, sql, connect } = setup();
    const first = connect();
    const { socket, say } = connect();
    say(snapshot([runner("r1")], [{ namespace: "arc-runners", wholeMsAgo: 0 }]));
    const again = new AgentLink(ctx as unknown as DurableObjectState, sql, () => undefined);
    expect(again.port("default").unavailable("arc-runners")).toBeUndefined();
    again.message(socket as unknown as WebSocket, JSON.stringify({ type: "upsert", runner: runner("r2") }));
    again.message(first.socket as unknown as WebSocket, JSON.stringify({ type: "upsert", runner: runner("r3") }));
    expect(
      again
        .port("default")
        .runners("arc-runners")
        .map((r) => r.name),
    ).toEqual(["r1", "r2"]);
    expect(link.status("default").runners).toBe(2);
  });

  it("knows each cluster's own current connection", () => {
    const { ctx, sql, connect } = setup();
    const east = connect("east");
    const west = connect("west");
    const again = new AgentLink(ctx as unknown as DurableObjectState, sql, () => undefined);
    again.message(east.socket as unknown as WebSocket, JSON.stringify(snapshot([runner("e1")])));
    again.message(west.socket as unknown as WebSocket, JSON.stringify(snapshot([runner("w1")])));
    expect([again.status("east").complete, again.status("west").complete]).toEqual([true, true]);
    expect(
      again
        .port("east")
        .runners("arc-runners")
        .map((r) => r.name),
    ).toEqual(["e1"]);
  });
});

describe("AgentLink: disconnects, clusters and status", () => {
  it("a close is answered (1005/1006 as 1000), and the time the cluster lost its agent is kept", () => {
    const { link, connect } = setup();
    const a = connect("east");
    a.socket.readyState = WebSocket.CLOSED;
    link.closed(a.socket as unknown as WebSocket, 1006, "x".repeat(200));
    expect(a.socket.closes).toEqual([[1000, "x".repeat(120)]]);
    expect(link.status("east").disconnectedAt).toBe(new Date(NOW).toISOString());
    const b = connect("west");
    b.socket.readyState = WebSocket.CLOSED;
    link.closed(b.socket as unknown as WebSocket, 4000, "bye");
    expect(b.socket.closes).toEqual([[4000, "bye"]]);
    const c = connect("north");
    link.closed(c.socket as unknown as WebSocket, 1005, "");
    expect(c.socket.closes).toEqual([[1000, ""]]);
  });

  it("a replaced socket's close does not mark a cluster whose new agent is connected as disconnected", () => {
    const { link, connect } = setup();
    const first = connect("east");
    connect("east");
    link.closed(first.socket as unknown as WebSocket, 1000, "replaced");
    expect(link.status("east").connected).toBe(true);
    expect(link.status("east").disconnectedAt).toBeNull();
  });

  it("clusters: AGENT_CLUSTERS and the connected ones; without it every cluster ever seen; default before any", () => {
    const { link, connect } = setup();
    expect(link.clusters([])).toEqual(["default"]);
    expect(link.clusters(["b", "a"])).toEqual(["a", "b"]);
    const east = connect("east");
    connect("west");
    east.socket.readyState = WebSocket.CLOSED;
    link.closed(east.socket as unknown as WebSocket, 1000, "bye");
    east.socket.tags = []; // the runtime forgets a closed socket
    expect(link.clusters([])).toEqual(["east", "west"]);
    expect(link.clusters(["north"])).toEqual(["north", "west"]);
  });

  it("retired: only with AGENT_CLUSTERS, a cluster out of it, with no agent, gone at least an hour", () => {
    const { link, connect } = setup();
    expect(link.retired([])).toBeUndefined();
    const east = connect("east");
    const retired = link.retired(["north"])!;
    expect(retired("east", NOW + RETIRED_AFTER_MS)).toBe(false); // connected
    east.socket.readyState = WebSocket.CLOSED;
    link.closed(east.socket as unknown as WebSocket, 1000, "bye");
    expect(retired("east", NOW + RETIRED_AFTER_MS - 1)).toBe(false);
    expect(retired("east", NOW + RETIRED_AFTER_MS)).toBe(true);
    expect(retired("north", NOW + 10 * RETIRED_AFTER_MS)).toBe(false); // expected
    expect(retired("never-seen", RETIRED_AFTER_MS)).toBe(true);
  });

  it("status: what the agent said and what the view holds", () => {
    const { link, connect } = setup();
    expect(link.statuses(["east"])).toEqual([
      {
        cluster: "east",
        expected: true,
        connected: false,
        complete: false,
        connectedAt: null,
        completeAt: null,
        disconnectedAt: null,
        version: null,
        namespaces: [],
        unreadable: [],
        wholeAt: {},
        dryRun: null,
        runners: 0,
      },
    ]);
    const { say } = connect("east");
    say({ ...hello(["arc-runners", "locked"], "east"), dryRun: true });
    vi.advanceTimersByTime(5_000);
    say(
      snapshot(
        [runner("r1"), runner("r2")],
        [
          { namespace: "arc-runners", wholeMsAgo: 2_000 },
          { namespace: "locked", unreadable: "403" },
        ],
      ),
    );
    expect(link.status("east", true)).toEqual({
      cluster: "east",
      expected: true,
      connected: true,
      complete: true,
      connectedAt: new Date(NOW).toISOString(),
      completeAt: new Date(NOW + 5_000).toISOString(),
      disconnectedAt: null,
      version: "1.2.3",
      namespaces: ["arc-runners", "locked"],
      unreadable: [{ namespace: "locked", why: "403" }],
      wholeAt: { "arc-runners": new Date(NOW + 3_000).toISOString(), locked: null },
      dryRun: true,
      runners: 2,
    });
    expect(link.statuses([]).map((s) => [s.cluster, s.expected])).toEqual([["east", false]]);
  });
});
