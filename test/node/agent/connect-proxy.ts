// A CONNECT proxy stand-in on 127.0.0.1 for the agent's proxy tests: it tunnels
// to the host:port each CONNECT asks for (or answers `refuse`), and records
// every target, so a test sees whether traffic went through it.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";

export interface ConnectProxy {
  url: string;
  /** Every CONNECT target, "host:port", in order. */
  tunnels: string[];
  /** The first CONNECT's target. */
  asked: Promise<string>;
  close(): Promise<void>;
}

/** A CONNECT proxy: tunnels to the asked host:port (or refuses with `refuse`), recording each target. */
export async function startConnectProxy(refuse?: number): Promise<ConnectProxy> {
  const tunnels: string[] = [];
  let first: (target: string) => void = () => {};
  const asked = new Promise<string>((resolve) => (first = resolve));
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => res.writeHead(405).end());
  server.on("connect", (req, client: Socket) => {
    const target = req.url ?? "";
    tunnels.push(target);
    first(target);
    sockets.add(client);
    if (refuse !== undefined) {
      client.end(`HTTP/1.1 ${refuse} Refused\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    const [host, port] = [target.slice(0, target.lastIndexOf(":")), Number(target.slice(target.lastIndexOf(":") + 1))];
    const upstream = connect(port, host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const close = async (): Promise<void> => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, tunnels, asked, close };
}
