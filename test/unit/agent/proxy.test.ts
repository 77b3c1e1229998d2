// The agent's proxy rules (src/agent/proxy.ts, proxyFor as curl and kubectl read NO_PROXY), the proxy
// settings (src/agent/settings.ts) and the API server's proxy (src/agent/kube-config.ts). The tunnels
// themselves, through a real CONNECT proxy: test/node/agent/agent-proxy.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { KubeConfig } from "@kubernetes/client-node";
import { kubeConfig } from "../../../src/agent/kube-config.ts";
import { NO_PROXY_SETTINGS, proxyAgentFor, proxyFor, shownProxy, type ProxySettings } from "../../../src/agent/proxy.ts";
import { readSettings } from "../../../src/agent/settings.ts";

const TOKEN = "t".repeat(64);
const settings = (over: Partial<ProxySettings>): ProxySettings => ({ ...NO_PROXY_SETTINGS, ...over });

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

describe("proxyFor, the edges", () => {
  const both = settings({ httpsProxy: "http://secure:3128/", httpProxy: "http://plain:3128/" });
  it("takes HTTPS_PROXY for wss:// and https://, HTTP_PROXY for ws:// and http://", () => {
    expect(proxyFor("wss://a.example/agent", both)).toBe("http://secure:3128/");
    expect(proxyFor(new URL("https://a.example"), both)).toBe("http://secure:3128/");
    expect(proxyFor("ws://a.example/agent", both)).toBe("http://plain:3128/");
    expect(proxyFor("http://a.example", both)).toBe("http://plain:3128/");
  });

  it.each([
    ["ws://a.example", ["a.example:80"], undefined],
    ["ws://a.example", ["a.example:443"], "http://plain:3128/"],
    ["wss://a.example", ["a.example:443"], undefined],
    ["ws://a.example:8080", ["a.example:8080"], undefined],
    ["ws://a.example", ["A.EXAMPLE"], undefined], // host names compare in any case
    ["ws://sub.a.example", ["a.example"], undefined],
    ["ws://suba.example", ["a.example"], "http://plain:3128/"],
    ["ws://a.example", ["."], "http://plain:3128/"],
    ["ws://a.example", ["*."], "http://plain:3128/"],
    ["ws://10.1.2.3", ["1.2.3"], "http://plain:3128/"],
    ["ws://10.1.2.3", ["10.0.0.0/x"], "http://plain:3128/"],
    ["ws://10.1.2.3", ["10.0.0.0/99"], "http://plain:3128/"],
    ["ws://10.1.2.3", ["fd00::/8"], "http://plain:3128/"],
    ["ws://a.example", ["10.0.0.0/8"], "http://plain:3128/"],
    ["ws://10.1.2.3", ["nonsense/8"], "http://plain:3128/"],
    ["ws://[fd00::1]", ["[fd00::1]"], undefined],
    ["ws://a.example", ["other.example", "a.example"], undefined],
  ])("%s with NO_PROXY %j: %s", (target, noProxy, expected) => {
    expect(proxyFor(target, { ...both, noProxy })).toBe(expected);
  });
});

describe("proxyAgentFor and shownProxy", () => {
  it("makes a CONNECT agent to the target's proxy, or none to go direct", () => {
    const agent = proxyAgentFor("wss://a.example/agent", settings({ httpsProxy: "http://user:pw@proxy.example:3128/" }));
    expect(agent?.proxy.href).toBe("http://user:pw@proxy.example:3128/");
    expect(proxyAgentFor("wss://a.example/agent", NO_PROXY_SETTINGS)).toBeUndefined();
  });

  it("shows a proxy by its origin, never its credentials or path", () => {
    expect(shownProxy("http://user:s3cret@proxy.example:3128/x")).toBe("http://proxy.example:3128");
  });
});
