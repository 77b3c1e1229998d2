// The ledger: one SQLite-backed Durable Object, the only place arc-reaper's
// state lives. Webhooks record facts here (RPC), the alarm fires at the
// earliest due time, the cron's sweep runs here (one pass: ledger-pass.ts), and
// the admin views, /metrics and the sessions are reached through the RpcTargets
// it returns (admin(), sessions()). The class only delegates. Instance fields
// are only caches: any call may meet a fresh instance.
import { DurableObject } from "cloudflare:workers";
import { agentCluster } from "../cluster/agent-cluster.ts";
import { clusterFor } from "../cluster/cluster-for.ts";
import { readSettings, type Settings, type SettingsResult } from "../config/settings.ts";
import type { WorkerEnv } from "../env.ts";
import { newCallBudget } from "../github/call-budget.ts";
import { createGithub, type Github } from "../github/github-client.ts";
import type { GithubCache } from "../github/installation-and-rate-memory.ts";
import { logLine } from "../log.ts";
import type { DecisionLine } from "../reaper/log-lines.ts";
import type { WatchedCluster } from "../reaper/look.ts";
import type { RunnerRecord } from "../model/runner.ts";
import { policyOf } from "../reaper/reconcile-all.ts";
import { scheduleFromFacts } from "../reaper/schedule-facts.ts";
import { nextLook } from "../reaper/next-look.ts";
import { transition } from "../reaper/transition.ts";
import { AgentLink, type AgentStatus } from "../agent-link/agent-link.ts";
import { confirmInstallationChange } from "./confirm-installation.ts";
import { CountersTable } from "./counters-table.ts";
import { MemoryTable } from "./memory-table.ts";
import { countDelivery, type DeliveryOutcome } from "./count-delivery.ts";
import { receiveDelivery, rememberBatch, type Received, type SignedDelivery } from "./receive-delivery.ts";
import { LedgerAdmin, type AdminHost } from "./ledger-admin.ts";
import { ledgerPass, type PassClients, type PassHost, type PassOutcome } from "./ledger-pass.ts";
import { LedgerSessions } from "./ledger-sessions.ts";
import { LedgerStore } from "./ledger-store.ts";
import { migrate } from "./schema.ts";
import { alarmTime, nextSweepAt, sweepEveryMs } from "./sweep-clock.ts";
import { Sql, type SqlCost } from "./sql.ts";
import { tokenCacheFor } from "../github/token-cache.ts";
import { errorText } from "../model/error-text.ts";

/** GitHub's word on an installation is asked while the delivery waits: well inside GitHub's 10 s. */
const CONFIRM_TIMEOUT_MS = 4_000;

/** What the Worker counted at its door (in its isolate) since its last flush. */
export interface DoorBatch {
  counts: { event: string; outcome: DeliveryOutcome; n: number }[];
  /** GUIDs of signed deliveries answered without facts (ignored), so that redelivery passes them over. */
  received: string[];
  /** The installation each of those deliveries named, per repository. */
  installations: { repo: string; id: number }[];
  /** GET /agent refused before the upgrade, by cluster (a known name, or "other"). */
  agentRefusals?: { cluster: string; n: number }[];
}

export interface Receipt {
  outcome: Received["outcome"];
  /** Rows this delivery wrote (facts and the delivery counter). */
  rowsWritten: number;
  changed: number;
}

export class Ledger extends DurableObject<WorkerEnv> {
  protected readonly sql: Sql;
  /** Sweeps and alarms judge and act one at a time, so no runner is judged twice at once. */
  private acting: Promise<unknown> = Promise.resolve();
  /** Agent mode: the in-cluster agent's WebSocket, its view and the orders awaiting reports. */
  private readonly agent: AgentLink;
  /** A cache: the settings read from the env (and, in tests, the ledger's test settings). */
  private settingsCache?: { overrides: string; result: SettingsResult };

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    this.agent = new AgentLink(ctx, this.sql, logLine, { onViewComplete: (cluster) => void this.wakeAfterAgent(cluster) });
    void ctx.blockConcurrencyWhile(async () => {
      migrate(this.sql);
      // In the cluster the alarm is also the sweep's clock: a ledger woken with none set starts it.
      if (sweepEveryMs(env) !== undefined && (await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(Date.now());
    });
  }

  /** A signed delivery: a replay is only counted; its facts are recorded idempotently, and the delivery counted. */
  async receive(delivery: SignedDelivery): Promise<Receipt> {
    const before = this.cost();
    const settings = this.settings();
    const state = this.state(settings);
    const { outcome, changed, toConfirm } = receiveDelivery(this.sql, state, delivery, Date.now(), settings);
    if (changed.length > 0) await this.armFor(changed);
    if (toConfirm) await this.confirmInstallation(settings, state, toConfirm);
    return { outcome, rowsWritten: this.cost().rowsWritten - before.rowsWritten, changed: changed.length };
  }

  /** An installation's deletion, suspension or lost repositories, applied only as GitHub confirms it, within the GitHub budget. */
  private async confirmInstallation(settings: Settings, state: LedgerStore, change: NonNullable<Received["toConfirm"]>): Promise<void> {
    const now = Date.now();
    const spent = state.githubTimes(now, settings.maxGithubCallsPerMinute).length;
    const { github, budget } = this.clients(settings, state, tokenCacheFor(settings), settings.maxGithubCallsPerMinute - spent, CONFIRM_TIMEOUT_MS);
    const confirmation = await confirmInstallationChange(github, state.memory, change, now, settings.historyDays);
    state.spendGithubCalls(Date.now(), budget.used, settings.maxGithubCallsPerMinute);
    logLine({
      msg: "installation change",
      claimed: change,
      ...(confirmation.kind === "applied" ? { forgot: confirmation.forgot } : { kept: confirmation.why }),
      githubCalls: budget.used,
    });
  }

  /** Deliveries the Worker answered without the ledger, counted in its isolate and sent here at most every 10 s. */
  async countBatch(batch: DoorBatch): Promise<void> {
    const counters = new CountersTable(this.sql);
    for (const { event, outcome, n } of batch.counts) countDelivery(counters, event, outcome, n);
    for (const { cluster, n } of batch.agentRefusals ?? []) counters.add("arc_reaper_agent_refusals_total", { cluster }, n);
    rememberBatch(this.sql, new MemoryTable(this.sql), batch, Date.now());
  }

  /** One sweep at the cron's scheduled time (one pass; skipped when a sweep already ran after that time). */
  async sweep(scheduledTime: number): Promise<PassOutcome> {
    return this.exclusive(() => ledgerPass(this.host(), "sweep", scheduledTime));
  }

  /** Fires at the earliest due time; delivered at least once, so it is safe to run twice. */
  override async alarm(): Promise<void> {
    await this.exclusive(async () => {
      await ledgerPass(this.host(), "alarm", Date.now());
      // In the cluster: the sweep too, when its time has come (sweep-clock.ts).
      const every = sweepEveryMs(this.env);
      if (every !== undefined && Date.now() >= nextSweepAt(new MemoryTable(this.sql), every, Date.now())) await ledgerPass(this.host(), "sweep", Date.now());
    });
  }

  /** Resolves once no sweep or alarm is running (tests and the local demo wait on it). */
  async idle(): Promise<void> {
    await this.exclusive(async () => undefined);
  }

  /** GET /agent, forwarded by the Worker once it checked AGENT_TOKEN: accepted with the Hibernation API. */
  override async fetch(request: Request): Promise<Response> {
    return this.agent.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.agent.message(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.agent.closed(ws, code, reason);
  }

  override async webSocketError(ws: WebSocket, error: unknown): Promise<void> {
    this.agent.closed(ws, 1006, errorText(error));
  }

  /** Whether a cluster's agent is connected and what it said (agent mode). */
  async agentStatus(cluster = "default"): Promise<AgentStatus> {
    return this.agent.status(cluster);
  }

  /** The admin views and switches: runners, story, adminView, snapshot, agentStatuses, pause, resume, deepHealth. */
  admin(): LedgerAdmin {
    return new LedgerAdmin(this.adminHost());
  }

  /** Logins, sessions and bearer tokens. */
  sessions(): LedgerSessions {
    return new LedgerSessions(this.sql);
  }

  protected exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.acting.then(run, run);
    this.acting = next.catch(() => undefined);
    return next;
  }

  /** What a pass needs of this object (the test ledger runs passes at simulated times through it). */
  protected host(): PassHost {
    return {
      settingsResult: () => this.settingsResult(),
      state: (settings, log) => this.state(settings, log),
      clients: (settings, state, tokens, githubCalls) => this.clients(settings, state, tokens, githubCalls),
      rearm: (state) => this.rearm(state),
      cost: () => this.cost(),
      log: logLine,
    };
  }

  private adminHost(): AdminHost {
    return {
      ...this.host(),
      sql: this.sql,
      storage: this.ctx.storage,
      settings: () => this.settings(),
      agentStatuses: (settings) => this.agent.statuses(settings.cluster.mode === "agent" ? settings.cluster.expectedClusters : []),
      idle: () => this.idle(),
    };
  }

  /** A cluster's agent view is whole again: what was held for want of it is judged now, by the alarm. */
  private async wakeAfterAgent(cluster: string): Promise<void> {
    try {
      const state = this.state(this.settings());
      if (state.release("agent", Date.now(), cluster) > 0) await this.rearm(state);
    } catch (e) {
      logLine({ msg: "waking runners after the agent's snapshot failed", error: errorText(e) });
    }
  }

  /**
   * After a delivery: only the rows it changed can need the alarm earlier, so their due times are compared
   * with the armed one instead of every table's earliest (four MIN statements a delivery). A row whose due
   * time moved later leaves an early alarm, which finds nothing due and re-arms after its pass.
   */
  private async armFor(changed: readonly RunnerRecord[]): Promise<void> {
    let earliest: number | undefined;
    for (const r of changed) if (r.dueAt !== null && (earliest === undefined || r.dueAt < earliest)) earliest = r.dueAt;
    if (earliest === undefined) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || earliest < current) await this.ctx.storage.setAlarm(earliest);
  }

  /** Ensures the alarm is at the earliest due time (now when already due), or the next sweep's in the cluster. */
  private async rearm(state: LedgerStore): Promise<void> {
    const every = sweepEveryMs(this.env);
    const next = alarmTime(state.nextDue(), every === undefined ? undefined : nextSweepAt(state.memory, every, Date.now()));
    const current = await this.ctx.storage.getAlarm();
    if (next === null) {
      if (current !== null) await this.ctx.storage.deleteAlarm();
      return;
    }
    if (current !== next) await this.ctx.storage.setAlarm(next);
  }

  /** Read and validated once per instance (its env never changes), not once per delivery. */
  protected settingsResult(): SettingsResult {
    const overrides = this.settingsOverrides();
    if (this.settingsCache?.overrides !== overrides) {
      const vars = overrides ? (JSON.parse(overrides) as Record<string, string>) : {};
      this.settingsCache = { overrides, result: readSettings({ ...this.env, ...vars }) };
    }
    return this.settingsCache.result;
  }

  /** Settings laid over the env's, as JSON ("" for none). Production has none: the test ledger (test/hooks) has its own. */
  protected settingsOverrides(): string {
    return "";
  }

  private settings(): Settings {
    const result = this.settingsResult();
    if (!result.ok) throw new Error(`arc-reaper is misconfigured: ${result.errors.join("; ")}`);
    return result.settings;
  }

  private state(settings: Settings, log: (line: DecisionLine) => void = logLine): LedgerStore {
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
  private clients(settings: Settings, state: LedgerStore, tokens: GithubCache["tokens"], githubCalls: number, timeoutMs?: number): PassClients {
    let calls = 0;
    const budget = newCallBudget(Math.max(0, githubCalls));
    // Direct: one cluster. Agent: one per watched cluster, each bound to its own agent's view.
    const idsMatch = state.memory.runnerIdsMatch();
    const watched: WatchedCluster[] = (
      settings.cluster.mode === "direct"
        ? [
            {
              name: settings.cluster.name,
              cluster: clusterFor(settings.cluster, {
                onRequest: () => calls++,
                tables: { idleAlertSeconds: settings.idleAlertSeconds, memory: state.memory.listShape(settings.cluster.name) },
              }),
              namespaces: settings.namespaces,
            },
          ]
        : this.agent
            .clusters(settings.cluster.expectedClusters)
            .map((name) => ({ name, cluster: agentCluster(this.agent.port(name)), namespaces: settings.namespaces }))
    ).map((w) => ({ ...w, idsMatch: idsMatch[w.name] !== undefined }));
    let github: Github | Error;
    try {
      github = createGithub({
        apiUrl: settings.githubApiUrl,
        appId: settings.appId,
        privateKey: settings.privateKey,
        budget,
        cache: { tokens, memory: state.memory.github() },
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    } catch (e) {
      github = e instanceof Error ? e : new Error(errorText(e), { cause: e });
    }
    const retired = settings.cluster.mode === "agent" ? this.agent.retired(settings.cluster.expectedClusters) : undefined;
    return { watched, github, budget, clusterCalls: () => calls, ...(retired ? { retired } : {}) };
  }

  private cost(): SqlCost {
    return { ...this.sql.cost };
  }
}
