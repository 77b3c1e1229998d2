// The in-cluster server as the image runs it, for the node tests: the bundle and
// config from scripts/server/build.ts, the pinned workerd serving them on a
// directory, settings in its environment (as a ConfigMap and Secret give them),
// against the stand-in GitHub and Kubernetes servers. Not wrangler dev.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhooks } from "@octokit/webhooks";
import { freePort, waitFor } from "../../../scripts/lib/local-stack.ts";
import { buildServer } from "../../../scripts/server/build.ts";
import { drainAddress, serverEnv, WORKERD, workerdArgs } from "../../../scripts/server/serve.ts";
import { startGithubStandin, type GithubStandin } from "../../standins/github/server.ts";
import { createGithubTenant, type GithubTenant } from "../../standins/github/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { createKubeTenant, identityBinding, roleBindings, type KubeTenant } from "../../standins/kube/control.ts";

export const NAMESPACE = "arc-runners";
export const REPO = "octo-org/octo-repo";
export const INSTALLATION = 4242;

export interface ServerWorld {
  github: GithubTenant;
  kube: KubeTenant;
  adminToken: string;
  /** The built server's directory (bundle, limiter, config). */
  outdir: string;
  /** Starts workerd on `dataDir` (a fresh one unless given) with the world's settings over `settings`; one at a time. */
  /** `port`: the one a server before it had (an agent's ARC_REAPER_URL stays the same); a free one unless given. */
  start(o?: { dataDir?: string; settings?: Record<string, string | undefined>; outdir?: string; port?: number }): Promise<RunningServer>;
  sign(body: string): Promise<string>;
  /** The ServiceAccount's token file the server reads with KUBE_TOKEN=service-account-token-file (the kubelet rotates it). */
  writeServiceAccountToken(token: string): void;
  /** A token the stand-in accepts for arc-reaper's ServiceAccount (its Role). */
  kubeToken: string;
  close(): Promise<void>;
}

interface RunningServer {
  url: string;
  /** The drain's socket (GET /drain, as the pod's preStop calls it): the next port, on 127.0.0.1. */
  drainUrl: string;
  pid: number;
  dataDir: string;
  /** Everything the server printed so far (workerd's own errors among it). */
  output(): string[];
  /** The server's JSON log lines so far. */
  lines(msg?: string): Record<string, unknown>[];
  /** SIGKILL, as a node's loss or an OOM kill would end it; resolves once it exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const parse = (line: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(line.slice(line.indexOf("{")));
    return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/** A free port whose next one (the drain's) is free too. */
async function freePortPair(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const next = createServer();
    const free = await new Promise<boolean>((resolve) => {
      next.once("error", () => resolve(false));
      next.listen(port + 1, "127.0.0.1", () => next.close(() => resolve(true)));
    });
    if (free || tries >= 20) return port;
  }
}

export async function serverWorld(): Promise<ServerWorld> {
  const work = mkdtempSync(join(tmpdir(), "arc-reaper-server-"));
  const outdir = buildServer(join(work, "server"));
  let githubStandin: GithubStandin | undefined;
  let kubeStandin: KubeStandin | undefined;
  [githubStandin, kubeStandin] = await Promise.all([startGithubStandin(), startKubeStandin()]);
  const github = await createGithubTenant(githubStandin.url);
  await github.addInstallation({ id: INSTALLATION, repositories: [REPO] });
  const kube = await createKubeTenant(kubeStandin.url, { namespaces: [NAMESPACE] });
  const kubeToken = `server-kube-${randomBytes(18).toString("base64url")}`;
  await kube.addServiceAccount({ name: "arc-reaper", namespace: "arc-reaper", token: kubeToken, bindings: [...roleBindings([NAMESPACE]), identityBinding()] });
  const adminToken = `server-admin-${randomBytes(18).toString("base64url")}`;
  const webhookSecret = `server-webhook-${randomBytes(18).toString("base64url")}`;
  const children = new Set<ChildProcess>();
  const serviceAccountDir = join(work, "service-account");
  mkdirSync(serviceAccountDir);
  const writeServiceAccountToken = (token: string) => writeFileSync(join(serviceAccountDir, "token"), token);
  writeServiceAccountToken(kubeToken);

  const base: Record<string, string> = {
    GITHUB_WEBHOOK_SECRET: webhookSecret,
    GITHUB_APP_PRIVATE_KEY: github.privateKeyPkcs1.trim(),
    GITHUB_APP_ID: String(github.appId),
    GITHUB_API_URL: github.baseUrl,
    KUBE_API_URL: kube.baseUrl,
    KUBE_TOKEN: kubeToken,
    ADMIN_TOKEN: adminToken,
    REAPER_NAMESPACES: NAMESPACE,
    REAPER_DRY_RUN: "false",
  };

  const start: ServerWorld["start"] = async (o = {}) => {
    const dataDir = o.dataDir ?? mkdtempSync(join(work, "data-"));
    const port = o.port ?? (await freePortPair());
    const settings: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...base, ...o.settings })) if (v !== undefined) settings[k] = v;
    // Only the settings and PATH: nothing of this process's environment reaches the server.
    const env = serverEnv({ PATH: process.env.PATH ?? "", ...settings });
    const child = spawn(WORKERD, workerdArgs(o.outdir ?? outdir, dataDir, `127.0.0.1:${port}`, serviceAccountDir), { env, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    const log: Record<string, unknown>[] = [];
    const raw: string[] = [];
    let exited = false;
    const gone = new Promise<void>((resolve) =>
      child.once("exit", () => {
        exited = true;
        children.delete(child);
        resolve();
      }),
    );
    for (const stream of [child.stdout, child.stderr]) {
      let partial = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        const parts = (partial + chunk).split("\n");
        partial = parts.pop() ?? "";
        for (const line of parts) {
          raw.push(line);
          const json = parse(line);
          if (json) log.push(json);
        }
      });
    }
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      "workerd to answer GET /healthz",
      async () => {
        if (exited) throw new Error(`workerd exited:\n${raw.slice(-20).join("\n")}`);
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
        await res.arrayBuffer();
        return true;
      },
      20_000,
      100,
    );
    return {
      url,
      drainUrl: `http://${drainAddress(`127.0.0.1:${port}`)}`,
      pid: child.pid ?? 0,
      dataDir,
      output: () => [...raw],
      lines: (msg) => (msg === undefined ? [...log] : log.filter((l) => l.msg === msg)),
      async kill(signal = "SIGKILL") {
        if (!exited) child.kill(signal);
        await gone;
      },
    };
  };

  return {
    github,
    kube,
    adminToken,
    outdir,
    start,
    sign: (body) => new Webhooks({ secret: webhookSecret }).sign(body),
    writeServiceAccountToken,
    kubeToken,
    async close() {
      for (const child of children) child.kill("SIGKILL");
      await Promise.all([githubStandin?.close(), kubeStandin?.close()]);
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** POST /webhook signed as GitHub signs it, with extra headers (e.g. a proxy's). */
export async function postSigned(world: ServerWorld, url: string, event: string, payload: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const body = JSON.stringify(payload);
  return fetch(`${url}/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": randomUUID(),
      "x-hub-signature-256": await world.sign(body),
      ...headers,
    },
    body,
  });
}

/**
 * A reverse proxy as an Ingress controller is one: it appends the address it
 * saw the client connect from to X-Forwarded-For (keeping what the client
 * wrote before it) and sets X-Real-IP. Clients pick their address among
 * 127.0.0.0/8 with `via(...)`.
 */
export async function trustedProxy(
  target: string,
  o: { forwardedProto?: string } = {},
): Promise<{ url: string; via(client: string, path: string, init?: ProxiedInit): Promise<ProxiedAnswer>; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const seen = req.socket.remoteAddress?.replace(/^::ffff:/, "") ?? "";
    const prior = req.headers["x-forwarded-for"];
    const headers = {
      ...req.headers,
      "x-forwarded-for": prior ? `${String(prior)}, ${seen}` : seen,
      "x-real-ip": seen,
      host: upstream.host,
      // As an Ingress that terminates TLS writes it (overwriting whatever the client sent).
      ...(o.forwardedProto ? { "x-forwarded-proto": o.forwardedProto } : {}),
    };
    const out = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (answer: IncomingMessage) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on("error", () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    via: (client, path, init = {}) =>
      new Promise((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port, path, method: init.method ?? "GET", localAddress: client, headers: init.headers ?? {}, agent: false },
          (res) => {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => (body += c));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
          },
        );
        req.on("error", reject);
        req.end(init.body);
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface ProxiedAnswer {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

export interface ProxiedInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}
