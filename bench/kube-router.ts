// One Kubernetes API URL in front of several stand-in tenants, routed by the
// namespace in the path. The stand-in holds at most 5,000 objects per tenant;
// 10,000 runners go in two scale-set namespaces, each in its own tenant, and
// arc-reaper sees one API server, as it would in a real cluster.
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";

export interface Route {
  /** The tenant's base URL, e.g. http://127.0.0.1:1234/t/abc. */
  baseUrl: string;
  /** Bearer token to send instead of the caller's (the tenant's own service account). */
  token?: string;
}

export interface KubeRouter {
  url: string;
  /** Namespace → tenant; may be filled after the router started. */
  routes: Map<string, Route>;
  close(): Promise<void>;
}

function status(res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, code }));
}

export async function startKubeRouter(): Promise<KubeRouter> {
  const routes = new Map<string, Route>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    const ns = /\/namespaces\/([^/?]+)/.exec(path)?.[1];
    const route = ns === undefined ? undefined : routes.get(decodeURIComponent(ns));
    if (!route) return status(res, 404, `kube router: no tenant holds namespace ${ns ?? "(none)"}`);
    const target = new URL(route.baseUrl + path);
    const headers = { ...req.headers, host: target.host };
    if (route.token) headers.authorization = `Bearer ${route.token}`;
    const upstream = request(target.toString(), { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", (e) => status(res, 502, `kube router: ${e.message}`));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    routes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // workerd keeps its connections alive
      }),
  };
}
