// A stand-in for the ledger's GET /agent, for the agent's tests: a WebSocket
// server on 127.0.0.1 that checks the bearer token (401 otherwise), reads every
// agent message with the ledger's own strict parser, and sends orders.
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import type { AgentMessage, DeleteOrder } from "../../../src/cluster/agent-protocol.ts";
import { parseAgentMessage } from "../../../src/cluster/parse-agent-message.ts";

export interface LedgerConnection {
  socket: WebSocket;
  messages: AgentMessage[];
  /** When each message arrived (Date.now()), same index as messages. */
  times: number[];
  /** Messages the ledger's parser refused (must stay empty). */
  invalid: string[];
  closed: boolean;
  /** The X-Arc-Reaper-Cluster header of the upgrade (undefined: none sent). */
  cluster: string | undefined;
}

export class LedgerStandin {
  token: string;
  /** Answer the agent's pings (a dead peer does not). */
  answerPings = true;
  readonly connections: LedgerConnection[] = [];
  /** Upgrade attempts refused with 401, with when they came. */
  readonly refused: number[] = [];
  url = "";
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true, autoPong: false });
  private readonly sockets = new Set<Socket>();

  constructor(token: string) {
    this.token = token;
    this.server = createServer((_req, res) => {
      res.writeHead(404).end();
    });
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.once("close", () => this.sockets.delete(s));
    });
    this.server.on("upgrade", (req, socket, head) => {
      const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
      if (path !== "/agent") {
        socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
      }
      if (req.headers.authorization !== `Bearer ${this.token}`) {
        this.refused.push(Date.now());
        socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const named = req.headers["x-arc-reaper-cluster"];
        const conn: LedgerConnection = {
          socket: ws,
          messages: [],
          times: [],
          invalid: [],
          closed: false,
          cluster: typeof named === "string" ? named : undefined,
        };
        this.connections.push(conn);
        ws.on("message", (data) => {
          const text = Buffer.isBuffer(data) ? data.toString("utf8") : String(data);
          try {
            conn.messages.push(parseAgentMessage(text));
            conn.times.push(Date.now());
          } catch (e) {
            conn.invalid.push(`${e instanceof Error ? e.message : String(e)}: ${text.slice(0, 200)}`);
          }
        });
        ws.on("ping", (data) => {
          if (this.answerPings) ws.pong(data);
        });
        ws.on("close", () => {
          conn.closed = true;
        });
      });
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => resolve());
    });
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("ledger stand-in: no TCP address");
    this.url = `http://127.0.0.1:${address.port}`;
    return this;
  }

  /** The newest open connection. */
  current(): LedgerConnection {
    const open = this.connections.filter((c) => !c.closed);
    const c = open[open.length - 1];
    if (c === undefined) throw new Error("no agent connected");
    return c;
  }

  /** Sends an order on the newest connection; returns when it was sent. */
  order(order: Omit<DeleteOrder, "type">): number {
    const sentAt = Date.now();
    this.current().socket.send(JSON.stringify({ type: "order", ...order }));
    return sentAt;
  }

  /** Sends a finish order (REAPER_FINISH_STUCK) on the newest connection. */
  finish(order: { id: string; namespace: string; name: string; uid: string; reason: string }): void {
    this.current().socket.send(JSON.stringify({ type: "finish", ...order }));
  }

  /** Asks the newest connection to read one runner by name (a GET at the API server). */
  read(id: string, namespace: string, name: string): void {
    this.current().socket.send(JSON.stringify({ type: "read", id, namespace, name }));
  }

  /** Drops every agent connection without a close handshake (a network cut). */
  dropAll(): void {
    for (const c of this.connections) c.socket.terminate();
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.terminate();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.wss.close();
    await closed;
  }
}

/** Polls until `check` returns (or resolves to) a value (not undefined), or fails naming `what`. */
export async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
