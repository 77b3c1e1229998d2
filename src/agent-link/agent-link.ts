// The ledger's end of GET /agent (agent mode): one WebSocket per cluster,
// accepted with the Hibernation API and tagged with its cluster, its messages
// read strictly and applied to that cluster's view (snapshot.ts), and orders
// and reads sent to the runner's own cluster and matched with their answers
// (requests.ts). A second agent for a cluster replaces that cluster's only; what
// a replaced socket still sends is ignored, so an old connection never empties
// or overwrites the new one's view. What must outlive a hibernation rides on the
// socket's attachment (attachment.ts); the view and its freshness are in SQL.
import { CLOSE_REPLACED, CLOSE_RESTARTING, CLUSTER_HEADER, DEFAULT_CLUSTER, type AgentMessage } from "../cluster/agent-protocol.ts";
import type { AgentPort } from "../cluster/agent-cluster.ts";
import { parseAgentMessage } from "../cluster/parse-agent-message.ts";
import { AgentViewTable, type NamespaceState } from "./agent-view-table.ts";
import { CountersTable } from "../ledger/counters-table.ts";
import { MemoryTable } from "../ledger/memory-table.ts";
import type { Sql } from "../ledger/sql.ts";
import { AGENT_TAG, attachment, clusterOfAttachment, clusterTag, CLUSTERS_KEY, connKey, disconnectedKey, type Attachment } from "./attachment.ts";
import { AgentRequests } from "./requests.ts";
import { takeSnapshotPart } from "./snapshot.ts";
import { errorText } from "../model/error-text.ts";
/** How long a cluster left out of AGENT_CLUSTERS must have had no agent before its rows close as gone. */
export const RETIRED_AFTER_MS = 60 * 60_000;
/** An invalid message from the agent closes its socket with this code (policy violation); it reconnects and sends a fresh snapshot. */
const CLOSE_INVALID = 1008;

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
  /** The namespaces the agent says it cannot read now, and why: their runners are kept as ambiguous. */
  unreadable: { namespace: string; why: string }[];
  /** When each namespace's cache was last whole (as the agent says), or null when it never said. */
  wholeAt: Record<string, string | null>;
  dryRun: boolean | null;
  runners: number;
}

type Log = (fields: object) => void;

export class AgentLink {
  private readonly ctx: DurableObjectState;
  private readonly sql: Sql;
  private readonly memory: MemoryTable;
  private readonly log: Log;
  private readonly requests: AgentRequests;
  /** A cache of each cluster's current connection id (the truth is in memory, `agent-conn:<cluster>`). */
  private readonly currentConn = new Map<string, string>();
  /**
   * The server is stopping (drain()): no new agent is accepted by this instance. An instance field, not the
   * ledger's: it is this process's fate, which the next process must not inherit. An instance the runtime
   * recreated meanwhile accepts again, and the pod's grace period still bounds the stop.
   */
  private draining = false;
  /** Called when a cluster's view can be judged again: a complete snapshot, or a namespace readable again. */
  private readonly onViewComplete: (cluster: string) => void;

  constructor(ctx: DurableObjectState, sql: Sql, log: Log, opts: { onViewComplete?: (cluster: string) => void; timeoutMs?: number } = {}) {
    this.ctx = ctx;
    this.sql = sql;
    this.onViewComplete = opts.onViewComplete ?? (() => undefined);
    this.memory = new MemoryTable(sql);
    this.log = log;
    this.requests = new AgentRequests(log, opts.timeoutMs === undefined ? {} : { orderTimeoutMs: opts.timeoutMs });
  }

  /**
   * The upgrade the Worker forwarded, its cluster (X-Arc-Reaper-Cluster) and token already checked:
   * accepts it, replacing the agent already connected for that cluster, and no other.
   */
  accept(request: Request): Response {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    if (this.draining) return new Response("the server is stopping: connect to the next one", { status: 503, headers: { "retry-after": "1" } });
    const cluster = request.headers.get(CLUSTER_HEADER) || DEFAULT_CLUSTER;
    for (const old of this.ctx.getWebSockets(clusterTag(cluster))) {
      try {
        old.close(CLOSE_REPLACED, "replaced by a newer agent connection");
      } catch {
        // already closing
      }
      this.requests.dropConn(attachment(old).conn, "the agent was replaced before it reported");
    }
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server, [AGENT_TAG, clusterTag(cluster)]);
    const conn = crypto.randomUUID();
    server.serializeAttachment({ conn, cluster, connectedAt: Date.now() } satisfies Attachment);
    this.memory.set(connKey(cluster), conn);
    this.currentConn.set(cluster, conn);
    const known = this.memory.get(CLUSTERS_KEY) ?? [];
    if (!known.includes(cluster)) this.memory.set(CLUSTERS_KEY, [...known, cluster].sort());
    this.log({ msg: "agent connected", cluster });
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * The server is stopping (the pod's preStop, before SIGTERM): every agent is told to reconnect (close 1012,
   * CLOSE_RESTARTING) and no new one is accepted here, so that workerd, which drains without a timeout of its
   * own, has no open WebSocket to wait for. Answers how many sockets it closed.
   */
  drain(): number {
    this.draining = true;
    let closed = 0;
    for (const socket of this.ctx.getWebSockets(AGENT_TAG)) {
      try {
        socket.close(CLOSE_RESTARTING, "the server is restarting: reconnect");
        closed++;
      } catch {
        // already closing
      }
    }
    this.log({ msg: "draining: agents told to reconnect", closed });
    return closed;
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
      this.refuse(socket, cluster, errorText(e));
      return;
    }
    this.requests.heard(at.conn);
    const view = new AgentViewTable(this.sql, cluster);
    switch (message.type) {
      case "hello":
        if ((message.cluster ?? DEFAULT_CLUSTER) !== cluster) {
          this.refuse(socket, cluster, `hello.cluster: expected ${cluster} (the cluster its token was checked for), got ${message.cluster ?? DEFAULT_CLUSTER}`);
          return;
        }
        at.hello = { version: message.version, namespaces: message.namespaces, dryRun: message.dryRun };
        this.log({
          msg: "agent hello",
          cluster,
          version: message.version,
          namespaces: message.namespaces,
          dryRun: message.dryRun,
          identity: message.identity ?? null,
        });
        this.noteIdentity(cluster, message.identity);
        break;
      case "snapshot":
        if (takeSnapshotPart(at, view, message, this.log, Date.now())) {
          socket.serializeAttachment(at);
          this.memory.delete(disconnectedKey(cluster));
          this.onViewComplete(cluster);
          return;
        }
        break;
      case "namespaces":
        if (at.completeAt === undefined) return;
        if (view.setNamespaces(message.namespaces, Date.now(), false).length > 0) this.onViewComplete(cluster);
        for (const n of message.namespaces)
          if (n.unreadable !== undefined) this.log({ msg: "agent cannot read a namespace", cluster, namespace: n.namespace, why: n.unreadable });
        return;
      case "upsert":
        if (at.completeAt !== undefined) view.upsert(message.runner);
        return;
      case "remove":
        if (at.completeAt !== undefined) view.remove(message.namespace, message.name, message.uid, Date.now());
        return;
      case "report":
        this.requests.report(at.conn, message);
        return;
      case "finish-report":
        this.requests.finishReport(at.conn, message);
        return;
      case "read-report":
        this.requests.readReport(cluster, at.conn, view, message);
        return;
    }
    socket.serializeAttachment(at);
  }

  closed(socket: WebSocket, code: number, reason: string): void {
    this.requests.dropConn(attachment(socket).conn, "the agent disconnected before it reported");
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
    const send = (socket: WebSocket) => (m: object) => socket.send(JSON.stringify(m));
    return {
      unavailable: (namespace) => {
        const socket = this.current(cluster);
        if (socket === undefined) return `CLUSTER_MODE=agent: no agent${where} is connected`;
        const at = attachment(socket);
        if (at.completeAt === undefined) return `CLUSTER_MODE=agent: the agent's snapshot${where} is incomplete`;
        if (at.hello && !at.hello.namespaces.includes(namespace)) {
          return `CLUSTER_MODE=agent: the agent${where} does not watch namespace ${namespace} (it watches ${at.hello.namespaces.join(", ")})`;
        }
        const unreadable = view.namespace(namespace)?.unreadable;
        if (unreadable) return `CLUSTER_MODE=agent: the agent${where} cannot read namespace ${namespace} (${unreadable}): its runners are kept`;
        return undefined;
      },
      runners: (namespace) => view.list(namespace),
      wholeAt: (namespace) => (this.current(cluster) ? (view.namespace(namespace)?.wholeAt ?? 0) : 0),
      removedAt: (namespace, name) => view.removedAt(namespace, name),
      runner: (namespace, name) => view.get(namespace, name),
      order: (order) => {
        const socket = this.current(cluster);
        if (socket === undefined) return Promise.resolve({ outcome: "failed", why: `no agent${where} is connected` });
        return this.requests.order(cluster, attachment(socket).conn, send(socket), order);
      },
      finish: (order) => {
        const socket = this.current(cluster);
        if (socket === undefined) return Promise.resolve({ outcome: "failed", why: `no agent${where} is connected` });
        return this.requests.finish(cluster, attachment(socket).conn, send(socket), order);
      },
      read: (namespace, name) => {
        const socket = this.current(cluster);
        if (socket === undefined) return Promise.resolve(false);
        return this.requests.read(cluster, attachment(socket).conn, send(socket), namespace, name);
      },
    };
  }

  /**
   * The clusters the reaper watches: AGENT_CLUSTERS and every connected one; without
   * AGENT_CLUSTERS, every cluster whose agent ever connected (so an agent away keeps its
   * cluster's runners held, never judged gone), or "default" before any did.
   */
  clusters(expected: readonly string[]): string[] {
    const connected = this.ctx.getWebSockets(AGENT_TAG).map((s) => clusterOfAttachment(attachment(s)));
    const base = expected.length > 0 ? expected : (this.memory.get(CLUSTERS_KEY) ?? []);
    const all = [...new Set([...base, ...connected])].sort();
    return all.length > 0 ? all : [DEFAULT_CLUSTER];
  }

  /**
   * With AGENT_CLUSTERS, a cluster not in it whose agent is not connected and left at least
   * RETIRED_AFTER_MS before `now` (or was never seen leaving) is retired: nothing will look there again,
   * so its rows close as gone. An agent that restarts is back well within that; without AGENT_CLUSTERS
   * no cluster is retired (an agent away keeps its rows held).
   */
  retired(expected: readonly string[]): ((cluster: string, now: number) => boolean) | undefined {
    if (expected.length === 0) return undefined;
    return (cluster, now) =>
      !expected.includes(cluster) && this.current(cluster) === undefined && now - (this.memory.get(disconnectedKey(cluster)) ?? 0) >= RETIRED_AFTER_MS;
  }

  /** Whether an agent of `cluster` is connected now. */
  connected(cluster: string): boolean {
    return this.current(cluster) !== undefined;
  }

  /** Each watched cluster's agent (AGENT_CLUSTERS, connected, known), by name. */
  statuses(expected: readonly string[]): AgentStatus[] {
    return this.clusters(expected).map((c) => this.status(c, expected.includes(c)));
  }

  status(cluster: string, expected = false): AgentStatus {
    const socket = this.current(cluster);
    const at = socket ? attachment(socket) : undefined;
    const iso = (ms: number | undefined) => (ms === undefined || ms === 0 ? null : new Date(ms).toISOString());
    const view = new AgentViewTable(this.sql, cluster);
    const states: NamespaceState[] = socket ? view.namespaces() : [];
    return {
      cluster,
      expected,
      connected: socket !== undefined,
      complete: at?.completeAt !== undefined,
      connectedAt: iso(at?.connectedAt),
      completeAt: iso(at?.completeAt),
      disconnectedAt: socket ? null : iso(this.memory.get(disconnectedKey(cluster))),
      version: at?.hello?.version ?? null,
      namespaces: at?.hello?.namespaces ?? [],
      unreadable: states.filter((s) => s.unreadable !== null).map((s) => ({ namespace: s.namespace, why: s.unreadable ?? "" })),
      wholeAt: Object.fromEntries(states.map((s) => [s.namespace, iso(s.wholeAt)])),
      dryRun: at?.hello?.dryRun ?? null,
      runners: view.count(),
    };
  }

  // --- inside ------------------------------------------------------------------

  /** What the cluster name points at, as its agent's hello says (none: unknown, no runner id trusted); a change is logged and counted. */
  private noteIdentity(cluster: string, uid: string | undefined): void {
    const at = Date.now();
    if (uid === undefined) {
      this.memory.noteClusterIdentity(cluster, {
        source: "agent",
        at,
        why: "the agent's hello carries no identity (an older agent, or kube-system not readable)",
      });
      this.log({ msg: "cluster identity unknown", reason: "ClusterIdentityUnknown", cluster });
      return;
    }
    const { changedFrom } = this.memory.noteClusterIdentity(cluster, { uid, source: "agent", at });
    if (changedFrom === undefined) return;
    new CountersTable(this.sql).add("arc_reaper_cluster_identity_changes_total", { cluster });
    this.log({ msg: "cluster identity changed", reason: "ClusterIdentityChanged", cluster, from: changedFrom, to: uid });
  }

  private refuse(socket: WebSocket, cluster: string, why: string): void {
    this.log({ msg: "agent message refused: closing the connection", cluster, why });
    try {
      socket.close(CLOSE_INVALID, `invalid message: ${why}`.slice(0, 120));
    } catch {
      // already closing
    }
  }

  /** The cluster's current connection id: the last one accepted. */
  private conn(cluster: string): string | undefined {
    let conn = this.currentConn.get(cluster);
    if (conn === undefined) {
      conn = this.memory.get(connKey(cluster));
      if (conn !== undefined) this.currentConn.set(cluster, conn);
    }
    return conn;
  }

  /** The cluster's open agent socket: its current connection, never a replaced one still closing. */
  private current(cluster: string): WebSocket | undefined {
    const conn = this.conn(cluster);
    return this.ctx.getWebSockets(clusterTag(cluster)).find((s) => s.readyState === WebSocket.OPEN && attachment(s).conn === conn);
  }
}
