// When setup cannot apply to a cluster itself, it prints one command for the
// user, and the agent's token Secret comes from here: a loopback server with a
// random path, for as long as setup runs. The token is never in the printed
// command, a file or argv: `curl … | kubectl apply -f -` pipes it.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface SecretServer {
  /** Serves `yaml` at a fresh URL for `cluster`; answers the URL. */
  add(cluster: string, yaml: string): Promise<string>;
  close(): Promise<void>;
}

export function secretServer(): SecretServer {
  const nonce = randomBytes(24).toString("hex");
  const served = new Map<string, string>();
  let base: Promise<string> | undefined;
  const server = createServer((req, res) => {
    const yaml = served.get(req.url ?? "");
    res.writeHead(yaml ? 200 : 404, { "content-type": "application/yaml", "cache-control": "no-store" });
    res.end(yaml ?? "");
  });
  const start = () =>
    (base ??= new Promise<string>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    }));
  return {
    async add(cluster, yaml) {
      const path = `/${nonce}/agent-${cluster}.yaml`;
      served.set(path, yaml);
      return `${await start()}${path}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!base) return resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
