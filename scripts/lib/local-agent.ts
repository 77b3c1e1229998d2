// The real in-cluster agent (src/agent), started in this process against the
// stand-in cluster under infra/agent's Role, dialing the local Worker's GET
// /agent. Short back-offs and pings so that tests and the demo see reconnects
// in seconds; everything else is the agent as `npm run agent` runs it.
//
// Plain Node (type stripping): no test framework, erasable TypeScript only.
import { KubeConfig } from "@kubernetes/client-node";
import { startAgent, type RunningAgent } from "../../src/agent/agent.ts";
import type { Log } from "../../src/agent/log.ts";
import { readSettings } from "../../src/agent/settings.ts";
import type { KubeTenant } from "../../test/standins/kube/control.ts";
import { loadAgentIdentityRbac, loadAgentRbac } from "../../test/node/agent/agent-rbac.ts";

export interface AgentLogLine {
  at: number;
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

export interface LocalAgent {
  /** Starts the agent (again); a no-op while it runs. */
  start(): void;
  /** Stops it cleanly (its socket closes); a no-op when stopped. */
  stop(): Promise<void>;
  readonly running: boolean;
  /** Everything the agent logged, oldest first. */
  logs: AgentLogLine[];
}

/** Gives the agent's ServiceAccount (infra/agent's Role in `namespaces`, and in kube-system its cluster-identity Role) a token in the stand-in cluster. */
export async function addAgentServiceAccount(kube: KubeTenant, namespaces: string[], token: string): Promise<string> {
  const rbac = loadAgentRbac(...namespaces);
  const { user } = await kube.addServiceAccount({ ...rbac.serviceAccount, token, bindings: [...rbac.bindings, ...loadAgentIdentityRbac()] });
  return user;
}

export function localAgent(o: {
  workerUrl: string;
  agentToken: string;
  kube: KubeTenant;
  serviceAccountToken: string;
  namespaces: string[];
  dryRun?: boolean;
  /** AGENT_CLUSTER (default "default"); agentToken must then be the token made for it. */
  cluster?: string;
  onLog?: (line: AgentLogLine) => void;
}): LocalAgent {
  const settings = readSettings({
    ARC_REAPER_URL: o.workerUrl,
    AGENT_TOKEN: o.agentToken,
    ...(o.cluster ? { AGENT_CLUSTER: o.cluster } : {}),
    REAPER_NAMESPACES: o.namespaces.join(","),
    AGENT_DRY_RUN: o.dryRun ? "true" : "false",
  });
  if (!settings.ok) throw new Error(`agent settings: ${settings.problems.join("; ")}`);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "standin", server: o.kube.baseUrl, skipTLSVerify: true }],
    users: [{ name: "arc-reaper-agent", token: o.serviceAccountToken }],
    contexts: [{ name: "standin", cluster: "standin", user: "arc-reaper-agent" }],
    currentContext: "standin",
  });
  const logs: AgentLogLine[] = [];
  const log: Log = (level, msg, fields = {}) => {
    const line = { at: Date.now(), level, msg, fields };
    logs.push(line);
    if (logs.length > 5000) logs.shift();
    o.onLog?.(line);
  };
  let agent: RunningAgent | undefined;
  return {
    logs,
    get running() {
      return agent !== undefined;
    },
    start() {
      if (agent) return;
      agent = startAgent({
        settings: settings.settings,
        kubeConfig: kc,
        log,
        timings: { backoff: { baseMs: 200, capMs: 1_000 }, pingEveryMs: 5_000, handshakeTimeoutMs: 5_000, stableAfterMs: 1_000 },
        kubeBackoff: { baseMs: 100, capMs: 1_000 },
      });
    },
    async stop() {
      const a = agent;
      agent = undefined;
      await a?.stop();
    },
  };
}

/**
 * A WebSocket relay between the agent and the Worker's GET /agent, for tests
 * that need the network in the middle: cut it (both sides see the connection
 * drop) or lose some of the agent's messages (a stale ledger view).
 */
export interface AgentRelay {
  /** Give this to the agent as ARC_REAPER_URL. */
  url: string;
  /** Agent -> ledger messages matching this are dropped (undefined: none). */
  drop: ((message: Record<string, unknown>) => boolean) | undefined;
  /** Ends every relayed connection at once, without a close handshake. */
  cut(): void;
  close(): Promise<void>;
}

export async function agentRelay(workerUrl: string): Promise<AgentRelay> {
  const { WebSocket, WebSocketServer } = await import("ws");
  const upstreamUrl = `${workerUrl.replace(/^http/, "ws")}/agent`;
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const pairs = new Set<{ down: InstanceType<typeof WebSocket>; up: InstanceType<typeof WebSocket> }>();
  const relay: AgentRelay = {
    url: "",
    drop: undefined,
    cut() {
      for (const p of pairs) {
        p.down.terminate();
        p.up.terminate();
      }
      pairs.clear();
    },
    async close() {
      relay.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on("connection", (down, req) => {
    const cluster = req.headers["x-arc-reaper-cluster"];
    const up = new WebSocket(upstreamUrl, {
      headers: { authorization: req.headers.authorization ?? "", ...(typeof cluster === "string" ? { "x-arc-reaper-cluster": cluster } : {}) },
    });
    const pair = { down, up };
    pairs.add(pair);
    const queued: string[] = [];
    down.on("message", (data) => {
      const text = String(data);
      try {
        if (relay.drop?.(JSON.parse(text) as Record<string, unknown>)) return;
      } catch {
        // not JSON: relay as it is
      }
      if (up.readyState === WebSocket.OPEN) up.send(text);
      else queued.push(text);
    });
    up.on("open", () => {
      for (const text of queued.splice(0)) up.send(text);
    });
    up.on("message", (data) => {
      if (down.readyState === WebSocket.OPEN) down.send(String(data));
    });
    const end = () => {
      pairs.delete(pair);
      down.terminate();
      up.terminate();
    };
    // A close with a code (e.g. 4001 replaced, 1008 invalid) is passed on as it came.
    const passOn = (to: InstanceType<typeof WebSocket>) => (code: number, reason: Buffer) => {
      pairs.delete(pair);
      if (code === 1005 || code === 1006 || to.readyState !== WebSocket.OPEN) return end();
      to.close(code, reason);
      setTimeout(end, 1000).unref();
    };
    up.on("close", passOn(down));
    up.on("error", end);
    down.on("close", passOn(up));
    down.on("error", end);
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("agent relay: no TCP address");
  relay.url = `http://127.0.0.1:${address.port}`;
  return relay;
}
