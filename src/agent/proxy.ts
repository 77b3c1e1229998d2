// The agent behind an egress proxy: HTTPS_PROXY / HTTP_PROXY and NO_PROXY, in
// the spellings curl and client-go read (lowercase first). The WebSocket to the
// ledger goes through an HTTP CONNECT tunnel (https-proxy-agent) unless NO_PROXY
// names the Worker's host; TLS to the Worker stays end to end, so the proxy sees
// only the host and port.
//
// NO_PROXY is matched here rather than with a package: the maintained one
// (proxy-from-env) reads only process.env, while the agent takes its settings
// as a value (settings.ts), so that a bad value is named before anything dials
// and the tests give each agent its own. Entries: `*` (everything), a host
// (itself and its subdomains, with or without a leading `.` or `*.`), an
// optional `:port`, an IP address, or an IP range in CIDR form (10.0.0.0/8).
import { BlockList, isIP } from "node:net";
import { HttpsProxyAgent } from "https-proxy-agent";

export interface ProxySettings {
  /** HTTPS_PROXY (or https_proxy): for wss:// and https:// targets. */
  httpsProxy: string | undefined;
  /** HTTP_PROXY (or http_proxy): for ws:// and http:// targets. */
  httpProxy: string | undefined;
  /** NO_PROXY (or no_proxy), split on commas and spaces, lowercased. */
  noProxy: string[];
}

export const NO_PROXY_SETTINGS: ProxySettings = { httpsProxy: undefined, httpProxy: undefined, noProxy: [] };

const bare = (host: string): string => host.replace(/^\[|\]$/g, "").toLowerCase();

function defaultPort(url: URL): string {
  if (url.port !== "") return url.port;
  return url.protocol === "https:" || url.protocol === "wss:" ? "443" : "80";
}

function inRange(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split("/");
  const family = isIP(base ?? "");
  const prefix = Number(bits);
  if (family === 0 || isIP(ip) !== family || !Number.isInteger(prefix)) return false;
  const list = new BlockList();
  try {
    list.addSubnet(base!, prefix, family === 4 ? "ipv4" : "ipv6");
  } catch {
    return false;
  }
  return list.check(ip, family === 4 ? "ipv4" : "ipv6");
}

/** Whether one NO_PROXY entry covers the target. */
function bypasses(entry: string, url: URL): boolean {
  if (entry === "*") return true;
  const host = bare(url.hostname);
  if (entry.includes("/")) return inRange(host, entry);
  let name = entry;
  let port: string | undefined;
  const withPort = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
  if (withPort) {
    name = withPort[1]!;
    port = withPort[2];
  }
  if (port !== undefined && port !== defaultPort(url)) return false;
  name = bare(name).replace(/^\*?\./, "");
  if (name === "") return false;
  return host === name || (isIP(host) === 0 && host.endsWith(`.${name}`));
}

/** The proxy to reach `target` through, or undefined to go direct. */
export function proxyFor(target: string | URL, settings: ProxySettings): string | undefined {
  const url = typeof target === "string" ? new URL(target) : target;
  const secure = url.protocol === "https:" || url.protocol === "wss:";
  const proxy = secure ? settings.httpsProxy : settings.httpProxy;
  if (proxy === undefined) return undefined;
  if (settings.noProxy.some((entry) => bypasses(entry, url))) return undefined;
  return proxy;
}

/** An http.Agent that tunnels to `target` through its proxy (CONNECT), or undefined to go direct. */
export function proxyAgentFor(target: string, settings: ProxySettings): HttpsProxyAgent<string> | undefined {
  const proxy = proxyFor(target, settings);
  return proxy === undefined ? undefined : new HttpsProxyAgent(proxy);
}

/** The proxy's address for a log line: its origin, never its credentials. */
export function shownProxy(proxy: string): string {
  return new URL(proxy).origin;
}
