// The one outbound WebSocket to the ledger (GET ${ARC_REAPER_URL}/agent with
// `Authorization: Bearer AGENT_TOKEN`). Reconnects with capped, jittered
// back-off; pings to notice a dead peer. Nothing dials in. Behind an egress
// proxy (HTTPS_PROXY, NO_PROXY: proxy.ts) it dials through a CONNECT tunnel.
import type { Agent } from "node:http";
import WebSocket from "ws";
import { CLOSE_REPLACED, CLOSE_RESTARTING, CLUSTER_HEADER, type AgentMessage } from "../cluster/agent-protocol.ts";
import { BackgroundLoop } from "./background-loop.ts";
import { Backoff, DEFAULT_BACKOFF, sleep, type BackoffPolicy } from "./backoff.ts";
import { errorText } from "../model/error-text.ts";
import type { Log } from "./log.ts";
import { NO_PROXY_SETTINGS, proxyAgentFor, proxyFor, shownProxy, type ProxySettings } from "./proxy.ts";

export interface ConnectionTimings {
  backoff: BackoffPolicy;
  /** Ping the ledger this often; no pong by the next ping ends the connection. */
  pingEveryMs: number;
  handshakeTimeoutMs: number;
  /** A connection that stayed open this long resets the back-off. */
  stableAfterMs: number;
}

export const DEFAULT_TIMINGS: ConnectionTimings = {
  backoff: DEFAULT_BACKOFF,
  pingEveryMs: 30_000,
  handshakeTimeoutMs: 10_000,
  stableAfterMs: 10_000,
};

export interface ConnectionHandlers {
  /** The connection is open: send hello and the snapshot. */
  opened(): void;
  /** A text message from the ledger. */
  message(text: string): void;
  closed(): void;
}

export class LedgerConnection extends BackgroundLoop {
  private socket: WebSocket | undefined;
  private readonly url: string;
  private readonly token: string;
  private readonly cluster: string;
  private readonly log: Log;
  private readonly timings: ConnectionTimings;
  private readonly handlers: ConnectionHandlers;
  private readonly backoff: Backoff;
  /** The tunnel through the proxy, or undefined to dial direct. */
  private readonly agent: Agent | undefined;
  /** How the ledger is reached, for the log: "direct" or the proxy's origin. */
  private readonly via: string;

  constructor(opts: {
    url: string;
    token: string;
    cluster: string;
    log: Log;
    timings: ConnectionTimings;
    handlers: ConnectionHandlers;
    proxy?: ProxySettings;
  }) {
    super();
    this.url = opts.url;
    this.token = opts.token;
    this.cluster = opts.cluster;
    this.log = opts.log;
    this.timings = opts.timings;
    this.handlers = opts.handlers;
    this.backoff = new Backoff(opts.timings.backoff);
    const proxy = opts.proxy ?? NO_PROXY_SETTINGS;
    this.agent = proxyAgentFor(opts.url, proxy);
    const through = proxyFor(opts.url, proxy);
    this.via = through === undefined ? "direct" : shownProxy(through);
  }

  get open(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /** Sends one message if the connection is open; false otherwise (the next connect sends a snapshot). */
  send(message: AgentMessage): boolean {
    const socket = this.socket;
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  protected async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const { openFor, code } = await this.connectOnce(signal);
      if (signal.aborted) return;
      // The ledger's server is restarting (close 1012): not an error; the next server is dialled at the shortest back-off.
      if (openFor >= this.timings.stableAfterMs || code === CLOSE_RESTARTING) this.backoff.reset();
      let wait = this.backoff.next();
      if (code === CLOSE_REPLACED) {
        wait = this.timings.backoff.capMs;
        this.log("warn", "another agent replaced this one at the ledger: is more than one running?", { retryInMs: wait });
      }
      this.log("info", code === CLOSE_RESTARTING ? "the ledger's server is restarting: reconnecting" : "reconnecting to the ledger", { retryInMs: wait });
      await sleep(wait, signal);
    }
  }

  /** One connection, from dial to close; resolves with how long it stayed open (0 if it never opened) and the close code. */
  private connectOnce(signal: AbortSignal): Promise<{ openFor: number; code: number }> {
    return new Promise((resolve) => {
      const socket = new WebSocket(this.url, {
        // The cluster travels with the upgrade, so the Worker checks its token before upgrading.
        headers: { Authorization: `Bearer ${this.token}`, [CLUSTER_HEADER]: this.cluster },
        handshakeTimeout: this.timings.handshakeTimeoutMs,
        maxPayload: 1024 * 1024,
        followRedirects: false,
        ...(this.agent === undefined ? {} : { agent: this.agent }),
      });
      this.socket = socket;
      let openedAt = 0;
      let refused = false;
      let awaitingPong = false;
      let pinger: ReturnType<typeof setInterval> | undefined;
      // Stopping: a clean close, cut short if the ledger does not answer it.
      const onAbort = (): void => {
        socket.close(1001, "agent stopping");
        setTimeout(() => socket.terminate(), 2000).unref();
      };
      signal.addEventListener("abort", onAbort);

      socket.on("unexpected-response", (_req, res) => {
        const status = res.statusCode ?? 0;
        const hint =
          status === 401
            ? "the ledger refused AGENT_TOKEN (401): it must be the token made for AGENT_CLUSTER from the Worker's AGENT_TOKEN (docs/deploy.md), or the Worker's AGENT_TOKEN itself for the cluster default"
            : status === 407 && this.agent !== undefined
              ? "the egress proxy asks for credentials (407): give them in HTTPS_PROXY (http://user:password@host:port)"
              : status === 503
                ? "the ledger is not available (503: its server is stopping, or none is ready yet): dialling again after the back-off"
                : "the ledger did not accept the WebSocket";
        this.log(status === 503 ? "info" : "error", hint, { status, url: this.url, cluster: this.cluster, via: this.via });
        refused = true;
        res.resume();
        socket.terminate();
      });
      socket.on("open", () => {
        openedAt = Date.now();
        this.log("info", "connected to the ledger", { url: this.url, via: this.via });
        pinger = setInterval(() => {
          if (awaitingPong) {
            this.log("warn", "the ledger did not answer a ping: reconnecting", { afterMs: this.timings.pingEveryMs });
            socket.terminate();
            return;
          }
          awaitingPong = true;
          socket.ping();
        }, this.timings.pingEveryMs);
        this.handlers.opened();
      });
      socket.on("pong", () => {
        awaitingPong = false;
      });
      socket.on("message", (data, isBinary) => {
        if (isBinary) {
          this.log("warn", "ignoring a binary message from the ledger");
          return;
        }
        this.handlers.message(Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString("utf8"));
      });
      socket.on("error", (e) => {
        // After a refused handshake the reason is already logged; other errors (refused, reset, TLS) are said here.
        if (!refused && !signal.aborted) this.log("warn", "ledger connection error", { error: errorText(e), via: this.via });
      });
      socket.on("close", (code, reason) => {
        clearInterval(pinger);
        signal.removeEventListener("abort", onAbort);
        if (this.socket === socket) this.socket = undefined;
        const openFor = openedAt === 0 ? 0 : Date.now() - openedAt;
        if (openedAt !== 0) {
          this.log("info", "disconnected from the ledger", { code, reason: reason.toString("utf8").slice(0, 200), openMs: openFor });
          this.handlers.closed();
        }
        resolve({ openFor, code });
      });
    });
  }
}
