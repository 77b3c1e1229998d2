// The agent behind an egress proxy: its WebSocket to the ledger goes through an
// HTTP CONNECT tunnel when HTTPS_PROXY (wss://) or HTTP_PROXY (ws://) is set and
// NO_PROXY does not name the Worker's host. A CONNECT proxy stand-in on
// 127.0.0.1 records every tunnel it opens, so the tests see the traffic pass
// through it, or not.
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocketServer } from "ws";
import { KubeConfig } from "@kubernetes/client-node";
import { kubeConfig } from "../../../src/agent/kube-config.ts";
import { DEFAULT_TIMINGS, LedgerConnection } from "../../../src/agent/ledger-connection.ts";
import type { Log } from "../../../src/agent/log.ts";
import { NO_PROXY_SETTINGS, proxyFor, type ProxySettings } from "../../../src/agent/proxy.ts";
import { readSettings } from "../../../src/agent/settings.ts";
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

describe("NO_PROXY matching", () => {
  const p = (noProxy: string[]) => settings({ httpsProxy: "http://proxy:3128/", noProxy });
  it.each([
    ["https://arc-reaper.example.com", [], "http://proxy:3128/"],
    ["https://arc-reaper.example.com", ["*"], undefined],
    ["https://arc-reaper.example.com", ["example.com"], undefined],
    ["https://arc-reaper.example.com", [".example.com"], undefined],
    ["https://arc-reaper.example.com", ["*.example.com"], undefined],
    ["https://arc-reaper.example.com", ["ample.com"], "http://proxy:3128/"],
    ["https://arc-reaper.example.com", ["arc-reaper.example.com:443"], undefined],
    ["https://arc-reaper.example.com", ["arc-reaper.example.com:8443"], "http://proxy:3128/"],
    ["https://10.96.0.1", ["10.0.0.0/8"], undefined],
    ["https://10.96.0.1", ["192.168.0.0/16"], "http://proxy:3128/"],
    ["https://10.96.0.1", ["10.96.0.1"], undefined],
    ["https://[fd00::1]:6443", ["fd00::/8"], undefined],
    ["https://[fd00::1]:6443", ["[fd00::1]:6443"], undefined],
    ["http://arc-reaper.example.com", [], undefined],
  ])("%s with NO_PROXY %j: %s", (target, noProxy, expected) => {
    expect(proxyFor(target, p(noProxy))).toBe(expected);
  });
});

describe("the proxy settings", () => {
  const good = { ARC_REAPER_URL: "https://arc-reaper.example.com", AGENT_TOKEN: TOKEN, REAPER_NAMESPACES: "arc-runners" };
  it("reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY, the lowercase spelling first", () => {
    expect(
      readSettings({ ...good, HTTPS_PROXY: "http://upper:3128", https_proxy: "http://lower:3128", NO_PROXY: "a.example, .b.example  10.0.0.0/8" }),
    ).toMatchObject({
      ok: true,
      settings: { proxy: { httpsProxy: "http://lower:3128/", httpProxy: undefined, noProxy: ["a.example", ".b.example", "10.0.0.0/8"] } },
    });
    expect(readSettings(good)).toMatchObject({ ok: true, settings: { proxy: NO_PROXY_SETTINGS } });
  });

  it("a bad proxy URL is named, and its value (which may hold a password) never shown", () => {
    const result = readSettings({ ...good, HTTPS_PROXY: "socks5://user:s3cret@proxy:1080" });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems).toEqual([expect.stringMatching(/^HTTPS_PROXY \(or https_proxy\) must be the proxy's http:\/\/ or https:\/\/ URL/)]);
    expect(problems.join()).not.toContain("s3cret");
  });
});

describe("the API server and the proxy", () => {
  const kubeconfigFile = (server: string, proxyUrl?: string): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server, skipTLSVerify: false, ...(proxyUrl ? { proxyUrl } : {}) }],
      users: [{ name: "u", token: "x" }],
      contexts: [{ name: "ctx", cluster: "c", user: "u" }],
      currentContext: "ctx",
    });
    return kc;
  };
  // kubeConfig() loads KUBECONFIG as kubectl does (client-node reads process.env): a file for each case.
  const withKubeconfig = (kc: KubeConfig, run: (env: NodeJS.ProcessEnv) => void): void => {
    const dir = mkdtempSync(join(tmpdir(), "kc-"));
    writeFileSync(join(dir, "config"), kc.exportConfig());
    vi.stubEnv("KUBECONFIG", join(dir, "config"));
    try {
      run(process.env);
    } finally {
      vi.unstubAllEnvs();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const proxy = settings({ httpsProxy: "http://proxy.example.com:3128/", noProxy: [".internal.example"] });

  it("outside a cluster, the kubeconfig's API server goes through HTTPS_PROXY unless NO_PROXY names it, as kubectl does", () => {
    withKubeconfig(kubeconfigFile("https://k8s.example.com:6443"), (env) => {
      expect(kubeConfig(env, proxy).getCurrentCluster()?.proxyUrl).toBe("http://proxy.example.com:3128/");
      expect(kubeConfig(env, NO_PROXY_SETTINGS).getCurrentCluster()?.proxyUrl).toBeUndefined();
    });
    withKubeconfig(kubeconfigFile("https://api.internal.example:6443"), (env) => {
      expect(kubeConfig(env, proxy).getCurrentCluster()?.proxyUrl).toBeUndefined();
    });
    // The kubeconfig's own proxy-url wins.
    withKubeconfig(kubeconfigFile("https://k8s.example.com:6443", "http://own-proxy:8080"), (env) => {
      expect(kubeConfig(env, proxy).getCurrentCluster()?.proxyUrl).toBe("http://own-proxy:8080");
    });
  });

  it("in a cluster, the API server (KUBERNETES_SERVICE_HOST) is reached direct, whatever HTTPS_PROXY and NO_PROXY say", () => {
    vi.stubEnv("KUBECONFIG", "");
    vi.stubEnv("KUBERNETES_SERVICE_HOST", "10.96.0.1");
    vi.stubEnv("KUBERNETES_SERVICE_PORT", "443");
    try {
      const cluster = kubeConfig(process.env, proxy).getCurrentCluster();
      expect(cluster?.server).toBe("https://10.96.0.1:443");
      expect(proxyFor(cluster?.server ?? "", proxy)).toBe("http://proxy.example.com:3128/");
      expect(cluster?.proxyUrl).toBeUndefined();
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
