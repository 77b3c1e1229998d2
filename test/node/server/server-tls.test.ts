// The in-cluster server trusts the cluster's private CA (a Worker on Cloudflare
// cannot): built with --kube-ca, workerd's config embeds it, and an API server
// whose certificate that CA signed is reached over HTTPS; built without it, the
// same API server is refused. The API server is the Kubernetes stand-in behind a
// TLS proxy with a certificate made here by openssl.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:https";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../../scripts/server/build.ts";
import { NAMESPACE, serverWorld, type ServerWorld } from "./server-rig.ts";

let world: ServerWorld;
let apiUrl: string;
let closeProxy: () => void;
let dir: string;

function makeCertificates(at: string): void {
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: at, stdio: "ignore" });
  ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=arc-reaper test cluster CA");
  ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "api.key", "-out", "api.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(at, "san.ext"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  ssl("x509", "-req", "-in", "api.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "api.crt", "-days", "1", "-extfile", "san.ext");
}

beforeAll(async () => {
  if (!hasOpenssl()) return;
  world = await serverWorld();
  dir = join(world.outdir, "..");
  makeCertificates(dir);
  const upstream = new URL(world.kube.baseUrl);
  const proxy = createServer({ key: readFileSync(join(dir, "api.key")), cert: readFileSync(join(dir, "api.crt")) }, (req, res) => {
    const out = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on("error", () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const address = proxy.address();
  apiUrl = `https://127.0.0.1:${typeof address === "object" && address ? address.port : 0}${upstream.pathname.replace(/\/$/, "")}`;
  closeProxy = () => proxy.close();
}, 120_000);
afterAll(async () => {
  closeProxy?.();
  await world?.close();
});

async function namespaceCheck(url: string): Promise<{ ok: boolean; detail: string } | undefined> {
  const res = await fetch(`${url}/healthz/deep`, { headers: { authorization: `Bearer ${world.adminToken}` } });
  return ((await res.json()) as { checks: { name: string; ok: boolean; detail: string }[] }).checks.find((c) => c.name === `namespace ${NAMESPACE}`);
}

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!hasOpenssl())("the in-cluster server and the cluster's CA", () => {
  it("reaches an API server under a private CA when built with --kube-ca, and is refused without it", async () => {
    const withCa = buildServer(join(dir, "with-ca"), { kubeCa: join(dir, "ca.crt") });
    const trusting = await world.start({ outdir: withCa, settings: { KUBE_API_URL: apiUrl } });
    try {
      expect(await namespaceCheck(trusting.url)).toMatchObject({ ok: true, detail: `listed 0 EphemeralRunners in ${NAMESPACE} as Tables` });
    } finally {
      await trusting.kill();
    }
    const plain = await world.start({ settings: { KUBE_API_URL: apiUrl } });
    try {
      expect(await namespaceCheck(plain.url)).toMatchObject({ ok: false });
    } finally {
      await plain.kill();
    }
  });
});
