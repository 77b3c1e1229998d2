// The ledger's composition root: what one Durable Object builds from its env and
// storage, in one place. The settings (read once per instance, the test ledger's
// laid over them), the store (src/ledger) with the reaper's decisions handed in,
// the clients of one invocation (the clusters, GitHub, the budget), the alarm,
// and the one queue sweeps and alarms take their turns in. Every function handed
// to a lower layer is built here and nowhere else; the test ledger
// (test/hooks/test-ledger.ts) overrides settingsOverrides() and nothing more.
import { elapsed } from "../model/elapsed.ts";
import { agentCluster } from "../cluster/agent-cluster.ts";
import { clusterFor } from "../cluster/cluster-for.ts";
import { settingsFor } from "../config/settings-for.ts";
import { homeOf, type Settings, type SettingsResult } from "../config/settings.ts";
import { newCallBudget, type CallBudget } from "../github/call-budget.ts";
import { createGithub, type Github } from "../github/github-client.ts";
import type { GithubCache } from "../github/installation-and-rate-memory.ts";
import { logLine } from "../log.ts";
import type { DecisionLine } from "../reaper/log-lines.ts";
import type { WatchedCluster } from "../reaper/look.ts";
import { nextLook } from "../reaper/next-look.ts";
import { policyOf } from "../reaper/reconcile-all.ts";
import { scheduleFromFacts } from "../reaper/schedule-facts.ts";
import { transition } from "../reaper/transition.ts";
import { AgentLink, type AgentStatus } from "../agent-link/agent-link.ts";
import { LedgerStore } from "../ledger/ledger-store.ts";
import { Sql, type SqlCost } from "../ledger/sql.ts";
import { errorText } from "../model/error-text.ts";
import { alarmTime, nextSweepAt, sweepEveryMs } from "./sweep-clock.ts";
import { confirmClusterIdentity } from "./confirm-cluster-identity.ts";

/** A request re-asserts the ledger's alarm at most this often (per instance). */
const REASSERT_EVERY_MS = 60_000;

/** The clients of one invocation: the watched clusters, GitHub (or why it could not be built), the GitHub budget, and a count of cluster calls. */
export interface PassClients {
  watched: WatchedCluster[];
  github: Github | Error;
  budget: CallBudget;
  clusterCalls: () => number;
  /** Whether a cluster is retired as of a time (agent mode with AGENT_CLUSTERS; AgentLink.retired). */
  retired?: (cluster: string, now: number) => boolean;
  /** How a cluster is not watched now (undefined: it is): its rows close after the history window (src/reaper/unwatched-rows.ts). */
  unwatched: (cluster: string) => string | undefined;
}

export class LedgerRoot {
  readonly sql: Sql;
  readonly storage: DurableObjectStorage;
  readonly log: (line: Record<string, unknown>) => void = logLine;
  /** Agent mode: the in-cluster agents' WebSockets, their views and the orders awaiting reports. */
  readonly agent: AgentLink;
  private readonly env: Readonly<Record<string, unknown>>;
  private readonly overrides: () => string;
  /** Sweeps and alarms judge and act one at a time, so no runner is judged twice at once. */
  private acting: Promise<unknown> = Promise.resolve();
  /**
   * When this instance last re-asserted the alarm (reassertAlarm). Instance memory, not state: the throttle
   * only saves work (a fresh instance re-asserts once more, which is harmless), and it needs no write, which is
   * what fails when the volume is full.
   */
  private alarmAssertedAt: number | undefined;

  /** `overrides`: settings laid over the env's, as JSON ("" for none); only the test ledger has any. */
  constructor(ctx: DurableObjectState, env: Readonly<Record<string, unknown>>, overrides: () => string) {
    this.storage = ctx.storage;
    this.env = env;
    this.sql = new Sql(ctx.storage.sql);
    this.agent = new AgentLink(ctx, this.sql, logLine, { onViewComplete: (cluster) => void this.wakeAfterAgent(cluster) });
    this.overrides = overrides;
  }

  /** Read and validated once per env (settingsFor), not once per delivery; the Worker logged their warnings. */
  settingsResult(): SettingsResult {
    return settingsFor(this.env, { overrides: this.overrides(), quiet: true });
  }

  settings(): Settings {
    const result = this.settingsResult();
    if (!result.ok) throw new Error(`arc-reaper is misconfigured: ${result.errors.join("; ")}`);
    return result.settings;
  }

  /** The sweep period in ms when the ledger drives its own sweeps (in the cluster), else undefined. */
  sweepEveryMs(): number | undefined {
    return sweepEveryMs(homeOf(this.settingsResult()));
  }

  /** The tables, their lines logged through `log` (a pass's log budget); the reaper's decisions handed in. */
  store(settings: Settings, log: (line: DecisionLine) => void = logLine): LedgerStore {
    const policy = policyOf(settings);
    return new LedgerStore(this.sql, {
      schedule: (record) => scheduleFromFacts(record, Date.now(), policy),
      look: nextLook,
      policy,
      historyDays: settings.historyDays,
      stuckSeconds: settings.stuckSeconds,
      maxDeletionsPerMinute: settings.maxDeletionsPerMinute,
      log,
      transition,
    });
  }

  /** The clients of one invocation, with a GitHub budget of `githubCalls` requests. */
  clients(settings: Settings, store: LedgerStore, tokens: GithubCache["tokens"], githubCalls: number, timeoutMs?: number): PassClients {
    let calls = 0;
    const budget = newCallBudget(Math.max(0, githubCalls));
    // Direct: one cluster. Agent: one per watched cluster, each bound to its own agent's view.
    const idsMatch = store.memory.runnerIdsMatch();
    const watched: WatchedCluster[] =
      settings.cluster.mode === "direct"
        ? [this.directCluster(settings.cluster, settings, store, () => calls++)]
        : this.agent
            .clusters(settings.cluster.expectedClusters)
            .map((name) => ({ name, cluster: agentCluster(this.agent.port(name)), namespaces: settings.namespaces, idsMatch: idsMatch[name] !== undefined }));
    let github: Github | Error;
    try {
      github = createGithub({
        apiUrl: settings.githubApiUrl,
        appId: settings.appId,
        privateKey: settings.privateKey,
        budget,
        cache: { tokens, memory: store.memory.github(), validators: store.validators },
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    } catch (e) {
      github = e instanceof Error ? e : new Error(errorText(e), { cause: e });
    }
    const retired = settings.cluster.mode === "agent" ? this.agent.retired(settings.cluster.expectedClusters) : undefined;
    const direct = settings.cluster.mode === "direct" ? settings.cluster.name : undefined;
    const unwatched = (cluster: string): string | undefined => {
      if (direct !== undefined) return cluster === direct ? undefined : `direct mode watches ${direct} alone (KUBE_CLUSTER_NAME)`;
      return this.agent.connected(cluster) ? undefined : "no agent of it is connected";
    };
    return { watched, github, budget, clusterCalls: () => calls, unwatched, ...(retired ? { retired } : {}) };
  }

  /** Direct mode's one cluster, with the read of its identity (kube-system's uid) once per KUBE_API_URL. */
  private directCluster(
    direct: Extract<Settings["cluster"], { mode: "direct" }>,
    settings: Settings,
    store: LedgerStore,
    onRequest: () => void,
  ): WatchedCluster {
    const cluster = clusterFor(direct, {
      onRequest,
      tables: { idleAlertSeconds: settings.idleAlertSeconds, memory: store.memory.listShape(direct.name) },
    });
    // Trusted only for the identity read from this very URL: a KUBE_API_URL changed since trusts no id until the sweep reads it.
    const identity = store.memory.clusterIdentity(direct.name);
    const identityCurrent = identity?.url === direct.apiUrl && identity.uid !== undefined;
    const idsMatch = identityCurrent && store.memory.runnerIdsMatch()[direct.name] !== undefined;
    return {
      name: direct.name,
      cluster,
      namespaces: settings.namespaces,
      idsMatch,
      identityCurrent,
      confirmIdentity: (now) => confirmClusterIdentity(direct.name, direct.apiUrl, cluster, store, this.log, now),
    };
  }

  /** Every watched cluster's agent: AGENT_CLUSTERS, connected, known (agent mode). */
  agentStatuses(settings: Settings): AgentStatus[] {
    return this.agent.statuses(settings.cluster.mode === "agent" ? settings.cluster.expectedClusters : []);
  }

  /** Ensures the alarm is at the earliest due time (now when already due), or the next sweep's in the cluster. */
  async rearm(store: LedgerStore): Promise<void> {
    const every = this.sweepEveryMs();
    const next = alarmTime(store.nextDue(), every === undefined ? undefined : nextSweepAt(store.memory, every, Date.now(), this.log));
    const current = await this.storage.getAlarm();
    if (next === null) {
      if (current !== null) await this.storage.deleteAlarm();
      return;
    }
    if (current !== next) await this.storage.setAlarm(next);
  }

  /**
   * Any request that reaches the ledger re-asserts its alarm, at most once a minute per instance: an alarm the
   * runtime gave up after its retries (an alarm() that kept throwing, e.g. a full volume) is set again at the
   * earliest due time or the next sweep, whichever comes first. Only ever earlier: an alarm set early finds
   * nothing due and re-arms. A throttle stamp in the future (the clock stepped back) is expired. Never throws.
   */
  async reassertAlarm(): Promise<void> {
    const now = Date.now();
    if (!elapsed(this.alarmAssertedAt, now, REASSERT_EVERY_MS)) return;
    this.alarmAssertedAt = now;
    try {
      const result = this.settingsResult();
      if (!result.ok) return; // a misconfigured ledger runs no pass: nothing to schedule
      const store = this.store(result.settings);
      const every = this.sweepEveryMs();
      const wanted = alarmTime(store.nextDue(), every === undefined ? undefined : nextSweepAt(store.memory, every, now, this.log));
      if (wanted === null) return;
      const current = await this.storage.getAlarm();
      if (current !== null && current <= wanted) return;
      await this.storage.setAlarm(wanted);
      this.log({
        msg: "alarm re-asserted",
        reason: current === null ? "AlarmMissing" : "AlarmLate",
        at: new Date(wanted).toISOString(),
        ...(current === null ? {} : { was: new Date(current).toISOString() }),
      });
    } catch (e) {
      this.log({ msg: "re-asserting the alarm failed", error: errorText(e) });
    }
  }

  /** A cluster's agent view is whole again: what was held for want of it is judged now, by the alarm. */
  private async wakeAfterAgent(cluster: string): Promise<void> {
    try {
      const store = this.store(this.settings());
      if (store.release("agent", Date.now(), cluster) > 0) await this.rearm(store);
    } catch (e) {
      this.log({ msg: "waking runners after the agent's snapshot failed", error: errorText(e) });
    }
  }

  /** Runs `run` after every sweep and alarm queued before it. */
  exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.acting.then(run, run);
    this.acting = next.catch(() => undefined);
    return next;
  }

  /** Resolves once no sweep or alarm is running. */
  async idle(): Promise<void> {
    await this.exclusive(async () => undefined);
  }

  cost(): SqlCost {
    return { ...this.sql.cost };
  }
}
