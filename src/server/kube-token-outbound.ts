// The in-cluster server's way out (the Worker's globalOutbound in the config
// scripts/server makes): every request the Worker sends passes here on its way
// to the network. With KUBE_TOKEN set to the marker below, a request to the API
// server (KUBE_API_URL's origin) has its bearer replaced by the ServiceAccount's
// projected token, read from its file at each request: the kubelet rotates it
// (hourly), and a Worker cannot read a file itself. Any other request, and any
// other KUBE_TOKEN, passes unchanged. No imports: the build strips the types
// and embeds the text as it is.

interface OutboundEnv {
  /** The ServiceAccount's directory (token, ca.crt, namespace), as workerd's disk service. */
  SERVICE_ACCOUNT: { fetch(input: string): Promise<Response> };
  KUBE_API_URL: string | null;
  KUBE_TOKEN: string | null;
}

/** KUBE_TOKEN's value that says: use the ServiceAccount's token file. */
const FROM_FILE = "service-account-token-file";

export default {
  async fetch(request: Request, env: OutboundEnv): Promise<Response> {
    if (env.KUBE_TOKEN?.trim() !== FROM_FILE || !env.KUBE_API_URL) return fetch(request);
    let api: string;
    try {
      api = new URL(env.KUBE_API_URL.trim()).origin;
    } catch {
      return fetch(request);
    }
    if (new URL(request.url).origin !== api) return fetch(request);
    const file = await env.SERVICE_ACCOUNT.fetch("http://service-account/token");
    if (!file.ok)
      return new Response(JSON.stringify({ kind: "Status", message: `the ServiceAccount's token file could not be read (${file.status})` }), { status: 503 });
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${(await file.text()).trim()}`);
    return fetch(new Request(request, { headers }));
  },
};
