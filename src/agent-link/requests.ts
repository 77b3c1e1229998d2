// Delete orders and read orders sent to an agent, matched with their answers by
// one helper (pending.ts). The ledger waits at least as long as the agent's own
// calls may take (AGENT_API_TIMEOUT_MS); a connection that let a request time
// out is not waited on again until it answers something. Every read report,
// late or not, lands in the view: the API server's answer as of when it was asked,
// unless the runner has left since (a late answer never brings a removed one back).
import {
  AGENT_API_TIMEOUT_MS,
  DEFAULT_CLUSTER,
  type AgentMessage,
  type DeleteOrder,
  type FinishOrder,
  type FinishOrderOutcome,
  type OrderOutcome,
  type ReadOrder,
} from "../cluster/agent-protocol.ts";
import type { AgentViewTable } from "./agent-view-table.ts";
import { PendingRequests } from "./pending.ts";
import { errorText } from "../model/error-text.ts";

/** A read is one GET at the agent, bounded by its own timeout; then a margin for the way back. */
export const READ_TIMEOUT_MS = AGENT_API_TIMEOUT_MS + 5_000;
/** An order may be a GET (the object missing from the agent's cache) and a DELETE, each bounded by the agent's timeout. */
export const ORDER_TIMEOUT_MS = 2 * AGENT_API_TIMEOUT_MS + 5_000;
const MAX_REASON = 2000;
/** Reads remembered after their wait ended, so that a late answer still lands (oldest forgotten first). */
const REMEMBERED_READS = 1000;

export type OrderReport = { outcome: OrderOutcome; why: string };
export type FinishReport = { outcome: FinishOrderOutcome; why: string };
type Log = (fields: object) => void;
type Send = (message: DeleteOrder | ReadOrder | FinishOrder) => void;

export class AgentRequests {
  private readonly orders = new PendingRequests<OrderReport>();
  private readonly reads = new PendingRequests<boolean>();
  /** Finish orders (a GET and a PATCH at the agent): waited on like delete orders, keyed by uid. */
  private readonly finishes = new PendingRequests<FinishReport>();
  /** The in-flight order of each uid (orders are idempotent by uid). */
  private readonly byUid = new Map<string, Promise<OrderReport | undefined>>();
  /** Reads sent, by id, until answered (or forgotten): what a late answer is about. */
  private readonly sentReads = new Map<string, { conn: string; namespace: string; name: string; sentAt: number }>();
  /** Connections that let a request time out and have answered nothing since: not waited on. */
  private readonly slowOrders = new Set<string>();
  private readonly slowReads = new Set<string>();
  private readonly log: Log;
  private readonly orderTimeoutMs: number;
  private readonly readTimeoutMs: number;

  constructor(log: Log, opts: { orderTimeoutMs?: number; readTimeoutMs?: number } = {}) {
    this.log = log;
    this.orderTimeoutMs = opts.orderTimeoutMs ?? ORDER_TIMEOUT_MS;
    this.readTimeoutMs = opts.readTimeoutMs ?? READ_TIMEOUT_MS;
  }

  /** Asks the agent on `conn` to read one runner; true once its answer is in the view. */
  read(cluster: string, conn: string, send: Send, namespace: string, name: string): Promise<boolean> {
    if (this.slowReads.has(conn)) return Promise.resolve(false);
    const id = crypto.randomUUID();
    this.sentReads.set(id, { conn, namespace, name, sentAt: Date.now() });
    while (this.sentReads.size > REMEMBERED_READS) this.sentReads.delete(this.sentReads.keys().next().value!);
    const answered = this.reads.wait(id, conn, this.readTimeoutMs, {
      onTimeout: () => {
        this.slowReads.add(conn);
        this.log({
          msg: "agent read unanswered in time: not waited on again until this connection answers a read",
          cluster,
          namespace,
          name,
          ms: this.readTimeoutMs,
        });
      },
    });
    try {
      send({ type: "read", id, namespace, name });
    } catch {
      this.reads.settle(id, false);
    }
    return answered.then((fresh) => fresh ?? false);
  }

  readReport(cluster: string, conn: string, view: AgentViewTable, m: Extract<AgentMessage, { type: "read-report" }>): void {
    const sent = this.sentReads.get(m.id);
    if (!sent || sent.conn !== conn) {
      this.log({ msg: "agent read report for no read sent on this connection: ignored", cluster, id: m.id });
      return;
    }
    this.sentReads.delete(m.id);
    this.slowReads.delete(conn);
    if (m.why !== undefined) {
      this.log({ msg: "agent read failed", cluster, namespace: sent.namespace, name: sent.name, why: m.why });
      this.reads.settle(m.id, false);
      return;
    }
    // The API server's answer as of when it was asked: the object (unless it has left since), or (404) none of that name then.
    if (m.runner && m.runner.namespace === sent.namespace && m.runner.name === sent.name) {
      if (!view.upsertRead(m.runner, sent.sentAt, Date.now()))
        this.log({ msg: "agent read report older than the runner's removal: not put back", cluster, namespace: sent.namespace, name: sent.name });
    } else if (m.runner === null) view.absentByRead(sent.namespace, sent.name, sent.sentAt);
    if (!this.reads.settle(m.id, true))
      this.log({ msg: "agent read report came late: it lands in the view", cluster, namespace: sent.namespace, name: sent.name, ms: Date.now() - sent.sentAt });
  }

  order(cluster: string, conn: string, send: Send, order: Omit<DeleteOrder, "type" | "id">): Promise<OrderReport | undefined> {
    const inFlight = this.byUid.get(order.uid);
    if (inFlight) return inFlight;
    if (this.slowOrders.has(conn)) return Promise.resolve(undefined);
    const id = crypto.randomUUID();
    const sentAt = Date.now();
    const where = cluster === DEFAULT_CLUSTER ? {} : { cluster };
    const report = this.orders.wait(id, conn, this.orderTimeoutMs, { key: order.uid, onTimeout: () => this.slowOrders.add(conn) }).then((r) => {
      this.byUid.delete(order.uid);
      this.log({
        msg: "agent report",
        id,
        ...where,
        namespace: order.namespace,
        name: order.name,
        uid: order.uid,
        outcome: r?.outcome ?? "none",
        why: r?.why ?? "no report",
        ms: Date.now() - sentAt,
      });
      return r;
    });
    this.byUid.set(order.uid, report);
    this.log({ msg: "agent order", id, ...where, namespace: order.namespace, name: order.name, uid: order.uid, runId: order.runId, cause: order.cause });
    try {
      send({ type: "order", id, ...order, reason: order.reason.slice(0, MAX_REASON) });
    } catch (e) {
      this.orders.settle(id, { outcome: "failed", why: `the order could not be sent: ${errorText(e)}` });
    }
    return report;
  }

  /** A finish order (REAPER_FINISH_STUCK): the agent's report, or undefined when none came in time. */
  finish(cluster: string, conn: string, send: Send, order: Omit<FinishOrder, "type" | "id">): Promise<FinishReport | undefined> {
    if (this.slowOrders.has(conn)) return Promise.resolve(undefined);
    const id = crypto.randomUUID();
    const where = cluster === DEFAULT_CLUSTER ? {} : { cluster };
    const report = this.finishes.wait(id, conn, this.orderTimeoutMs, { key: order.uid, onTimeout: () => this.slowOrders.add(conn) });
    this.log({ msg: "agent finish order", id, ...where, namespace: order.namespace, name: order.name, uid: order.uid });
    try {
      send({ type: "finish", id, ...order, reason: order.reason.slice(0, MAX_REASON) });
    } catch (e) {
      this.finishes.settle(id, { outcome: "failed", why: `the finish order could not be sent: ${errorText(e)}` });
    }
    return report.then((r) => {
      this.log({
        msg: "agent finish report",
        id,
        ...where,
        namespace: order.namespace,
        name: order.name,
        outcome: r?.outcome ?? "none",
        why: r?.why ?? "no report",
      });
      return r;
    });
  }

  finishReport(conn: string, m: Extract<AgentMessage, { type: "finish-report" }>): void {
    if (!this.finishes.awaits(m.id, conn, m.uid)) {
      this.log({ msg: "agent finish report for no waiting order", id: m.id, uid: m.uid, outcome: m.outcome, why: m.why });
      return;
    }
    this.finishes.settle(m.id, { outcome: m.outcome, why: m.why });
  }

  /** Anything the connection sends shows it is alive: orders are waited on again. */
  heard(conn: string): void {
    this.slowOrders.delete(conn);
  }

  report(conn: string, m: Extract<AgentMessage, { type: "report" }>): void {
    if (!this.orders.awaits(m.id, conn, m.uid)) {
      // Late (after the timeout) or from an order this instance did not send: the next look judges from the view.
      this.log({ msg: "agent report for no waiting order", id: m.id, uid: m.uid, outcome: m.outcome, why: m.why });
      return;
    }
    this.orders.settle(m.id, { outcome: m.outcome, why: m.why });
  }

  /** The connection closed or was replaced: what it was asked fails now. */
  dropConn(conn: string, why: string): void {
    this.orders.settleConn(conn, { outcome: "failed", why });
    this.finishes.settleConn(conn, { outcome: "failed", why });
    this.reads.settleConn(conn, false);
    this.slowOrders.delete(conn);
    this.slowReads.delete(conn);
  }
}
