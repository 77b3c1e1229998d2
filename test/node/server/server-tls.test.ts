// The in-cluster server trusts the cluster's private CA (a Worker on Cloudflare
// cannot): built with --kube-ca, workerd's config embeds it, and an API server
// whose certificate that CA signed is reached over HTTPS; built without it, the
// same API server is refused. That CA is trusted for the API server alone: a
// "GitHub" whose certificate it signed is refused, unless the server was built
// with it as a GitHub Enterprise Server's CA (--github-ca). The API server and
// GitHub are the stand-ins behind TLS proxies with a certificate made here by openssl.
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
let githubUrl: string;
let closeProxy: () => void;
let dir: string;

function makeCertificates(at: string): void {
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: at, stdio: "ignore" });
  ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=arc-reaper test cluster CA");
  ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "api.key", "-out", "api.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(at, "san.ext"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  ssl("x509", "-req", "-in", "api.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "api.crt", "-days", "1", "-extfile", "san.ext");
}

/** An HTTPS proxy, under the test cluster's CA, in front of `base` (an http:// stand-in): the same URL path over TLS. */
async function tlsProxy(base: string): Promise<{ url: string; close(): void }> {
  const upstream = new URL(base);
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
  return {
    url: `https://127.0.0.1:${typeof address === "object" && address ? address.port : 0}${upstream.pathname.replace(/\/$/, "")}`,
    close: () => proxy.close(),
  };
}

beforeAll(async () => {
  if (!hasOpenssl()) return;
  world = await serverWorld();
  dir = join(world.outdir, "..");
  makeCertificates(dir);
  const kube = await tlsProxy(world.kube.baseUrl);
  const github = await tlsProxy(world.github.baseUrl);
  apiUrl = kube.url;
  githubUrl = github.url;
  closeProxy = () => {
    kube.close();
    github.close();
  };
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

  it("trusts the cluster's CA for the API server alone: GitHub under it is refused, unless given as GitHub's CA", async () => {
    const deep = async (url: string) =>
      (
        (await (await fetch(`${url}/healthz/deep`, { headers: { authorization: `Bearer ${world.adminToken}` } })).json()) as {
          checks: { name: string; ok: boolean; detail: string }[];
        }
      ).checks;
    const kubeOnly = buildServer(join(dir, "kube-ca-only"), { kubeCa: join(dir, "ca.crt") });
    const server = await world.start({ outdir: kubeOnly, settings: { KUBE_API_URL: apiUrl, GITHUB_API_URL: githubUrl } });
    try {
      const checks = await deep(server.url);
      expect(checks.find((c) => c.name === `namespace ${NAMESPACE}`)).toMatchObject({ ok: true });
      expect(checks.find((c) => c.name === "deliveries")).toMatchObject({ ok: false });
    } finally {
      await server.kill();
    }
    const both = buildServer(join(dir, "both-cas"), { kubeCa: join(dir, "ca.crt"), githubCa: join(dir, "ca.crt") });
    const ghes = await world.start({ outdir: both, settings: { KUBE_API_URL: apiUrl, GITHUB_API_URL: githubUrl } });
    try {
      const checks = await deep(ghes.url);
      expect(checks.find((c) => c.name === "deliveries")).toMatchObject({ ok: true });
    } finally {
      await ghes.kill();
    }
  });
});
