// The agent's probes, for the kubelet: GET /livez answers 200 while the process
// serves; GET /readyz answers 200 once the agent is connected to the ledger and
// has sent its whole view (a snapshot), else 503 saying why. Plain text, no
// secrets; anything else is 404. Nothing else listens.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** `notReady()` answers why the agent is not ready, or undefined when it is. */
export function startHealthServer(opts: { port: number; host?: string; notReady: () => string | undefined }): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const answer = (status: number, text: string): void => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
      res.end(`${text}\n`);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return answer(405, "GET only");
    if (path === "/livez") return answer(200, "ok");
    if (path === "/readyz") {
      const why = opts.notReady();
      return why === undefined ? answer(200, "ready: connected to the ledger, snapshot sent") : answer(503, `not ready: ${why}`);
    }
    return answer(404, "not found: /livez and /readyz only");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => {
      server.off("error", reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
