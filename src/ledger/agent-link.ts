// The ledger's end of GET /agent (agent mode): one WebSocket per cluster,
// accepted with the Hibernation API and tagged with its cluster, its messages
// read strictly and applied to that cluster's view, and delete orders sent to
// the runner's own cluster and matched with their reports. A second agent for
// a cluster replaces that cluster's only; what a replaced socket still sends is
// ignored, so an old connection never empties or overwrites the new one's view.
// What must outlive a hibernation (the hello, the snapshot in progress, whether
// the view is complete) rides on the socket's attachment; the view is in SQL.
// Only the reports awaited right now live in memory: an order always runs
// inside an alarm or a sweep, which keeps the instance awake while it waits.
import { CLOSE_REPLACED, CLUSTER_HEADER, DEFAULT_CLUSTER, type AgentMessage, type DeleteOrder, type OrderOutcome, type ReadOrder } from "../cluster/agent-protocol.ts";
import type { AgentPort } from "../cluster/agent-cluster.ts";
import { parseAgentMessage } from "../cluster/parse-agent-message.ts";
import { AgentViewTable } from "./agent-view-table.ts";
import { MemoryTable } from "./memory-table.ts";
import type { Sql } from "./sql.ts";

export const AGENT_TAG = "agent";
/** An order without a report by then is failed; the next snapshot or order settles it. */
export const ORDER_TIMEOUT_MS = 10_000;
/** A read without an answer by then leaves the view as it was; that connection is not asked to read again. */
export const READ_TIMEOUT_MS = 3_000;
/** An invalid message from the agent closes its socket with this code (policy violation); it reconnects and sends a fresh snapshot. */
const CLOSE_INVALID = 1008;
const MAX_REASON = 2000;

/** What rides on the agent's socket across hibernation. */
interface Attachment {
  /** This connection's own id: socket objects may be new ones after a hibernation. */
  conn: string;
  /** The cluster the Worker admitted it for. */
  cluster?: string;
  connectedAt: number;
  hello?: { version: string; namespaces: string[]; dryRun: boolean };
  /** The snapshot whose parts are arriving, and the part expected next. */
  incoming?: { id: string; next: number; parts: number };
  /** When the last complete snapshot arrived: from then on the view is whole. */
  completeAt?: number;
}

export interface AgentStatus {
  cluster: string;
  /** Named in AGENT_CLUSTERS. */
  expected: boolean;
  connected: boolean;
  /** A complete snapshot has arrived on the current connection. */
  complete: boolean;
  connectedAt: string | null;
  completeAt: string | null;
  /** When the last agent disconnected (while none is connected). */
  disconnectedAt: string | null;
  version: string | null;
  namespaces: string[];
  dryRun: boolean | null;
  runners: number;
}

interface Awaited {
  uid: string;
  conn: string;
  resolve: (report: { outcome: OrderOutcome; why: string } | undefined) => void;
  timer: ReturnType<typeof setTimeout>;
}

type Log = (fields: object) => void;

export class AgentLink {
  private readonly ctx: DurableObjectState;
  private readonly sql: Sql;
  private readonly memory: MemoryTable;
  private readonly log: Log;
  private readonly timeoutMs: number;
  /** Orders awaiting their report, by order id; and the in-flight order of each uid (orders are idempotent by uid). */
  private readonly awaiting = new Map<string, Awaited>();
  private readonly byUid = new Map<string, Promise<{ outcome: OrderOutcome; why: string } | undefined>>();
  /** Connections that let an order time out and have sent nothing since: further orders fail at once instead of each waiting. */
  private readonly stalled = new Set<string>();
  /** Reads awaiting their answer, by id; connections that let one time out (an agent that does not read). */
  private readonly reading = new Map<string, { conn: string; namespace: string; name: string; resolve: (fresh: boolean) => void; timer: ReturnType<typeof setTimeout> }>();
  private readonly noReads = new Set<string>();
  /** A cache of each cluster's current connection id (the truth is in memory, `agent-conn:<cluster>`). */
  private readonly currentConn = new Map<string, string>();

  /** Called when a cluster's complete snapshot has arrived (its view is whole again). */
  private readonly onViewComplete: (cluster: string) => void;

  constructor(ctx: DurableObjectState, sql: Sql, log: Log, opts: { onViewComplete?: (cluster: string) => void; timeoutMs?: number } = {}) {
    this.ctx = ctx;
    this.sql = sql;
    this.onViewComplete = opts.onViewComplete ?? (() => undefined);
    this.memory = new MemoryTable(sql);
    this.log = log;
    this.timeoutMs = opts.timeoutMs ?? ORDER_TIMEOUT_MS;
  }

  /**
   * The upgrade the Worker forwarded, its cluster (X-Arc-Reaper-Cluster) and token already checked:
   * accepts it, replacing the agent already connected for that cluster, and no other.
   */
  accept(request: Request): Response {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    const cluster = request.headers.get(CLUSTER_HEADER) || DEFAULT_CLUSTER;
    for (const old of this.ctx.getWebSockets(clusterTag(cluster))) {
      try {
        old.close(CLOSE_REPLACED, "replaced by a newer agent connection");
      } catch {
        // already closing
      }
      this.failAwaiting(old, "the agent was replaced before it reported");
    }
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server, [AGENT_TAG, clusterTag(cluster)]);
    const conn = crypto.randomUUID();
    server.serializeAttachment({ conn, cluster, connectedAt: Date.now() } satisfies Attachment);
    this.memory.set(connKey(cluster), conn);
    this.currentConn.set(cluster, conn);
    const known = this.memory.get<string[]>(CLUSTERS_KEY) ?? [];
    if (!known.includes(cluster)) this.memory.set(CLUSTERS_KEY, [...known, cluster].sort());
    this.log({ msg: "agent connected", cluster });
    return new Response(null, { status: 101, webSocket: client });
  }

  message(socket: WebSocket, data: string | ArrayBuffer): void {
    const at = attachment(socket);
    const cluster = clusterOfAttachment(at);
    if (at.conn !== this.conn(cluster)) {
      // A replaced connection still closing: the new one's view is the cluster's.
      this.log({ msg: "agent message from a replaced connection: ignored", cluster });
      return;
    }
    let message: AgentMessage;
    try {
      if (typeof data !== "string") throw new Error("a binary message (the protocol is JSON text)");
      message = parseAgentMessage(data);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.log({ msg: "agent message refused: closing the connection", cluster, why });
      try {
        socket.close(CLOSE_INVALID, `invalid message: ${why}`.slice(0, 120));
      } catch {
        // already closing
      }
      return;
    }
    this.stalled.delete(at.conn);
    const view = new AgentViewTable(this.sql, cluster);
    switch (message.type) {
      case "hello":
        if ((message.cluster ?? DEFAULT_CLUSTER) !== cluster) {
          const why = `hello.cluster: expected ${cluster} (the cluster its token was checked for), got ${message.cluster ?? DEFAULT_CLUSTER}`;
          this.log({ msg: "agent message refused: closing the connection", cluster, why });
          socket.close(CLOSE_INVALID, why.slice(0, 120));
          return;
        }
        at.hello = { version: message.version, namespaces: message.namespaces, dryRun: message.dryRun };
        this.log({ msg: "agent hello", cluster, version: message.version, namespaces: message.namespaces, dryRun: message.dryRun });
        break;
      case "snapshot":
        this.snapshotPart(at, view, message);
        break;
      case "upsert":
        if (at.completeAt !== undefined) view.upsert(message.runner);
        return;
      case "remove":
        if (at.completeAt !== undefined) view.remove(message.namespace, message.name, message.uid, Date.now());
        return;
      case "report":
        this.report(socket, message);
        return;
      case "read-report":
        this.readReport(at.conn, view, message);
        return;
    }
    socket.serializeAttachment(at);
  }

  closed(socket: WebSocket, code: number, reason: string): void {
    this.failAwaiting(socket, "the agent disconnected before it reported");
    this.stalled.delete(attachment(socket).conn);
    try {
      socket.close(code === 1005 || code === 1006 ? 1000 : code, reason.slice(0, 120));
    } catch {
      // the runtime already answered the close
    }
    const cluster = clusterOfAttachment(attachment(socket));
    if (this.current(cluster) === undefined) this.memory.set(disconnectedKey(cluster), Date.now());
    this.log({ msg: "agent disconnected", cluster, code, reason: reason.slice(0, 200) });
  }

  // --- what the reaper sees ------------------------------------------------------

  /** One cluster's agent, as agentCluster (src/cluster/agent-cluster.ts) uses it. */
  port(cluster: string): AgentPort {
    const view = new AgentViewTable(this.sql, cluster);
    const where = cluster === DEFAULT_CLUSTER ? "" : ` of cluster ${cluster}`;
    return {
      unavailable: (namespace) => {
        const socket = this.current(cluster);
        if (socket === undefined) return `CLUSTER_MODE=agent: no agent${where} is connected`;
        const at = attachment(socket);
        if (at.completeAt === undefined) return `CLUSTER_MODE=agent: the agent's snapshot${where} is incomplete`;
        if (at.hello && !at.hello.namespaces.includes(namespace)) {
          return `CLUSTER_MODE=agent: the agent${where} does not watch namespace ${namespace} (it watches ${at.hello.namespaces.join(", ")})`;
        }
        return undefined;
      },
      runners: (namespace) => view.list(namespace),
      completeAt: () => {
        const socket = this.current(cluster);
        return (socket && attachment(socket).completeAt) ?? 0;
      },
      removedAt: (namespace, name) => view.removedAt(namespace, name),
      runner: (namespace, name) => view.get(namespace, name),
      order: (order) => this.order(cluster, order),
      read: (namespace, name) => this.read(cluster, namespace, name),
    };
  }

  /**
   * The clusters the reaper watches: AGENT_CLUSTERS and every connected one; without
   * AGENT_CLUSTERS, every cluster whose agent ever connected (so an agent away keeps its
   * cluster's runners held, never judged gone), or "default" before any did.
   */
  clusters(expected: readonly string[]): string[] {
    const connected = this.ctx.getWebSockets(AGENT_TAG).map((s) => clusterOfAttachment(attachment(s)));
    const base = expected.length > 0 ? expected : (this.memory.get<string[]>(CLUSTERS_KEY) ?? []);
    const all = [...new Set([...base, ...connected])].sort();
    return all.length > 0 ? all : [DEFAULT_CLUSTER];
  }

  /** Asks the cluster's agent to read one runner from the API server; answers whether a fresh answer came (and is in the view). */
  private read(cluster: string, namespace: string, name: string): Promise<boolean> {
    const socket = this.current(cluster);
    if (socket === undefined) return Promise.resolve(false);
    const conn = attachment(socket).conn;
    if (this.noReads.has(conn)) return Promise.resolve(false);
    const id = crypto.randomUUID();
    const answered = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.noReads.add(conn);
        this.reading.delete(id);
        this.log({ msg: "agent read unanswered: this connection is not asked to read again", cluster, namespace, name });
        resolve(false);
      }, READ_TIMEOUT_MS);
      this.reading.set(id, { conn, namespace, name, resolve, timer });
    });
    try {
      socket.send(JSON.stringify({ type: "read", id, namespace, name } satisfies ReadOrder));
    } catch {
      this.settleRead(id, false);
    }
    return answered;
  }

  private readReport(conn: string, view: AgentViewTable, m: Extract<AgentMessage, { type: "read-report" }>): void {
    const waiting = this.reading.get(m.id);
    if (!waiting || waiting.conn !== conn) return;
    if (m.why !== undefined) {
      this.log({ msg: "agent read failed", why: m.why });
      this.settleRead(m.id, false);
      return;
    }
    // The API server's answer now: the object as it is, or (404) fresh evidence that none of that name is there.
    if (m.runner && m.runner.namespace === waiting.namespace && m.runner.name === waiting.name) view.upsert(m.runner);
    else if (m.runner === null) view.absentByRead(waiting.namespace, waiting.name, Date.now());
    this.settleRead(m.id, true);
  }

  private settleRead(id: string, fresh: boolean): void {
    const waiting = this.reading.get(id);
    if (!waiting) return;
    this.reading.delete(id);
    clearTimeout(waiting.timer);
    waiting.resolve(fresh);
  }

  private order(cluster: string, order: Omit<DeleteOrder, "type" | "id">): Promise<{ outcome: OrderOutcome; why: string } | undefined> {
    const inFlight = this.byUid.get(order.uid);
    if (inFlight) return inFlight;
    const socket = this.current(cluster);
    if (socket === undefined) return Promise.resolve({ outcome: "failed", why: `no agent${cluster === DEFAULT_CLUSTER ? "" : ` of cluster ${cluster}`} is connected` });
    const conn = attachment(socket).conn;
    if (this.stalled.has(conn)) return Promise.resolve(undefined);
    const id = crypto.randomUUID();
    const sentAt = Date.now();
    const report = new Promise<{ outcome: OrderOutcome; why: string } | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.stalled.add(conn);
        this.settle(id, undefined);
      }, this.timeoutMs);
      this.awaiting.set(id, { uid: order.uid, conn, resolve, timer });
    }).then((r) => {
      this.byUid.delete(order.uid);
      this.log({ msg: "agent report", id, cluster, namespace: order.namespace, name: order.name, uid: order.uid, outcome: r?.outcome ?? "none", why: r?.why ?? "no report", ms: Date.now() - sentAt });
      return r;
    });
    this.byUid.set(order.uid, report);
    const message: DeleteOrder = { type: "order", id, ...order, reason: order.reason.slice(0, MAX_REASON) };
    this.log({ msg: "agent order", id, cluster, namespace: order.namespace, name: order.name, uid: order.uid, runId: order.runId });
    try {
      socket.send(JSON.stringify(message));
    } catch (e) {
      this.settle(id, { outcome: "failed", why: `the order could not be sent: ${e instanceof Error ? e.message : String(e)}` });
    }
    return report;
  }

  /** Each watched cluster's agent (AGENT_CLUSTERS, connected, known), by name. */
  statuses(expected: readonly string[]): AgentStatus[] {
    return this.clusters(expected).map((c) => this.status(c, expected.includes(c)));
  }

  status(cluster: string, expected = false): AgentStatus {
    const socket = this.current(cluster);
    const at = socket ? attachment(socket) : undefined;
    const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
    return {
      cluster,
      expected,
      connected: socket !== undefined,
      complete: at?.completeAt !== undefined,
      connectedAt: iso(at?.connectedAt),
      completeAt: iso(at?.completeAt),
      disconnectedAt: socket ? null : iso(this.memory.get<number>(disconnectedKey(cluster))),
      version: at?.hello?.version ?? null,
      namespaces: at?.hello?.namespaces ?? [],
      dryRun: at?.hello?.dryRun ?? null,
      runners: new AgentViewTable(this.sql, cluster).count(),
    };
  }

  // --- inside ------------------------------------------------------------------

  /** The cluster's current connection id: the last one accepted. */
  private conn(cluster: string): string | undefined {
    let conn = this.currentConn.get(cluster);
    if (conn === undefined) {
      conn = this.memory.get<string>(connKey(cluster));
      if (conn !== undefined) this.currentConn.set(cluster, conn);
    }
    return conn;
  }

  /** The cluster's open agent socket: its current connection, never a replaced one still closing. */
  private current(cluster: string): WebSocket | undefined {
    const conn = this.conn(cluster);
    return this.ctx.getWebSockets(clusterTag(cluster)).find((s) => s.readyState === WebSocket.OPEN && attachment(s).conn === conn);
  }

  private snapshotPart(at: Attachment, view: AgentViewTable, m: Extract<AgentMessage, { type: "snapshot" }>): void {
    const cluster = clusterOfAttachment(at);
    if (m.part === 1) {
      view.startSnapshot();
      at.incoming = { id: m.id, next: 1, parts: m.parts };
    }
    const incoming = at.incoming;
    if (!incoming || incoming.id !== m.id || incoming.next !== m.part || incoming.parts !== m.parts) {
      // Parts come back to back: anything else is a broken snapshot; the view stays as it was.
      this.log({ msg: "agent snapshot part out of order: ignored", cluster, id: m.id, part: m.part, parts: m.parts, expected: incoming ?? null });
      at.incoming = undefined;
      return;
    }
    view.addToSnapshot(m.runners);
    incoming.next++;
    if (m.part < m.parts) return;
    const runners = view.finishSnapshot();
    at.incoming = undefined;
    at.completeAt = Date.now();
    this.memory.delete(disconnectedKey(cluster));
    this.log({ msg: "agent snapshot", cluster, id: m.id, parts: m.parts, runners });
    this.onViewComplete(cluster);
  }

  private report(socket: WebSocket, m: Extract<AgentMessage, { type: "report" }>): void {
    const waiting = this.awaiting.get(m.id);
    if (!waiting || waiting.uid !== m.uid || waiting.conn !== attachment(socket).conn) {
      // Late (after the timeout) or from an order this instance did not send: the next sweep judges from the view.
      this.log({ msg: "agent report for no waiting order", id: m.id, uid: m.uid, outcome: m.outcome, why: m.why });
      return;
    }
    this.settle(m.id, { outcome: m.outcome, why: m.why });
  }

  private settle(id: string, report: { outcome: OrderOutcome; why: string } | undefined): void {
    const waiting = this.awaiting.get(id);
    if (!waiting) return;
    this.awaiting.delete(id);
    clearTimeout(waiting.timer);
    waiting.resolve(report);
  }

  private failAwaiting(socket: WebSocket, why: string): void {
    const conn = attachment(socket).conn;
    for (const [id, w] of this.awaiting) if (w.conn === conn) this.settle(id, { outcome: "failed", why });
  }
}

const CLUSTERS_KEY = "agent-clusters";
const clusterTag = (cluster: string): string => `cluster:${cluster}`;
const connKey = (cluster: string): string => `agent-conn:${cluster}`;
const disconnectedKey = (cluster: string): string => `agent-disconnected-at:${cluster}`;
const clusterOfAttachment = (at: Attachment): string => at.cluster ?? DEFAULT_CLUSTER;

function attachment(socket: WebSocket): Attachment {
  const at = socket.deserializeAttachment() as Attachment | null;
  return at ?? { conn: "unknown", connectedAt: Date.now() };
}
