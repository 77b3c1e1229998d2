// Stand-ins the focused setup tests share: a kubectl on PATH that records its
// argv and stdin (its answers set by FAKE_* variables), a "Worker" that answers
// /healthz/deep to the ADMIN_TOKEN the Cloudflare stand-in holds, and an
// existing App's key and webhook secret files.
import { generateKeyPairSync } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { CloudflareStandin } from "../../standins/cloudflare/server.ts";

export interface KubectlCall {
  args: string[];
  stdin: string;
  /** For `apply -k DIR`: what `kubectl kustomize DIR` renders (what was applied). */
  rendered?: string;
}

/**
 * Writes `kubectl` into `dir`. FAKE_LOG: where calls go (one JSON line each).
 * FAKE_CONTEXTS: comma-separated contexts, the first current ("" for none).
 * FAKE_SA_SECRET / FAKE_AGENT_SECRET: none | other | setup (who made Secret
 * arc-reaper-token / arc-reaper-agent-token). FAKE_SA_TOKEN: arc-reaper-token's token.
 * `kustomize` runs the real kubectl's; `port-forward` forwards a free local port to
 * FAKE_HEALTH_URL until stopped; FAKE_API_SERVER: the context's API server.
 */
export function writeFakeKubectl(dir: string): void {
  const path = join(dir, "kubectl");
  writeFileSync(
    path,
    `#!${process.execPath}
const fs = require("node:fs");
const { execFileSync } = require("node:child_process");
const args = process.argv.slice(2);
const call = { args, stdin: "" };
if (args.includes("-f") && args.includes("-")) call.stdin = fs.readFileSync(0, "utf8");
const k = args.indexOf("-k");
if (args.includes("apply") && k >= 0) call.rendered = execFileSync("/usr/bin/kubectl", ["kustomize", args[k + 1]], { encoding: "utf8" });
fs.appendFileSync(process.env.FAKE_LOG, JSON.stringify(call) + "\\n");
const contexts = (process.env.FAKE_CONTEXTS || "").split(",").filter(Boolean);
const out = (t) => { process.stdout.write(t); process.exit(0); };
const notFound = (n) => { process.stderr.write('Error from server (NotFound): secrets "' + n + '" not found\\n'); process.exit(1); };
if (args[0] === "kustomize") { process.stdout.write(execFileSync("/usr/bin/kubectl", args, { encoding: "utf8" })); process.exit(0); }
if (args[0] === "config" && args[1] === "view") out(process.env.FAKE_API_SERVER || "https://127.0.0.1:6443");
if (args.includes("port-forward")) {
  // A forward to FAKE_HEALTH_URL (the "Service"), on a free port, announced as kubectl does; it runs until stopped.
  const target = new URL(process.env.FAKE_HEALTH_URL);
  const server = require("node:net").createServer((c) => { const up = require("node:net").connect(Number(target.port), target.hostname); c.pipe(up).pipe(c); up.on("error", () => c.destroy()); c.on("error", () => up.destroy()); });
  server.listen(0, "127.0.0.1", () => process.stdout.write("Forwarding from 127.0.0.1:" + server.address().port + " -> 8080\\n"));
  process.on("SIGTERM", () => process.exit(0));
  return;
}
if (args[0] === "config" && args[1] === "current-context") { if (!contexts[0]) { process.stderr.write("error: current-context is not set\\n"); process.exit(1); } out(contexts[0] + "\\n"); }
if (args[0] === "config" && args[1] === "get-contexts") out(contexts.join("\\n") + "\\n");
if (args.includes("get") && args.includes("arc-reaper-token")) {
  if (args.some((a) => a.includes("{.data.token}"))) out(Buffer.from(process.env.FAKE_SA_TOKEN || "").toString("base64"));
  const who = process.env.FAKE_SA_SECRET || "none";
  if (who === "none") notFound("arc-reaper-token");
  out("kubernetes.io/service-account-token arc-reaper " + (who === "setup" ? "arc-reaper-setup" : ""));
}
if (args.includes("get") && args.includes("arc-reaper-agent-token")) {
  const who = process.env.FAKE_AGENT_SECRET || "none";
  if (who === "none") notFound("arc-reaper-agent-token");
  out(who === "setup" ? "arc-reaper-setup" : "");
}
out("configured\\n");
`,
  );
  chmodSync(path, 0o755);
}

export function kubectlCalls(log: string): KubectlCall[] {
  return existsSync(log)
    ? readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as KubectlCall)
    : [];
}

/** A "Worker" whose /healthz/deep passes for the ADMIN_TOKEN the stand-in holds for `name` (once `ready()` says so). */
export async function startHealthStub(
  cloudflare: CloudflareStandin,
  name: string,
  ready: () => boolean = () => true,
): Promise<{ url: string; asked: () => number; close(): Promise<void> }> {
  let asked = 0;
  const server = createServer((req, res) => {
    asked += 1;
    const admin = cloudflare.scripts.get(name)?.secrets.get("ADMIN_TOKEN");
    const okAuth = admin !== undefined && req.url === "/healthz/deep" && req.headers.authorization === `Bearer ${admin}`;
    const good = okAuth && ready();
    res.writeHead(okAuth ? (good ? 200 : 503) : 401, { "content-type": "application/json" });
    res.end(
      JSON.stringify(
        good
          ? { ok: true, checks: [] }
          : { ok: false, checks: [{ name: okAuth ? "agent" : "auth", ok: false, detail: okAuth ? "not connected" : "bad token" }] },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked: () => asked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An existing App's private key and webhook secret, as files the user gives with --app-key-file and --webhook-secret-file. */
export function writeAppFiles(dir: string): { keyFile: string; secretFile: string; key: string; secret: string } {
  const key = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const secret = "whsec-0123456789abcdef0123456789abcdef";
  const keyFile = join(dir, "app.pem");
  const secretFile = join(dir, "webhook-secret.txt");
  writeFileSync(keyFile, key, { mode: 0o600 });
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  return { keyFile, secretFile, key: key.trim(), secret };
}
