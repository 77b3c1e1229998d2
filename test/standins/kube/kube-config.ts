// A client-node KubeConfig for a Kubernetes stand-in tenant: its address, a bearer token, no TLS.
import { KubeConfig } from "@kubernetes/client-node";

export function standinKubeConfig(baseUrl: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "standin", server: baseUrl, skipTLSVerify: true }],
    users: [{ name: "client", token }],
    contexts: [{ name: "standin", cluster: "standin", user: "client" }],
    currentContext: "standin",
  });
  return kc;
}
