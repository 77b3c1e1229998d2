// The in-cluster server's way out (the Worker's globalOutbound in the config
// scripts/server makes): every request the Worker sends passes here on its way
// to the network. A request to the API server (KUBE_API_URL's origin) leaves
// through KUBE_NET, which trusts the cluster's CA alone; any other (GitHub)
// through this worker's own outbound, which trusts the browsers' CAs (and a
// GitHub Enterprise Server's, when built with one), never the cluster's. With
// KUBE_TOKEN set to the marker below, the API server's request has its bearer
// replaced by the ServiceAccount's projected token, read from its file at each
// request: the kubelet rotates it (hourly), and a Worker cannot read a file
// itself. No imports: the build strips the types and embeds the text as it is.

interface OutboundEnv {
  /** The ServiceAccount's directory (token, ca.crt, namespace), as workerd's disk service. */
  SERVICE_ACCOUNT: { fetch(input: string): Promise<Response> };
  /** The network service to the API server, under the cluster's CA. */
  KUBE_NET: { fetch(request: Request): Promise<Response> };
  KUBE_API_URL: string | null;
  KUBE_TOKEN: string | null;
}

/** KUBE_TOKEN's value that says: use the ServiceAccount's token file. */
const FROM_FILE = "service-account-token-file";

/** KUBE_API_URL's origin, or undefined when it is unset or not a URL. */
function apiOrigin(url: string | null): string | undefined {
  try {
    return url ? new URL(url.trim()).origin : undefined;
  } catch {
    return undefined;
  }
}

export default {
  async fetch(request: Request, env: OutboundEnv): Promise<Response> {
    const api = apiOrigin(env.KUBE_API_URL);
    if (api === undefined || new URL(request.url).origin !== api) return fetch(request);
    if (env.KUBE_TOKEN?.trim() !== FROM_FILE) return env.KUBE_NET.fetch(request);
    const file = await env.SERVICE_ACCOUNT.fetch("http://service-account/token");
    if (!file.ok)
      return new Response(JSON.stringify({ kind: "Status", message: `the ServiceAccount's token file could not be read (${file.status})` }), { status: 503 });
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${(await file.text()).trim()}`);
    return env.KUBE_NET.fetch(new Request(request, { headers }));
  },
};
