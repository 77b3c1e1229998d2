// One GitHub Enterprise Server host for one tenant: its own port on 127.0.0.1,
// the REST API under /api/v3 (so GITHUB_API_URL is http://127.0.0.1:PORT/api/v3,
// as https://HOST/api/v3 is on a real server), and the web's HTML "not found"
// page for every other path, which is what a client that dropped the prefix
// would get from a real server.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export const GHES_API_PREFIX = "/api/v3";

export type GhesHost = { url: string; apiUrl: string; close(): Promise<void> };

/** `serveApi` answers a request whose path (without /api/v3) is `path`; `offApi` hears of any other path. */
export async function startGhesHost(
  serveApi: (req: IncomingMessage, res: ServerResponse, path: string, url: URL) => Promise<void>,
  offApi: (method: string, path: string) => void,
  onError: (res: ServerResponse, error: unknown) => void,
  /** The web's pages (web.ts): true when it answered. */
  serveWeb?: (req: IncomingMessage, res: ServerResponse, path: string, url: URL) => Promise<boolean>,
): Promise<GhesHost> {
  let url = "";
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parsed = new URL(req.url ?? "/", url);
    const path = parsed.pathname;
    if (path === GHES_API_PREFIX || path.startsWith(`${GHES_API_PREFIX}/`)) {
      serveApi(req, res, path.slice(GHES_API_PREFIX.length) || "/", parsed).catch((e: unknown) => onError(res, e));
      return;
    }
    const notFound = () => {
      offApi((req.method ?? "GET").toUpperCase(), path);
      req.resume();
      const page =
        "<!DOCTYPE html><html><head><title>Page not found · GitHub Enterprise</title></head><body><h1>404</h1><p>This is not the web page you are looking for.</p></body></html>";
      res.writeHead(404, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(page) });
      res.end(page);
    };
    if (!serveWeb) return notFound();
    serveWeb(req, res, path, parsed).then(
      (answered) => (answered ? undefined : notFound()),
      (e: unknown) => onError(res, e),
    );
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;
  return {
    url,
    apiUrl: `${url}${GHES_API_PREFIX}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
