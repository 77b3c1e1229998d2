// The agent's Kubernetes configuration: in a cluster, its ServiceAccount (the
// API server at KUBERNETES_SERVICE_HOST, always reached direct: it is the
// cluster's own service address, which no egress proxy outside can reach);
// outside one, KUBECONFIG, whose API server is reached through HTTPS_PROXY
// unless NO_PROXY names it, as kubectl does (a cluster's own `proxy-url` wins).
import { KubeConfig } from "@kubernetes/client-node";
import { proxyFor, type ProxySettings } from "./proxy.ts";

export function kubeConfig(env: Record<string, string | undefined>, proxy: ProxySettings): KubeConfig {
  const kc = new KubeConfig();
  const inCluster = !env["KUBECONFIG"] && env["KUBERNETES_SERVICE_HOST"];
  if (inCluster) kc.loadFromCluster();
  else kc.loadFromDefault();
  const current = kc.getCurrentCluster();
  if (current === null) throw new Error("no Kubernetes cluster configured: run in a cluster or set KUBECONFIG");
  if (inCluster || current.proxyUrl) return kc;
  const through = proxyFor(current.server, proxy);
  if (through === undefined) return kc;
  const proxied = new KubeConfig();
  proxied.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === current.name ? { ...c, proxyUrl: through } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
  });
  return proxied;
}
