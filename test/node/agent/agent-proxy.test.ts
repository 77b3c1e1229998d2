// The agent behind an egress proxy: its WebSocket to the ledger goes through an
// HTTP CONNECT tunnel when HTTPS_PROXY (wss://) or HTTP_PROXY (ws://) is set and
// NO_PROXY does not name the Worker's host. A CONNECT proxy stand-in on
// 127.0.0.1 records every tunnel it opens, so the tests see the traffic pass
// through it, or not.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { DEFAULT_TIMINGS, LedgerConnection } from "../../../src/agent/ledger-connection.ts";
import type { Log } from "../../../src/agent/log.ts";
import { NO_PROXY_SETTINGS, type ProxySettings } from "../../../src/agent/proxy.ts";
import { startConnectProxy } from "./connect-proxy.ts";

const TOKEN = "t".repeat(64);
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function startProxy(refuse?: number): ReturnType<typeof startConnectProxy> {
  const proxy = await startConnectProxy(refuse);
  closers.push(() => proxy.close());
  return proxy;
}

/** The ledger's end: a WebSocket server on 127.0.0.1 that says hello to whoever connects, and records the token. */
async function startLedger(): Promise<{ url: string; tokens: string[] }> {
  const tokens: string[] = [];
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/agent" });
  await once(wss, "listening");
  wss.on("connection", (socket, req) => {
    tokens.push(req.headers.authorization ?? "");
    socket.send("hello from the ledger");
  });
  closers.push(() => new Promise((resolve) => wss.close(() => resolve())));
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/agent`, tokens };
}

/** A connection that resolves `message` with the first text it receives. */
function dial(url: string, proxy: ProxySettings): { message: Promise<string>; lines: Array<{ msg: string; fields: unknown }> } {
  const lines: Array<{ msg: string; fields: unknown }> = [];
  const log: Log = (_level, msg, fields) => lines.push({ msg, fields });
  let got: (text: string) => void = () => {};
  const message = new Promise<string>((resolve) => (got = resolve));
  const connection = new LedgerConnection({
    url,
    token: TOKEN,
    cluster: "default",
    proxy,
    log,
    timings: DEFAULT_TIMINGS,
    handlers: { opened() {}, message: (text) => got(text), closed() {} },
  });
  connection.start();
  closers.push(() => connection.stop());
  return { message, lines };
}

const settings = (over: Partial<ProxySettings>): ProxySettings => ({ ...NO_PROXY_SETTINGS, ...over });

describe("the agent's WebSocket behind a CONNECT proxy", () => {
  it("goes through the proxy: the tunnel is to the ledger's host and port, and the ledger's messages come back through it", async () => {
    const proxy = await startProxy();
    const ledger = await startLedger();
    const { message, lines } = dial(ledger.url, settings({ httpProxy: proxy.url }));
    expect(await message).toBe("hello from the ledger");
    expect(proxy.tunnels).toEqual([new URL(ledger.url).host]);
    expect(ledger.tokens).toEqual([`Bearer ${TOKEN}`]);
    expect(lines.find((l) => l.msg === "connected to the ledger")?.fields).toMatchObject({ via: proxy.url });
  });

  it("wss:// takes HTTPS_PROXY: the CONNECT names the Worker's host on 443, resolved by the proxy, not the agent", async () => {
    const proxy = await startProxy(403);
    dial("wss://arc-reaper.example.invalid/agent", settings({ httpsProxy: proxy.url, httpProxy: "http://127.0.0.1:9" }));
    expect(await proxy.asked).toBe("arc-reaper.example.invalid:443");
  });

  it("NO_PROXY naming the ledger's host bypasses the proxy: it sees no tunnel", async () => {
    const proxy = await startProxy();
    const ledger = await startLedger();
    const { message, lines } = dial(ledger.url, settings({ httpProxy: proxy.url, noProxy: ["localhost", "127.0.0.1"] }));
    expect(await message).toBe("hello from the ledger");
    expect(proxy.tunnels).toEqual([]);
    expect(lines.find((l) => l.msg === "connected to the ledger")?.fields).toMatchObject({ via: "direct" });
  });

  it("a proxy asking for credentials (407) is said as such", async () => {
    const proxy = await startProxy(407);
    const { lines } = dial("ws://127.0.0.1:9/agent", settings({ httpProxy: proxy.url }));
    await proxy.asked;
    await expect
      .poll(() => lines.map((l) => l.msg))
      .toContain("the egress proxy asks for credentials (407): give them in HTTPS_PROXY (http://user:password@host:port)");
  });
});
