// The agent's test rig: a Kubernetes stand-in tenant with the agent's
// ServiceAccount bound by infra/agent's Role, a stand-in ledger, and the agent
// (started in-process with short back-offs), plus readers of what the ledger got.
import type { AgentMessage, AgentRunner } from "../../../src/cluster/agent-protocol.ts";
import { startAgent, type RunningAgent } from "../../../src/agent/agent.ts";
import { toAgentRunner } from "../../../src/agent/runner-view.ts";
import type { Log } from "../../../src/agent/log.ts";
import { readSettings } from "../../../src/agent/settings.ts";
import {
  createKubeTenant,
  makeEphemeralRunner,
  type ArcVersion,
  type KubeCall,
  type KubeTenant,
  type StoredEphemeralRunner,
} from "../../standins/kube/control.ts";
import type { KubeStandin } from "../../standins/kube/server.ts";
import { loadAgentFinishRbac, loadAgentIdentityRbac, loadAgentRbac } from "./agent-rbac.ts";
import { LedgerStandin, waitFor, type LedgerConnection } from "./agent-ledger-standin.ts";
import { standinKubeConfig } from "../../standins/kube/kube-config.ts";

export const NS = "arc-runners";
export const NS2 = "team-b-runners";
export const AGENT_TOKEN = "agent-token-for-tests-0123456789-abcdefghij";
export const SA_TOKEN = "agent-serviceaccount-token-0123456789";
export const AGENT_USER = "system:serviceaccount:arc-reaper-agent:arc-reaper-agent";

export type Msg<T extends AgentMessage["type"]> = Extract<AgentMessage, { type: T }>;

export interface Rig {
  tenant: KubeTenant;
  ledger: LedgerStandin;
  agent: RunningAgent;
  logs: Array<{ level: string; msg: string; fields: Record<string, unknown> }>;
  logText: () => string;
  close: () => Promise<void>;
}

export interface RigOptions {
  dryRun?: boolean;
  ledgerToken?: string;
  pingEveryMs?: number;
  namespaces?: string;
  /** AGENT_CLUSTER (unset: "default"). */
  cluster?: string;
  autoFinalize?: boolean;
  /** Whose EphemeralRunner CRD the cluster serves (default 0.14.2). */
  arcVersion?: ArcVersion;
  before?: (t: KubeTenant) => Promise<void>;
  /** Also bind the optional overlay infra/agent/finish-stuck (patch on ephemeralrunners). */
  finishOverlay?: boolean;
  /** Leave out infra/agent/cluster-identity (get on kube-system): the agent cannot tell its cluster's identity. */
  noIdentityRbac?: boolean;
}

export async function startRig(standin: KubeStandin, opts: RigOptions = {}): Promise<Rig> {
  const tenant = await createKubeTenant(standin.url, {
    namespaces: [NS, NS2, "default"],
    autoFinalize: opts.autoFinalize ?? false,
    ...(opts.arcVersion ? { arcVersion: opts.arcVersion } : {}),
  });
  const rbac = loadAgentRbac(NS, NS2);
  const overlay = opts.finishOverlay ? loadAgentFinishRbac(NS, NS2).bindings : [];
  // The agent reads its cluster's identity (kube-system's uid) as infra/agent/cluster-identity grants it.
  const identity = opts.noIdentityRbac ? [] : loadAgentIdentityRbac();
  await tenant.addServiceAccount({ ...rbac.serviceAccount, token: SA_TOKEN, bindings: [...rbac.bindings, ...overlay, ...identity] });
  await opts.before?.(tenant);
  const ledger = await new LedgerStandin(opts.ledgerToken ?? AGENT_TOKEN).listen();
  const settings = readSettings({
    ARC_REAPER_URL: ledger.url,
    AGENT_TOKEN,
    REAPER_NAMESPACES: opts.namespaces ?? `${NS},${NS2}`,
    AGENT_DRY_RUN: opts.dryRun ? "true" : "false",
    ...(opts.cluster ? { AGENT_CLUSTER: opts.cluster } : {}),
  });
  if (!settings.ok) throw new Error(settings.problems.join("; "));
  const kc = standinKubeConfig(tenant.baseUrl, SA_TOKEN);
  const logs: Rig["logs"] = [];
  const log: Log = (level, msg, fields = {}) => {
    logs.push({ level, msg, fields });
  };
  const agent = startAgent({
    settings: settings.settings,
    kubeConfig: kc,
    log,
    timings: { backoff: { baseMs: 100, capMs: 800 }, pingEveryMs: opts.pingEveryMs ?? 5000, handshakeTimeoutMs: 2000, stableAfterMs: 500 },
    kubeBackoff: { baseMs: 50, capMs: 400 },
  });
  const close = async (): Promise<void> => {
    await agent.stop();
    await ledger.close();
    await tenant.dispose();
  };
  return { tenant, ledger, agent, logs, logText: () => JSON.stringify(logs), close };
}

export function ofType<T extends AgentMessage["type"]>(conn: LedgerConnection, type: T): Array<Msg<T>> {
  return conn.messages.filter((m): m is Msg<T> => m.type === type);
}

/** The runners of the complete snapshot number `n` (0-based) on a connection. */
export function snapshot(conn: LedgerConnection, n = 0): AgentRunner[] | undefined {
  const parts = ofType(conn, "snapshot");
  const ids = [...new Set(parts.map((p) => p.id))];
  const id = ids[n];
  if (id === undefined) return undefined;
  const mine = parts.filter((p) => p.id === id);
  const count = mine[0]?.parts ?? 0;
  if (mine.length < count) return undefined;
  return mine.flatMap((p) => p.runners);
}

export async function connected(r: Rig, n = 1): Promise<LedgerConnection> {
  return waitFor(`connection ${n} with its snapshot`, () => {
    const c = r.ledger.connections[n - 1];
    return c !== undefined && snapshot(c) !== undefined ? c : undefined;
  });
}

/**
 * Stalls the agent's watch of `namespace`: the open one ends and its resume hangs (60 s). Resolves once the
 * resume is held, so that nothing created from then on reaches the agent's cache by its watch.
 */
export async function stallWatch(tenant: KubeTenant, namespace = NS): Promise<void> {
  const fault = await tenant.addFault({ match: { verb: "watch", pathIncludes: `/namespaces/${namespace}/` }, delayMs: 60_000 });
  await tenant.closeWatches();
  await waitFor("the watch's resume held", async () => (((await tenant.faults()).find((f) => f.id === fault.id)?.taken ?? 0) > 0 ? true : undefined));
}

export async function report(conn: LedgerConnection, id: string): Promise<Msg<"report">> {
  return waitFor(`the report of order ${id}`, () => ofType(conn, "report").find((m) => m.id === id));
}

export function deletes(calls: KubeCall[]): KubeCall[] {
  return calls.filter((c) => c.method === "DELETE");
}

export function seedRunner(name: string, o: { namespace?: string; workflowRunId?: number; deletionTimestamp?: string; uid?: string } = {}) {
  return makeEphemeralRunner({ namespace: o.namespace ?? NS, scaleSet: "arc-runners", name, ...o });
}

/** The view a ledger builds from one connection: the last complete snapshot, then upserts and removes. */
export function ledgerView(conn: LedgerConnection): Map<string, AgentRunner> {
  let view = new Map<string, AgentRunner>();
  const parts = new Map<string, AgentRunner[]>();
  for (const m of conn.messages) {
    if (m.type === "snapshot") {
      const got = [...(parts.get(m.id) ?? []), ...m.runners];
      parts.set(m.id, got);
      if (m.part === m.parts) view = new Map(got.map((x) => [`${x.namespace}/${x.name}`, x]));
    } else if (m.type === "upsert") {
      view.set(`${m.runner.namespace}/${m.runner.name}`, m.runner);
    } else if (m.type === "remove") {
      const key = `${m.namespace}/${m.name}`;
      if (view.get(key)?.uid === m.uid) view.delete(key);
    }
  }
  return view;
}

/** What the agent should report of a stored object. */
/** What the agent sends of an object: the product's own reader, so a field it gains is expected here too. */
export function projected(o: StoredEphemeralRunner): AgentRunner {
  return toAgentRunner(o);
}
