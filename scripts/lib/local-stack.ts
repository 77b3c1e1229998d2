// A whole arc-reaper world on this machine, for the demo and the browser test:
// the stand-in GitHub and Kubernetes API servers (in this process), a GitHub
// App tenant with one installation, a cluster tenant with a least-privilege
// service account, and the real Worker under `wrangler dev` pointed at them,
// with an empty ledger. Everything listens on 127.0.0.1 and every wait is bounded.
//
// Plain Node (type stripping): no test framework, erasable TypeScript only.
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Webhooks } from "@octokit/webhooks";
import type { RunnerRow } from "../../src/admin/runner-rows.ts";
import { startGithubStandin, type GithubStandin } from "../../test/standins/github/server.ts";
import { createGithubTenant, type GithubTenant } from "../../test/standins/github/control.ts";
import { startKubeStandin, type KubeStandin } from "../../test/standins/kube/server.ts";
import { createKubeTenant, identityBinding, roleBindings, type KubeTenant } from "../../test/standins/kube/control.ts";
import type { DecisionLine as DecisionLog, SweepLine as SweepLog } from "../../src/reaper/log-lines.ts";
import { addAgentServiceAccount, agentRelay, localAgent, type AgentLogLine, type AgentRelay, type LocalAgent } from "./local-agent.ts";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER = join(ROOT, "node_modules/wrangler/bin/wrangler.js");

export interface LocalStackOptions {
  /** Worker settings on top of the defaults below, e.g. { REAPER_GRACE_SECONDS: "5" }. Not secrets. */
  settings?: Record<string, string>;
  /** Namespace the runners live in and arc-reaper watches. Default "arc-runners". */
  namespace?: string;
  /** Repositories the App's installation covers. Default ["octo-org/octo-repo"]. */
  repositories?: string[];
  installationId?: number;
  /** Every line wrangler prints (the Worker's JSON log lines among them). */
  onLog?: (line: string) => void;
  /** Bound on starting wrangler dev and seeing /healthz answer 200. Default 90 s. */
  startTimeoutMs?: number;
  /**
   * Agent mode: the Worker runs CLUSTER_MODE=agent and the real agent (src/agent)
   * runs in this process against the stand-in cluster under infra/agent's Role,
   * connected before startLocalStack resolves.
   */
  agent?: {
    dryRun?: boolean;
    onLog?: (line: AgentLogLine) => void;
    /** Dial through a relay (stack.relay) that tests can cut. */
    relay?: boolean;
    /**
     * Several clusters: one stand-in cluster and one agent per name, each with the token made for
     * it from AGENT_TOKEN; the Worker expects them all (AGENT_CLUSTERS). The first is `kube`/`agent`.
     */
    clusters?: string[];
  };
}

/** One stand-in cluster and its agent (agent mode with several clusters). */
export interface LocalCluster {
  name: string;
  kube: KubeTenant;
  agent: LocalAgent;
}

/** The lines a sweep logs: its summary, and one per runner's decision (src/reaper/run-pass.ts). */
export type { DecisionLine as DecisionLog, SweepLine as SweepLog } from "../../src/reaper/log-lines.ts";

export interface LocalStack {
  /** The Worker, e.g. http://127.0.0.1:41234. */
  url: string;
  /** wrangler's pid, which is also its process group's id. */
  pid: number;
  adminToken: string;
  namespace: string;
  repositories: string[];
  installationId: number;
  github: GithubTenant;
  kube: KubeTenant;
  /** Agent mode only: the in-cluster agent (stop and start it to cut and restore the link). */
  agent?: LocalAgent;
  /** Agent mode only: AGENT_TOKEN, for tests that dial GET /agent themselves. */
  agentToken?: string;
  /** Agent mode with `relay`: the relay between the agent and the Worker. */
  relay?: AgentRelay;
  /** Agent mode with `clusters`: every cluster, in the order given (the first is `kube` and `agent`). */
  clusters?: LocalCluster[];
  /** GET /metrics with the admin token: the Prometheus text. */
  metrics(): Promise<string>;
  /** The Worker's JSON log lines whose msg is `msg`, oldest first. */
  logLines(msg: string): Record<string, unknown>[];
  /** POST /webhook with a valid signature; a fresh delivery id unless given. */
  postWebhook(event: string, payload: unknown, opts?: { delivery?: string }): Promise<{ status: number; body: unknown }>;
  /** Fires the cron handler and waits (bounded) until the sweep has logged its summary, i.e. its effects are in the ledger and the cluster. */
  sweep(opts?: { timeoutMs?: number }): Promise<{ summary: SweepLog; decisions: DecisionLog[] }>;
  /** GET /admin/runners with the bearer token. */
  adminRunners(state?: string): Promise<RunnerRow[]>;
  /** Wrangler's output so far (at most the last 2,000 lines). */
  logs(): string[];
  /** Kills wrangler's process group, closes the stand-ins, removes the temp state. Bounded; safe to call twice. */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (free when asked; wrangler binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("no free port"))));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Whether `promise` settled within ms; the timer never outlives the race. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` every `everyMs` until it returns a value, or throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleep(everyMs);
  }
}

/** A fetch that gives up after timeoutMs. */
function fetchWithin(url: string, init: RequestInit = {}, timeoutMs = 10_000): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}

/** JSON log lines (the Worker's logLine output) inside wrangler's stdout. */
function jsonLine(line: string): Record<string, unknown> | undefined {
  const start = line.indexOf("{");
  if (start < 0) return undefined;
  try {
    const value: unknown = JSON.parse(line.slice(start));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** What a running stack holds, for stop() to let go of; filled in as it starts. */
interface Running {
  githubStandin?: GithubStandin;
  kubeStandin?: KubeStandin;
  child?: ChildProcess;
  stateDir?: string;
  exited?: { code: number | null; signal: NodeJS.Signals | null };
  agent?: LocalAgent;
  relay?: AgentRelay;
  clusters: LocalCluster[];
  stopped: boolean;
}

/** wrangler dev's output: its last lines, and the Worker's JSON log lines numbered from the start (`dropped` have been let go). */
interface WorkerLog {
  lines: string[];
  json: Record<string, unknown>[];
  dropped: number;
}

/** The whole process group: wrangler, workerd and esbuild. */
function killGroup(run: Running, signal: NodeJS.Signals): void {
  if (!run.child?.pid) return;
  try {
    process.kill(-run.child.pid, signal);
  } catch {
    // already gone
  }
}

/** Should this process end without stop() (an uncaught error, process.exit): leave nothing behind. */
function leaveNothingAtExit(run: Running): () => void {
  return () => {
    killGroup(run, "SIGKILL");
    try {
      if (run.stateDir) rmSync(run.stateDir, { recursive: true, force: true });
    } catch {
      // best effort at exit
    }
  };
}

/** Stops the agents, wrangler and its workerd, the stand-ins, and removes the state directory; a second call does nothing. */
async function stopStack(run: Running, onExit: () => void): Promise<void> {
  if (run.stopped) return;
  run.stopped = true;
  process.off("exit", onExit);
  await run.agent?.stop().catch(() => undefined);
  await Promise.all(run.clusters.map((c) => c.agent.stop().catch(() => undefined)));
  await run.relay?.close().catch(() => undefined);
  const child = run.child;
  if (child && !run.exited) {
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    killGroup(run, "SIGTERM");
    if (!(await within(gone, 5_000))) {
      killGroup(run, "SIGKILL");
      await within(gone, 2_000);
    }
  }
  // workerd children may outlive wrangler's exit by a moment: make sure the group is gone.
  killGroup(run, "SIGKILL");
  // A straggler that inherited wrangler's stdout must not keep this process alive.
  child?.stdout?.destroy();
  child?.stderr?.destroy();
  await Promise.all([run.githubStandin?.close(), run.kubeStandin?.close()]);
  if (run.stateDir) await rm(run.stateDir, { recursive: true, force: true, maxRetries: 3 });
}

/** Secrets go in an env file only this user can read, never on the command line. */
async function writeSecrets(stateDir: string, secrets: Record<string, string | undefined>): Promise<string> {
  const secretsFile = join(stateDir, "secrets.env");
  const quoted = (v: string) => `"${v.replace(/\n/g, "\\n")}"`;
  const lines = Object.entries(secrets).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${quoted(v)}`]));
  await writeFile(secretsFile, [...lines, ""].join("\n"), { mode: 0o600 });
  await chmod(secretsFile, 0o600);
  return secretsFile;
}

/** `wrangler dev` on 127.0.0.1, the test entry when the stack asks for the test hooks, the settings as vars. */
function wranglerArgs(vars: Record<string, string>, ports: { port: number; inspectorPort: number }, secretsFile: string, stateDir: string): string[] {
  return [
    WRANGLER,
    "dev",
    // A stack that asks for the test hooks runs the test entry (the test ledger, the bench route).
    ...(vars.ARC_REAPER_TEST_HOOKS === "on" ? [join(ROOT, "test/hooks/entry.ts")] : []),
    "--ip",
    "127.0.0.1",
    "--port",
    String(ports.port),
    "--inspector-port",
    String(ports.inspectorPort),
    "--env-file",
    join(ROOT, ".dev.vars.example"),
    "--env-file",
    secretsFile,
    "--persist-to",
    join(stateDir, "wrangler-state"),
    "--show-interactive-dev-session=false",
    ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
}

function spawnWrangler(args: string[]): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: ROOT,
    detached: true, // its own process group, so stop() can kill wrangler and workerd together
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
  });
}

/** Keeps a stream's lines (the last 2,000) and the Worker's JSON lines among them (the last 30,000). */
function collectLines(stream: NodeJS.ReadableStream | null, log: WorkerLog, onLog?: (line: string) => void): void {
  let partial = "";
  stream?.setEncoding("utf8");
  stream?.on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) {
      log.lines.push(line);
      if (log.lines.length > 2000) log.lines.shift();
      const json = jsonLine(line);
      if (json) {
        log.json.push(json);
        if (log.json.length > 30_000) {
          log.json.shift();
          log.dropped++;
        }
      }
      onLog?.(line);
    }
  });
}

/** Until the Worker answers GET /healthz with 200; a 503 (bad settings) or wrangler's exit fails at once. */
async function waitForHealthz(url: string, run: Running, log: WorkerLog, timeoutMs: number): Promise<void> {
  const tail = () => log.lines.slice(-30).join("\n");
  await waitFor(
    "wrangler dev to answer GET /healthz with 200",
    async () => {
      if (run.exited) throw new Error(`wrangler dev exited (${run.exited.code ?? run.exited.signal}):\n${tail()}`);
      const res = await fetchWithin(`${url}/healthz`, {}, 2_000);
      const body = await res.text();
      // 503 names each bad setting (never their values): say so at once instead of waiting.
      if (res.status === 503) throw new Error(`arc-reaper reports bad settings: ${body}`);
      return res.status === 200 ? true : undefined;
    },
    timeoutMs,
    250,
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\n--- wrangler output ---\n${tail()}`);
  });
}

/** The first sweep-ending line logged at or after absolute index `from`, with the decisions before it. */
function sweepEnd(log: WorkerLog, from: number): { end: Record<string, unknown>; decisions: DecisionLog[] } | undefined {
  const start = Math.max(0, from - log.dropped);
  const i = log.json.findIndex((l, idx) => idx >= start && typeof l.msg === "string" && /^sweep( |$)/.test(l.msg));
  if (i < 0) return undefined;
  // The sweep's own decisions: the ledger's alarm logs its decisions too, tagged by "alarm".
  const decisions = log.json.slice(start, i).filter((l) => l.msg === "decision" && l.by === "sweep") as unknown as DecisionLog[];
  return { end: log.json[i]!, decisions };
}

/** One stand-in cluster per name (the first is `kube`), each with its own agent and its own token; answers once each sent its snapshot. */
async function startClusterAgents(
  run: Running,
  log: WorkerLog,
  at: { url: string; kube: KubeTenant; kubeStandin: KubeStandin; namespace: string; agentToken: string },
  agentOpts: NonNullable<LocalStackOptions["agent"]> & { clusters: string[] },
): Promise<void> {
  const { url, kube, kubeStandin, namespace, agentToken } = at;
  for (const [i, name] of agentOpts.clusters.entries()) {
    const clusterKube = i === 0 ? kube : await createKubeTenant(kubeStandin.url, { namespaces: [namespace] });
    const saToken = `local-agent-sa-${randomBytes(18).toString("base64url")}`;
    await addAgentServiceAccount(clusterKube, [namespace], saToken);
    const token = createHmac("sha256", agentToken).update(name).digest("hex");
    const onLog = agentOpts.onLog;
    const clusterAgent = localAgent({
      workerUrl: url,
      agentToken: token,
      cluster: name,
      kube: clusterKube,
      serviceAccountToken: saToken,
      namespaces: [namespace],
      dryRun: agentOpts.dryRun,
      onLog: onLog ? (l) => onLog({ ...l, fields: { ...l.fields, cluster: name } }) : undefined,
    });
    run.clusters.push({ name, kube: clusterKube, agent: clusterAgent });
    clusterAgent.start();
  }
  const snapshots = () => new Set(log.json.filter((l) => l.msg === "agent snapshot").map((l) => String(l.cluster)));
  await waitFor(
    "every cluster's agent to connect and send its snapshot",
    async () => (agentOpts.clusters.every((c) => snapshots().has(c)) ? true : undefined),
    30_000,
    100,
  );
}

/** The one cluster's agent (through a CONNECT relay when asked); answers once it sent its snapshot. */
async function startOneAgent(
  run: Running,
  log: WorkerLog,
  at: { url: string; kube: KubeTenant; namespace: string; agentToken: string },
  agentOpts: NonNullable<LocalStackOptions["agent"]>,
): Promise<void> {
  const saToken = `local-agent-sa-${randomBytes(18).toString("base64url")}`;
  await addAgentServiceAccount(at.kube, [at.namespace], saToken);
  if (agentOpts.relay) run.relay = await agentRelay(at.url);
  run.agent = localAgent({
    workerUrl: run.relay?.url ?? at.url,
    agentToken: at.agentToken,
    kube: at.kube,
    serviceAccountToken: saToken,
    namespaces: [at.namespace],
    dryRun: agentOpts.dryRun,
    onLog: agentOpts.onLog,
  });
  run.agent.start();
  await waitFor("the agent to connect and send its snapshot", async () => (log.json.some((l) => l.msg === "agent snapshot") ? true : undefined), 30_000, 100);
}

/** A signed delivery to the Worker, as GitHub sends it. */
async function postSignedWebhook(
  url: string,
  webhookSecret: string,
  event: string,
  payload: unknown,
  delivery?: string,
): Promise<{ status: number; body: unknown }> {
  const body = JSON.stringify(payload);
  const res = await fetchWithin(`${url}/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": delivery ?? randomUUID(),
      "x-hub-signature-256": await new Webhooks({ secret: webhookSecret }).sign(body),
      "user-agent": "GitHub-Hookshot/local-stack",
    },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}

/** The cron's sweep, triggered through wrangler's scheduled route; answers its summary line and decisions. */
async function triggerSweep(url: string, run: Running, log: WorkerLog, timeoutMs: number): Promise<{ summary: SweepLog; decisions: DecisionLog[] }> {
  const from = log.dropped + log.json.length;
  const res = await fetchWithin(`${url}/cdn-cgi/local/scheduled?cron=${encodeURIComponent("* * * * *")}`, {}, timeoutMs);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`triggering the scheduled handler answered ${res.status}`);
  const { end, decisions } = await waitFor(
    "the sweep to log its summary",
    async () => {
      if (run.exited) throw new Error("wrangler dev exited");
      return sweepEnd(log, from);
    },
    timeoutMs,
    100,
  );
  // "sweep skipped: ..." or "sweep failed": say what the Worker said.
  if (end.msg !== "sweep") throw new Error(`the sweep did not run: ${JSON.stringify(end)}`);
  return { summary: end as unknown as SweepLog, decisions };
}

/** GET with the admin bearer; anything but 200 is an error naming the answer. */
async function adminGet(url: string, adminToken: string, what: string): Promise<Response> {
  const res = await fetchWithin(`${url}${what}`, { headers: { authorization: `Bearer ${adminToken}` } });
  if (res.status !== 200) throw new Error(`GET ${what.split("?")[0]} answered ${res.status}: ${await res.text()}`);
  return res;
}

/** The Worker's settings as vars: the stand-ins' addresses, the namespace, a short grace, agent mode when asked; the stack's own last. */
function workerVars(github: GithubTenant, kube: KubeTenant, namespace: string, opts: LocalStackOptions): Record<string, string> {
  return {
    GITHUB_API_URL: github.baseUrl,
    GITHUB_APP_ID: String(github.appId),
    KUBE_API_URL: kube.baseUrl,
    REAPER_NAMESPACES: namespace,
    REAPER_DRY_RUN: "false",
    REAPER_GRACE_SECONDS: "5",
    ...(opts.agent ? { CLUSTER_MODE: "agent" } : {}),
    ...(opts.agent?.clusters ? { AGENT_CLUSTERS: opts.agent.clusters.join(",") } : {}),
    ...opts.settings,
  };
}

/** The stand-ins, a GitHub App tenant with the installation, and a cluster tenant with arc-reaper's own service account. */
async function startStandins(
  run: Running,
  o: { installationId: number; repositories: string[]; namespace: string; kubeToken: string },
): Promise<{ github: GithubTenant; kube: KubeTenant; kubeStandin: KubeStandin }> {
  const [githubStandin, kubeStandin] = await Promise.all([startGithubStandin(), startKubeStandin()]);
  Object.assign(run, { githubStandin, kubeStandin });
  const github = await createGithubTenant(githubStandin.url);
  await github.addInstallation({ id: o.installationId, repositories: o.repositories });
  const kube = await createKubeTenant(kubeStandin.url, { namespaces: [o.namespace] });
  // arc-reaper's own RBAC: get, list and delete EphemeralRunners in its namespace, nothing else.
  await kube.addServiceAccount({
    name: "arc-reaper",
    namespace: "arc-reaper",
    token: o.kubeToken,
    bindings: [...roleBindings([o.namespace]), identityBinding()],
  });
  return { github, kube, kubeStandin };
}

/** The Worker under `wrangler dev` in a state directory of its own, its output collected; answers once GET /healthz says 200. */
async function startWorker(
  run: Running,
  log: WorkerLog,
  o: { secrets: Record<string, string | undefined>; vars: Record<string, string>; onExit: () => void; onLog?: (line: string) => void; startTimeoutMs: number },
): Promise<{ url: string; child: ChildProcess }> {
  const stateDir = await mkdtemp(join(tmpdir(), "arc-reaper-stack-"));
  run.stateDir = stateDir;
  process.once("exit", o.onExit);
  const secretsFile = await writeSecrets(stateDir, o.secrets);
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const child = spawnWrangler(wranglerArgs(o.vars, { port, inspectorPort }, secretsFile, stateDir));
  run.child = child;
  child.once("exit", (code, signal) => {
    run.exited = { code, signal };
  });
  collectLines(child.stdout, log, o.onLog);
  collectLines(child.stderr, log, o.onLog);
  const url = `http://127.0.0.1:${port}`;
  await waitForHealthz(url, run, log, o.startTimeoutMs);
  return { url, child };
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const namespace = opts.namespace ?? "arc-runners";
  const repositories = opts.repositories ?? ["octo-org/octo-repo"];
  const installationId = opts.installationId ?? 4242;
  const adminToken = `local-admin-${randomBytes(18).toString("base64url")}`;
  const webhookSecret = `local-webhook-${randomBytes(18).toString("base64url")}`;
  const kubeToken = `local-kube-${randomBytes(18).toString("base64url")}`;
  const agentToken = opts.agent ? `local-agent-${randomBytes(24).toString("base64url")}` : undefined;
  const run: Running = { clusters: [], stopped: false };
  const log: WorkerLog = { lines: [], json: [], dropped: 0 };
  const onExit = leaveNothingAtExit(run);
  const stop = () => stopStack(run, onExit);

  try {
    const { github, kube, kubeStandin } = await startStandins(run, { installationId, repositories, namespace, kubeToken });
    const secrets = {
      GITHUB_WEBHOOK_SECRET: webhookSecret,
      GITHUB_APP_PRIVATE_KEY: github.privateKeyPkcs1.trim(),
      KUBE_TOKEN: kubeToken,
      ADMIN_TOKEN: adminToken,
      AGENT_TOKEN: agentToken,
    };
    const vars = workerVars(github, kube, namespace, opts);
    const { url, child } = await startWorker(run, log, { secrets, vars, onExit, onLog: opts.onLog, startTimeoutMs: opts.startTimeoutMs ?? 90_000 });
    if (opts.agent?.clusters && agentToken) {
      await startClusterAgents(run, log, { url, kube, kubeStandin, namespace, agentToken }, { ...opts.agent, clusters: opts.agent.clusters });
    } else if (opts.agent && agentToken) {
      await startOneAgent(run, log, { url, kube, namespace, agentToken }, opts.agent);
    }

    return {
      url,
      agent: run.agent ?? run.clusters[0]?.agent,
      ...(run.clusters.length > 0 ? { clusters: run.clusters } : {}),
      agentToken,
      relay: run.relay,
      metrics: async () => (await adminGet(url, adminToken, "/metrics")).text(),
      logLines: (msg) => log.json.filter((l) => l.msg === msg),
      pid: child.pid ?? 0,
      adminToken,
      namespace,
      repositories,
      installationId,
      github,
      kube,
      postWebhook: (event, payload, o = {}) => postSignedWebhook(url, webhookSecret, event, payload, o.delivery),
      sweep: (o = {}) => triggerSweep(url, run, log, o.timeoutMs ?? 30_000),
      adminRunners: async (state) =>
        ((await (await adminGet(url, adminToken, `/admin/runners${state ? `?state=${encodeURIComponent(state)}` : ""}`)).json()) as { runners: RunnerRow[] })
          .runners,
      logs: () => [...log.lines],
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

// --- real webhook payloads ------------------------------------------------------

type Json = Record<string, unknown>;
const require = createRequire(import.meta.url);
let examples: { name: string; examples: Json[] }[] | undefined;

/** A real payload from @octokit/webhooks-examples (a deep copy). */
export function examplePayload(event: string, action: string): Json {
  examples ??= require("@octokit/webhooks-examples") as { name: string; examples: Json[] }[];
  const found = examples.find((e) => e.name === event)?.examples.find((p) => p.action === action);
  if (!found) throw new Error(`no ${event}.${action} example in @octokit/webhooks-examples`);
  return structuredClone(found);
}

export interface JobPayload {
  runner: string | null;
  repo: string;
  runId: number;
  runAttempt: number;
  jobId: number;
  installationId: number;
  startedAt: string;
  completedAt?: string;
  conclusion?: string;
  labels?: string[];
  /** workflow_job.runner_id: the registration that took the job (default: the example's). */
  runnerId?: number | null;
}

/** workflow_job (in_progress or completed) as GitHub sends it for an ARC runner, with the fields of the case set. */
export function workflowJobPayload(action: "in_progress" | "completed", o: JobPayload): Json {
  const payload = examplePayload("workflow_job", action);
  const job = payload.workflow_job as Json;
  Object.assign(job, {
    id: o.jobId,
    run_id: o.runId,
    run_attempt: o.runAttempt,
    runner_name: o.runner,
    runner_group_name: "Default",
    labels: o.labels ?? ["arc-runners"],
    status: action,
    started_at: o.startedAt,
  });
  if (o.runnerId !== undefined) job.runner_id = o.runnerId;
  if (action === "completed") Object.assign(job, { completed_at: o.completedAt, conclusion: o.conclusion });
  (payload.repository as Json).full_name = o.repo;
  payload.installation = { id: o.installationId, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg==" };
  return payload;
}

/** workflow_run.completed with the fields of the case set. */
export function workflowRunPayload(o: {
  repo: string;
  runId: number;
  runAttempt: number;
  installationId: number;
  updatedAt: string;
  conclusion: string;
}): Json {
  const payload = examplePayload("workflow_run", "completed");
  const run = payload.workflow_run as Json;
  Object.assign(run, { id: o.runId, run_attempt: o.runAttempt, updated_at: o.updatedAt, status: "completed", conclusion: o.conclusion });
  (payload.repository as Json).full_name = o.repo;
  (run.repository as Json).full_name = o.repo;
  payload.installation = { id: o.installationId, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg==" };
  return payload;
}
