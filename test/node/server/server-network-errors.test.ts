// Network errors name their cause: the in-cluster server on the pinned workerd reaching an API server and
// a GitHub that are not there, for real: a name that does not resolve, a closed port, a certificate not
// trusted, a server that never answers. /healthz/deep gives each failed check a reason code
// (src/net/network-cause.ts) and words naming the host, never workerd's bare "internal error".
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer as createHttps } from "node:https";
import { createServer as createTcp, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../scripts/lib/local-stack.ts";
import { NAMESPACE, serverWorld, type ServerWorld } from "./server-rig.ts";

let world: ServerWorld;
const servers: { close(): void }[] = [];
let tlsUrl: string;
let silentUrl: string;
let closedUrl: string;

const portOf = (s: { address(): unknown }) => (s.address() as { port: number }).port;
const listen = (s: Server | ReturnType<typeof createHttps>) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));

beforeAll(async () => {
  world = await serverWorld();
  const dir = join(world.outdir, "..");
  // A self-signed certificate for 127.0.0.1 that no trust store the server has holds.
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "nt.key",
      "-out",
      "nt.crt",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { cwd: dir, stdio: "ignore" },
  );
  const tls = createHttps({ key: readFileSync(join(dir, "nt.key")), cert: readFileSync(join(dir, "nt.crt")) }, (_req, res) => res.end("{}"));
  const silent = createTcp(() => undefined); // accepts and never answers
  await Promise.all([listen(tls), listen(silent)]);
  servers.push(tls, silent);
  tlsUrl = `https://127.0.0.1:${portOf(tls)}`;
  silentUrl = `http://127.0.0.1:${portOf(silent)}`;
  closedUrl = `http://127.0.0.1:${await freePort()}`;
}, 120_000);
afterAll(async () => {
  for (const s of servers) s.close();
  await world?.close();
});

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  reason?: string;
}

async function checksWith(kube: string, github: string): Promise<{ cluster: Check; github: Check }> {
  const server = await world.start({ settings: { KUBE_API_URL: kube, GITHUB_API_URL: github } });
  try {
    const res = await fetch(`${server.url}/healthz/deep`, { headers: { authorization: `Bearer ${world.adminToken}` } });
    const { checks } = (await res.json()) as { checks: Check[] };
    return { cluster: checks.find((c) => c.name === `namespace ${NAMESPACE}`)!, github: checks.find((c) => c.name === "deliveries")! };
  } finally {
    await server.kill();
  }
}

describe("network errors name their cause", () => {
  it("a name that does not resolve is DNS, a closed port a connection refused", async () => {
    const { cluster, github } = await checksWith("https://arc-reaper-nowhere.invalid", closedUrl);
    expect(cluster).toMatchObject({ ok: false, reason: "DnsFailure" });
    expect(cluster.detail).toMatch(
      /^listing ephemeralrunners in arc-runners: the name arc-reaper-nowhere\.invalid does not resolve \(DNS\) \[DnsFailure\] \(GET https:\/\/arc-reaper-nowhere\.invalid\/apis\//,
    );
    expect(github).toMatchObject({ ok: false, reason: "ConnectionFailed" });
    expect(github.detail).toContain(`the connection to ${new URL(closedUrl).host} was refused or cut [ConnectionFailed]`);
  }, 60_000);

  it("a certificate the server does not trust is TLS, a server that never answers a timeout, for the API server and GitHub", async () => {
    const first = await checksWith(tlsUrl, silentUrl);
    expect(first.cluster).toMatchObject({ ok: false, reason: "TlsFailure" });
    expect(first.cluster.detail).toContain(`the TLS handshake with ${new URL(tlsUrl).host} failed`);
    expect(first.github).toMatchObject({ ok: false, reason: "Timeout", detail: "listing webhook deliveries: timed out" });
    const second = await checksWith(closedUrl, tlsUrl);
    expect(second.github).toMatchObject({ ok: false, reason: "TlsFailure" });
    expect(second.cluster).toMatchObject({ ok: false, reason: "ConnectionFailed" });
  }, 90_000);
});
