// The agent: a watch cache of EphemeralRunners per namespace, streamed over one
// WebSocket to the ledger (hello, a full snapshot on every connect and after
// every relist, then upsert/remove), and delete orders applied from it.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { DEFAULT_CLUSTER, type AgentMessage, type AgentRunner, type LedgerMessage, type ReadOrder } from "../cluster/agent-protocol.ts";
import { parseLedgerMessage } from "../cluster/parse-ledger-message.ts";
import { OrderDesk } from "./apply-orders.ts";
import { applyFinish } from "./finish-orders.ts";
import { DEFAULT_BACKOFF, type BackoffPolicy } from "./backoff.ts";
import { kubeRunners } from "./kube-runners.ts";
import { DEFAULT_TIMINGS, LedgerConnection, type ConnectionTimings } from "./ledger-connection.ts";
import { errorText } from "../model/error-text.ts";
import type { Log } from "./log.ts";
import { RunnerView, snapshotMessages } from "./runner-view.ts";
import type { AgentSettings } from "./settings.ts";
import { NamespaceStates } from "./namespace-states.ts";
import { NamespaceWatch } from "./watch-runners.ts";

export interface AgentOptions {
  settings: AgentSettings;
  kubeConfig: KubeConfig;
  log: Log;
  timings?: Partial<ConnectionTimings>;
  /** Back-off of list and watch retries against the API server. */
  kubeBackoff?: BackoffPolicy;
}

export interface RunningAgent {
  stop(): Promise<void>;
  /** Why the agent is not ready (the readiness probe), or undefined once it is connected and has sent its whole view. */
  notReady(): string | undefined;
}

export const AGENT_VERSION: string = (() => {
  const pkg: unknown = JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8"));
  const v = typeof pkg === "object" && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
  return typeof v === "string" && v !== "" ? v : "0.0.0";
})();

/** What the pieces below share: the settings, the Kubernetes client, the log, and the connection to the ledger once made. */
interface AgentParts {
  settings: AgentSettings;
  kube: ReturnType<typeof kubeRunners>;
  log: Log;
  desk: OrderDesk;
}

/** The connection's state the watch and the probe read: whether it has had its snapshot (upserts and removes follow it, never precede it). */
interface Link {
  connection?: LedgerConnection;
  live: boolean;
}

export function startAgent(opts: AgentOptions): RunningAgent {
  const { settings, log } = opts;
  const view = new RunnerView(settings.namespaces);
  const states = new NamespaceStates(settings.namespaces);
  const kube = kubeRunners(opts.kubeConfig, log);
  const parts: AgentParts = { settings, kube, log, desk: new OrderDesk({ view, kube, dryRun: settings.dryRun, log }) };
  const link: Link = { live: false };
  const clusterIdentity: { uid?: string } = {};
  const sends = sender(link, view, states, parts);
  const connection = new LedgerConnection({
    url: settings.agentUrl,
    token: settings.token,
    cluster: settings.cluster,
    proxy: settings.proxy,
    log,
    timings: { ...DEFAULT_TIMINGS, ...opts.timings },
    handlers: {
      opened() {
        link.live = false;
        // "default" goes unsaid, so an older Worker still accepts a single-cluster agent (agent-protocol.ts).
        const cluster = settings.cluster === DEFAULT_CLUSTER ? {} : { cluster: settings.cluster };
        // The cluster's identity (kube-system's uid), read once at start; unknown: unsaid (the ledger then trusts no runner id here).
        const identity = clusterIdentity.uid === undefined ? {} : { identity: clusterIdentity.uid };
        connection.send({ type: "hello", version: AGENT_VERSION, namespaces: [...settings.namespaces], dryRun: settings.dryRun, ...cluster, ...identity });
        // Until every namespace has listed (or failed) the view is partial: the snapshot waits for it.
        sends.snapshot();
      },
      message: (text) => takeOrder(text, connection, parts),
      closed() {
        link.live = false;
      },
    },
  });
  link.connection = connection;
  const events = watchEvents(link, view, states, sends);
  const watches = settings.namespaces.map(
    (namespace) => new NamespaceWatch({ namespace, kc: opts.kubeConfig, kube, events, log, backoff: opts.kubeBackoff ?? DEFAULT_BACKOFF }),
  );

  log("info", "agent starting", {
    version: AGENT_VERSION,
    url: settings.agentUrl,
    cluster: settings.cluster,
    namespaces: [...settings.namespaces],
    dryRun: settings.dryRun,
  });
  for (const w of watches) w.start();
  // The ledger is dialled once the cluster's identity is read (or known unreadable): its hello carries it.
  void kube
    .identity()
    .then((answer) => {
      if (answer.kind === "known") clusterIdentity.uid = answer.uid;
      else log("warn", "cluster identity unknown: the ledger will not trust runner ids here", { reason: "ClusterIdentityUnknown", why: answer.why });
    })
    .finally(() => connection.start());

  return {
    notReady() {
      if (!connection.open) return "not connected to the ledger";
      if (!link.live) return "connected, but the whole view is not sent yet (listing namespaces)";
      return undefined;
    },
    async stop() {
      await Promise.all([connection.stop(), ...watches.map((w) => w.stop())]);
      log("info", "agent stopped");
    },
  };
}

/** What the agent sends of its own accord: the whole view, a live change, a namespace's state. */
function sender(link: Link, view: RunnerView, states: NamespaceStates, { settings, log }: AgentParts) {
  // The snapshot waits for each namespace's first list, or for its first failure: one namespace that
  // can never be listed must not hold back the others' view. It goes out unreadable (never whole), so its
  // runners are kept, and its first list sends the whole view again (listed, below).
  const snapshot = (): void => {
    const connection = link.connection;
    const failed = states.unreadable();
    if (!connection?.open || !settings.namespaces.every((ns) => view.synced(ns) || failed.includes(ns))) return;
    const runners = view.all();
    const id = randomUUID();
    for (const m of snapshotMessages(runners, id, undefined, states.report(Date.now()))) connection.send(m);
    link.live = true;
    log("info", "snapshot sent", { id, runners: runners.length });
  };
  const live = (m: AgentMessage): void => {
    if (link.live) link.connection?.send(m);
  };
  // A namespace's state moved: the ledger hears it at once (its runners' absence dates from it).
  const state = (namespace: string): void => live({ type: "namespaces", namespaces: states.report(Date.now(), [namespace]) });
  return { snapshot, live, state };
}

/** An order from the ledger: a read, a finish or a delete, each answered with its report; anything else is ignored, logged. */
function takeOrder(text: string, connection: LedgerConnection, { settings, kube, log, desk }: AgentParts): void {
  let order: LedgerMessage;
  try {
    order = parseLedgerMessage(text);
  } catch (e) {
    log("warn", "ignoring a message from the ledger that is not a valid order", { problem: errorText(e) });
    return;
  }
  if (order.type === "read") {
    void answerRead(order, connection, { settings, kube, log, desk });
    return;
  }
  if (order.type === "finish") {
    const finish = order;
    applyFinish(finish, { namespaces: settings.namespaces, kube, dryRun: settings.dryRun, log })
      .then((report) => {
        if (!connection.send(report)) log("warn", "finish report not sent: disconnected", { id: finish.id });
      })
      .catch((e: unknown) => log("error", "finish order crashed", { id: finish.id, error: errorText(e) }));
    return;
  }
  desk
    .apply(order)
    .then((report) => {
      if (!connection.send(report)) log("warn", "report not sent: disconnected (the next snapshot settles it)", { id: order.id });
    })
    .catch((e: unknown) => log("error", "order crashed", { id: order.id, error: errorText(e) }));
}

/** A read: the API server's answer now, not the watch cache's (the ledger asks when its view may be stale). */
async function answerRead(read: ReadOrder, connection: LedgerConnection, { settings, kube, log }: AgentParts): Promise<void> {
  let report: AgentMessage;
  if (!settings.namespaces.includes(read.namespace)) {
    report = { type: "read-report", id: read.id, runner: null, why: `namespace ${read.namespace} is not watched by this agent` };
  } else {
    try {
      report = { type: "read-report", id: read.id, runner: await kube.read(read.namespace, read.name) };
    } catch (e) {
      report = { type: "read-report", id: read.id, runner: null, why: errorText(e).slice(0, 500) };
    }
  }
  if (!connection.send(report)) log("warn", "read report not sent: disconnected", { id: read.id });
}

/** What the namespaces' watches report, kept in the view and the states, and sent on as the link allows. */
function watchEvents(link: Link, view: RunnerView, states: NamespaceStates, send: ReturnType<typeof sender>) {
  return {
    listed(namespace: string, runners: AgentRunner[], relist: boolean, startedAt: number, skipped: { name: string; why: string }[]) {
      const first = !view.synced(namespace);
      view.replace(namespace, runners);
      // Said with the snapshot that carries the list, never before it (the old view must not look that fresh).
      states.whole(namespace, startedAt);
      // An object it could not read is missing from the view: the namespace is unreadable, never whole.
      states.listedSkipped(namespace, skipped);
      // The first full view, a fresh list after 410, or the first list of a namespace the snapshot went
      // without: the ledger gets the whole view again.
      if (relist || !link.live || first) send.snapshot();
      else send.state(namespace);
    },
    bookmark(namespace: string) {
      if (states.whole(namespace, Date.now())) send.state(namespace);
    },
    watching(namespace: string) {
      if (states.readable(namespace)) send.state(namespace);
    },
    failed(namespace: string, why: string) {
      if (!states.failed(namespace, why)) return;
      if (link.live) send.state(namespace);
      else send.snapshot();
    },
    unreadable(namespace: string, name: string, why: string, gone: boolean) {
      if (gone ? states.read(namespace, name) : states.skipped(namespace, name, why)) send.state(namespace);
    },
    added(runner: AgentRunner) {
      if (view.upsert(runner)) send.live({ type: "upsert", runner });
      if (states.read(runner.namespace, runner.name)) send.state(runner.namespace);
    },
    removed(runner: AgentRunner) {
      if (view.remove(runner.namespace, runner.name, runner.uid) !== undefined) {
        send.live({ type: "remove", namespace: runner.namespace, name: runner.name, uid: runner.uid });
      }
      if (states.read(runner.namespace, runner.name)) send.state(runner.namespace);
    },
  };
}
