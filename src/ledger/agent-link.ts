// The ledger's end of GET /agent (agent mode): the agent's one WebSocket,
// accepted with the Hibernation API, its messages read strictly and applied to
// the agent's view, and delete orders sent and matched with their reports.
// What must outlive a hibernation (the hello, the snapshot in progress, whether
// the view is complete) rides on the socket's attachment; the view is in SQL.
// Only the reports awaited right now live in memory: an order always runs
// inside an alarm or a sweep, which keeps the instance awake while it waits.
import { CLOSE_REPLACED, type AgentMessage, type DeleteOrder, type OrderOutcome } from "../cluster/agent-protocol.ts";
import type { AgentPort } from "../cluster/agent-cluster.ts";
import { parseAgentMessage } from "../cluster/parse-agent-message.ts";
import type { ClusterRunner } from "../model/runner.ts";
import { AgentViewTable } from "./agent-view-table.ts";
import { MemoryTable } from "./memory-table.ts";
import type { Sql } from "./sql.ts";

export const AGENT_TAG = "agent";
/** An order without a report by then is failed; the next snapshot or order settles it. */
export const ORDER_TIMEOUT_MS = 10_000;
/** An invalid message from the agent closes its socket with this code (policy violation); it reconnects and sends a fresh snapshot. */
const CLOSE_INVALID = 1008;
const MAX_REASON = 2000;

/** What rides on the agent's socket across hibernation. */
interface Attachment {
  /** This connection's own id: socket objects may be new ones after a hibernation. */
  conn: string;
  connectedAt: number;
  hello?: { version: string; namespaces: string[]; dryRun: boolean };
  /** The snapshot whose parts are arriving, and the part expected next. */
  incoming?: { id: string; next: number; parts: number };
  /** When the last complete snapshot arrived: from then on the view is whole. */
  completeAt?: number;
}

export interface AgentStatus {
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

export class AgentLink implements AgentPort {
  private readonly ctx: DurableObjectState;
  private readonly view: AgentViewTable;
  private readonly memory: MemoryTable;
  private readonly log: Log;
  private readonly timeoutMs: number;
  /** Orders awaiting their report, by order id; and the in-flight order of each uid (orders are idempotent by uid). */
  private readonly awaiting = new Map<string, Awaited>();
  private readonly byUid = new Map<string, Promise<{ outcome: OrderOutcome; why: string } | undefined>>();
  /** A connection that let an order time out and has sent nothing since: further orders fail at once instead of each waiting. */
  private stalled: string | undefined;

  /** Called when a complete snapshot has arrived (the view is whole again). */
  private readonly onViewComplete: () => void;

  constructor(ctx: DurableObjectState, sql: Sql, log: Log, opts: { onViewComplete?: () => void; timeoutMs?: number } = {}) {
    this.ctx = ctx;
    this.onViewComplete = opts.onViewComplete ?? (() => undefined);
    this.view = new AgentViewTable(sql);
    this.memory = new MemoryTable(sql);
    this.log = log;
    this.timeoutMs = opts.timeoutMs ?? ORDER_TIMEOUT_MS;
  }

  /** The upgrade the Worker forwarded (token already checked): accepts it, replacing any agent already connected. */
  accept(request: Request): Response {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    for (const old of this.ctx.getWebSockets(AGENT_TAG)) {
      try {
        old.close(CLOSE_REPLACED, "replaced by a newer agent connection");
      } catch {
        // already closing
      }
      this.failAwaiting(old, "the agent was replaced before it reported");
    }
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server, [AGENT_TAG]);
    server.serializeAttachment({ conn: crypto.randomUUID(), connectedAt: Date.now() } satisfies Attachment);
    this.log({ msg: "agent connected" });
    return new Response(null, { status: 101, webSocket: client });
  }

  message(socket: WebSocket, data: string | ArrayBuffer): void {
    let message: AgentMessage;
    try {
      if (typeof data !== "string") throw new Error("a binary message (the protocol is JSON text)");
      message = parseAgentMessage(data);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.log({ msg: "agent message refused: closing the connection", why });
      try {
        socket.close(CLOSE_INVALID, `invalid message: ${why}`.slice(0, 120));
      } catch {
        // already closing
      }
      return;
    }
    const at = attachment(socket);
    if (this.stalled === at.conn) this.stalled = undefined;
    switch (message.type) {
      case "hello":
        at.hello = { version: message.version, namespaces: message.namespaces, dryRun: message.dryRun };
        this.log({ msg: "agent hello", version: message.version, namespaces: message.namespaces, dryRun: message.dryRun });
        break;
      case "snapshot":
        this.snapshotPart(at, message);
        break;
      case "upsert":
        if (at.completeAt !== undefined) this.view.upsert(message.runner);
        return;
      case "remove":
        if (at.completeAt !== undefined) this.view.remove(message.namespace, message.name, message.uid, Date.now());
        return;
      case "report":
        this.report(socket, message);
        return;
    }
    socket.serializeAttachment(at);
  }

  closed(socket: WebSocket, code: number, reason: string): void {
    this.failAwaiting(socket, "the agent disconnected before it reported");
    try {
      socket.close(code === 1005 || code === 1006 ? 1000 : code, reason.slice(0, 120));
    } catch {
      // the runtime already answered the close
    }
    if (this.current() === undefined) this.memory.set("agent-disconnected-at", Date.now());
    this.log({ msg: "agent disconnected", code, reason: reason.slice(0, 200) });
  }

  // --- what the reaper sees (AgentPort) ---------------------------------------

  unavailable(namespace: string): string | undefined {
    const socket = this.current();
    if (socket === undefined) return "CLUSTER_MODE=agent: no agent is connected";
    const at = attachment(socket);
    if (at.completeAt === undefined) return "CLUSTER_MODE=agent: the agent's snapshot is incomplete";
    if (at.hello && !at.hello.namespaces.includes(namespace)) {
      return `CLUSTER_MODE=agent: the agent does not watch namespace ${namespace} (it watches ${at.hello.namespaces.join(", ")})`;
    }
    return undefined;
  }

  runners(namespace: string): ClusterRunner[] {
    return this.view.list(namespace);
  }

  completeAt(): number {
    const socket = this.current();
    return (socket && attachment(socket).completeAt) ?? 0;
  }

  removedAt(namespace: string, name: string): number {
    return this.view.removedAt(namespace, name);
  }

  runner(namespace: string, name: string): ClusterRunner | undefined {
    return this.view.get(namespace, name);
  }

  order(order: Omit<DeleteOrder, "type" | "id">): Promise<{ outcome: OrderOutcome; why: string } | undefined> {
    const inFlight = this.byUid.get(order.uid);
    if (inFlight) return inFlight;
    const socket = this.current();
    if (socket === undefined) return Promise.resolve({ outcome: "failed", why: "no agent is connected" });
    const conn = attachment(socket).conn;
    if (this.stalled === conn) return Promise.resolve(undefined);
    const id = crypto.randomUUID();
    const sentAt = Date.now();
    const report = new Promise<{ outcome: OrderOutcome; why: string } | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.stalled = conn;
        this.settle(id, undefined);
      }, this.timeoutMs);
      this.awaiting.set(id, { uid: order.uid, conn, resolve, timer });
    }).then((r) => {
      this.byUid.delete(order.uid);
      this.log({ msg: "agent report", id, namespace: order.namespace, name: order.name, uid: order.uid, outcome: r?.outcome ?? "none", why: r?.why ?? "no report", ms: Date.now() - sentAt });
      return r;
    });
    this.byUid.set(order.uid, report);
    const message: DeleteOrder = { type: "order", id, ...order, reason: order.reason.slice(0, MAX_REASON) };
    this.log({ msg: "agent order", id, namespace: order.namespace, name: order.name, uid: order.uid, runId: order.runId });
    try {
      socket.send(JSON.stringify(message));
    } catch (e) {
      this.settle(id, { outcome: "failed", why: `the order could not be sent: ${e instanceof Error ? e.message : String(e)}` });
    }
    return report;
  }

  status(): AgentStatus {
    const socket = this.current();
    const at = socket ? attachment(socket) : undefined;
    const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
    return {
      connected: socket !== undefined,
      complete: at?.completeAt !== undefined,
      connectedAt: iso(at?.connectedAt),
      completeAt: iso(at?.completeAt),
      disconnectedAt: socket ? null : iso(this.memory.get<number>("agent-disconnected-at")),
      version: at?.hello?.version ?? null,
      namespaces: at?.hello?.namespaces ?? [],
      dryRun: at?.hello?.dryRun ?? null,
      runners: this.view.count(),
    };
  }

  // --- inside ------------------------------------------------------------------

  /** The open agent socket (the newest, should a replaced one still be closing). */
  private current(): WebSocket | undefined {
    const open = this.ctx.getWebSockets(AGENT_TAG).filter((s) => s.readyState === WebSocket.OPEN);
    return open[open.length - 1];
  }

  private snapshotPart(at: Attachment, m: Extract<AgentMessage, { type: "snapshot" }>): void {
    if (m.part === 1) {
      this.view.startSnapshot();
      at.incoming = { id: m.id, next: 1, parts: m.parts };
    }
    const incoming = at.incoming;
    if (!incoming || incoming.id !== m.id || incoming.next !== m.part || incoming.parts !== m.parts) {
      // Parts come back to back: anything else is a broken snapshot; the view stays as it was.
      this.log({ msg: "agent snapshot part out of order: ignored", id: m.id, part: m.part, parts: m.parts, expected: incoming ?? null });
      at.incoming = undefined;
      return;
    }
    this.view.addToSnapshot(m.runners);
    incoming.next++;
    if (m.part < m.parts) return;
    const runners = this.view.finishSnapshot();
    at.incoming = undefined;
    at.completeAt = Date.now();
    this.memory.delete("agent-disconnected-at");
    this.log({ msg: "agent snapshot", id: m.id, parts: m.parts, runners });
    this.onViewComplete();
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

function attachment(socket: WebSocket): Attachment {
  const at = socket.deserializeAttachment() as Attachment | null;
  return at ?? { conn: "unknown", connectedAt: Date.now() };
}
