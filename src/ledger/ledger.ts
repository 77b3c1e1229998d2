// The ledger: one SQLite-backed Durable Object, the only place arc-reaper's
// state lives. Webhooks record facts here (RPC), the alarm fires at the
// earliest due time, the cron's sweep runs here, and the admin views and
// /metrics read from here. Instance fields are only caches: any call may meet
// a fresh instance.
import { DurableObject } from "cloudflare:workers";
import { agentCluster } from "../cluster/agent-cluster.ts";
import { clusterFor } from "../cluster/cluster-for.ts";
import { readSettings, type Settings, type SettingsResult } from "../config/settings.ts";
import type { WorkerEnv } from "../env.ts";
import { newCallBudget, type CallBudget } from "../github/call-budget.ts";
import { createGithub, type Github } from "../github/github-client.ts";
import type { GithubCache } from "../github/github-memory.ts";
import { logLine } from "../log.ts";
import { runAlarm } from "../reaper/alarm.ts";
import type { SweepLine } from "../reaper/log-lines.ts";
import type { Watched } from "../reaper/look.ts";
import { policyOf } from "../reaper/reconcile-all.ts";
import { scheduleFromFacts } from "../reaper/schedule-facts.ts";
import { sweep, type SweepReport } from "../reaper/sweep.ts";
import { AgentLink, type AgentStatus } from "./agent-link.ts";
import { adminView, type AdminView } from "./admin-view.ts";
import { confirmInstallationChange } from "./confirm-installation.ts";
import { CountersTable } from "./counters-table.ts";
import { MemoryTable } from "./memory-table.ts";
import { countDelivery, type DeliveryOutcome } from "./delivery-counter.ts";
import { receiveDelivery, rememberBatch, type Received, type SignedDelivery } from "./receive-delivery.ts";
import { LedgerState } from "./ledger-state.ts";
import { lastSweepOf, ledgerQueries, type LastSweep, type RunnerPage, type RunnerQuery, type LedgerSnapshot } from "./queries.ts";
import { migrate } from "./schema.ts";
import { deepHealth, type DeepHealth } from "../health/deep-health.ts";
import { knownInstallations } from "./known-installations.ts";
import { pause, resume, type PausedBy, type PauseState } from "./pause-switch.ts";
import { SessionsTable, type BearerOutcome, type LoginAttempt, type LoginOutcome } from "./sessions-table.ts";
import { Sql, type SqlCost } from "./sql.ts";
import { tokenCacheFor } from "./token-cache.ts";
import { errorText } from "../model/error-text.ts";

const PRUNE_EVERY_MS = 3_600_000;
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
    void ctx.blockConcurrencyWhile(async () => migrate(this.sql));
  }

  /** A signed delivery: a replay is only counted; its facts are recorded idempotently, and the delivery counted. */
  async receive(delivery: SignedDelivery): Promise<Receipt> {
    const before = this.cost();
    const settings = this.settings();
    const state = this.state(settings);
    const { outcome, changed, toConfirm } = receiveDelivery(this.sql, state, delivery, Date.now(), settings);
    if (changed.length > 0) await this.rearm(state);
    if (toConfirm) await this.confirmInstallation(settings, state, toConfirm);
    return { outcome, rowsWritten: this.cost().rowsWritten - before.rowsWritten, changed: changed.length };
  }

  /** An installation's deletion, suspension or lost repositories, applied only as GitHub confirms it, within the GitHub budget. */
  private async confirmInstallation(settings: Settings, state: LedgerState, change: NonNullable<Received["toConfirm"]>): Promise<void> {
    const now = Date.now();
    const spent = state.githubTimes(now, settings.maxGithubCallsPerMinute).length;
    const { github, budget } = this.edges(settings, state, tokenCacheFor(settings), settings.maxGithubCallsPerMinute - spent, CONFIRM_TIMEOUT_MS);
    const confirmation = await confirmInstallationChange(github, state.memory, change, now, settings.historyDays);
    state.spendGithubCalls(now, budget.used, settings.maxGithubCallsPerMinute);
    logLine({ msg: "installation change", claimed: change, ...(confirmation.kind === "applied" ? { forgot: confirmation.forgot } : { kept: confirmation.why }), githubCalls: budget.used });
  }

  /** Deliveries the Worker answered without the ledger, counted in its isolate and sent here at most every 10 s. */
  async countBatch(batch: DoorBatch): Promise<void> {
    const counters = new CountersTable(this.sql);
    for (const { event, outcome, n } of batch.counts) countDelivery(counters, event, outcome, n);
    for (const { cluster, n } of batch.agentRefusals ?? []) counters.add("arc_reaper_agent_refusals_total", { cluster }, n);
    rememberBatch(this.sql, new MemoryTable(this.sql), batch, Date.now());
  }

  /** A bearer token on an admin or metrics route: the login's throttle per client address. */
  async bearer(attempt: { client: string; tokenMatches: boolean; now: number }): Promise<BearerOutcome> {
    return new SessionsTable(this.sql).bearer(attempt);
  }

  /** One sweep at the cron's scheduled time. */
  async sweep(now: number): Promise<SweepReport & { cost: SqlCost; clusterCalls: number; durationMs: number }> {
    return this.exclusive(() => this.sweepNow(now));
  }

  /** Fires at the earliest due time; delivered at least once, so it is safe to run twice. */
  override async alarm(): Promise<void> {
    await this.exclusive(() => this.alarmNow());
  }


  /** Resolves once no sweep or alarm is running (tests and the local demo wait on it). */
  async idle(): Promise<void> {
    await this.exclusive(async () => undefined);
  }

  protected exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.acting.then(run, run);
    this.acting = next.catch(() => undefined);
    return next;
  }

  private async sweepNow(now: number): Promise<SweepReport & { cost: SqlCost; clusterCalls: number; durationMs: number }> {
    const started = Date.now();
    const before = this.cost();
    const settings = this.settings();
    const state = this.state(settings);
    const githubTimes = state.githubTimes(now, settings.maxGithubCallsPerMinute);
    const { watched, github, budget, clusterCalls } = this.edges(settings, state, tokenCacheFor(settings), settings.maxGithubCallsPerMinute - githubTimes.length);
    const report = await sweep({ ledger: state, watched, github, budget, githubTimes, settings, now });
    state.spendGithubCalls(now, budget.used, settings.maxGithubCallsPerMinute);
    const pruneMark = state.memory.get<number>("pruned-at") ?? 0;
    if (now - pruneMark >= PRUNE_EVERY_MS) {
      state.prune(now);
      state.memory.set("pruned-at", now);
    }
    state.counters.add("arc_reaper_sweeps_total");
    const durationMs = Date.now() - started;
    state.memory.set("last-sweep", lastSweepOf(report, budget, now, durationMs) satisfies LastSweep);
    await this.rearm(state);
    const cost = this.costSince(before);
    logLine({ msg: "sweep", ...report, clusterCalls: clusterCalls(), rowsRead: cost.rowsRead, rowsWritten: cost.rowsWritten, durationMs } satisfies SweepLine);
    return { ...report, cost, clusterCalls: clusterCalls(), durationMs };
  }

  protected async alarmNow(now = Date.now()): Promise<void> {
    const result = this.settingsResult();
    if (!result.ok) {
      logLine({ msg: "alarm skipped: arc-reaper is misconfigured", errors: result.errors });
      return;
    }
    const settings = result.settings;
    const state = this.state(settings);
    const before = this.cost();
    const githubTimes = state.githubTimes(now, settings.maxGithubCallsPerMinute);
    const { watched, github, budget, clusterCalls } = this.edges(settings, state, tokenCacheFor(settings), settings.maxGithubCallsPerMinute - githubTimes.length);
    const report = await runAlarm({ ledger: state, watched, github, budget, githubTimes, settings, now });
    state.spendGithubCalls(now, budget.used, settings.maxGithubCallsPerMinute);
    state.counters.add("arc_reaper_alarms_total");
    await this.rearm(state);
    const cost = this.costSince(before);
    const judged = report.results.length;
    if (judged > 0) {
      const errors = report.results.filter((r) => r.verdict.error).length;
      logLine({ msg: "alarm", judged, deleted: report.deleted, errors, githubCalls: budget.used, clusterCalls: clusterCalls(), rowsRead: cost.rowsRead, rowsWritten: cost.rowsWritten });
    }
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

  /** A cluster's agent view is whole again: what was held for want of it is judged now, by the alarm. */
  private async wakeAfterAgent(cluster: string): Promise<void> {
    try {
      const state = this.state(this.settings());
      if (state.release("agent", Date.now(), cluster) > 0) await this.rearm(state);
    } catch (e) {
      logLine({ msg: "waking runners after the agent's snapshot failed", error: errorText(e) });
    }
  }

  /** Whether a cluster's agent is connected and what it said (agent mode). */
  async agentStatus(cluster = "default"): Promise<AgentStatus> {
    return this.agent.status(cluster);
  }

  /** Every watched cluster's agent: AGENT_CLUSTERS, connected, known (agent mode: /metrics, /admin, /healthz/deep). */
  async agentStatuses(): Promise<AgentStatus[]> {
    const settings = this.settings();
    return this.agent.statuses(settings.cluster.mode === "agent" ? settings.cluster.expectedClusters : []);
  }

  async runners(query: RunnerQuery): Promise<RunnerPage> {
    return ledgerQueries(this.sql).page(query);
  }

  async story(name: string): Promise<ReturnType<ReturnType<typeof ledgerQueries>["story"]>> {
    return ledgerQueries(this.sql).story(name);
  }

  /** GET /admin: the page of runners, the snapshot and the day at a glance, with the rows read for them. */
  async adminView(query: RunnerQuery, now: number): Promise<AdminView> {
    return adminView(this.sql, this.ctx.storage, query, now);
  }

  async snapshot(): Promise<LedgerSnapshot> {
    return ledgerQueries(this.sql).snapshot(this.ctx.storage);
  }

  /** A login attempt at the admin form: throttled per client address, then refused (counted) or a session. */
  async login(attempt: LoginAttempt): Promise<LoginOutcome> {
    return new SessionsTable(this.sql).login(attempt);
  }

  /** Whether a session cookie's id (hashed) is live and was made with this ADMIN_TOKEN (hashed). */
  async checkSession(idHash: string, tokenHash: string, now: number): Promise<boolean> {
    return new SessionsTable(this.sql).check(idHash, tokenHash, now);
  }

  /** Logout: the session ends for every copy of its cookie. */
  async endSession(idHash: string): Promise<boolean> {
    return new SessionsTable(this.sql).end(idHash);
  }

  /**
   * POST /admin/pause: nothing is deleted until resumed; decisions are still made and logged.
   * In force for every step that reads the switch from now on; answers once a sweep or alarm
   * already deleting (it read the switch before it was set) has finished, so the answer means it.
   */
  async pause(by: PausedBy): Promise<PauseState> {
    const state = pause(this.sql, by, Date.now());
    logLine({ msg: "paused", since: state.since, by: state.by });
    await this.idle();
    return state;
  }

  /** POST /admin/resume: the runners the pause kept are due now, and the alarm is set for them. */
  async resume(by: PausedBy): Promise<{ wasPaused: boolean; madeDue: number }> {
    const { wasPaused } = resume(this.sql);
    const settings = this.settingsResult();
    let madeDue = 0;
    if (settings.ok) {
      const state = this.state(settings.settings);
      madeDue = state.release("paused", Date.now());
      await this.rearm(state);
    }
    logLine({ msg: "resumed", by, wasPaused, madeDue });
    return { wasPaused, madeDue };
  }

  /** GET /healthz/deep: each namespace listed, a token minted per known installation, the deliveries listed. */
  async deepHealth(): Promise<DeepHealth> {
    const settings = this.settings();
    const state = this.state(settings);
    // A fresh token cache, so that each installation's token is really minted; an operator's check has a budget of its own.
    const { watched, github } = this.edges(settings, state, new Map(), settings.maxGithubCallsPerMinute);
    const connected = settings.cluster.mode === "agent" ? this.agent.statuses(settings.cluster.expectedClusters).filter((a) => a.connected).map((a) => a.cluster) : undefined;
    const health = await deepHealth({ cluster: settings.cluster, namespaces: settings.namespaces, clusters: watched, connected, github, installations: knownInstallations(this.sql) });
    logLine({ msg: "deep health", ok: health.ok, failed: health.checks.filter((c) => !c.ok) });
    return health;
  }

  /** Ensures the alarm is at the earliest due time (now when already due). */
  private async rearm(state: LedgerState): Promise<void> {
    const next = state.nextDue();
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

  private state(settings: Settings): LedgerState {
    const policy = policyOf(settings);
    return new LedgerState(this.sql, {
      schedule: (record) => scheduleFromFacts(record, Date.now(), policy),
      policy,
      historyDays: settings.historyDays,
      stuckSeconds: settings.stuckSeconds,
      maxDeletionsPerMinute: settings.maxDeletionsPerMinute,
      log: logLine,
    });
  }

  /** The clients of one invocation, with a GitHub budget of `githubCalls` requests. */
  private edges(settings: Settings, state: LedgerState, tokens: GithubCache["tokens"], githubCalls: number, timeoutMs?: number): { watched: Watched[]; github: Github | Error; budget: CallBudget; clusterCalls: () => number } {
    let calls = 0;
    const budget = newCallBudget(Math.max(0, githubCalls));
    // Direct: one cluster. Agent: one per watched cluster, each bound to its own agent's view.
    const watched: Watched[] =
      settings.cluster.mode === "direct"
        ? [{ name: settings.cluster.name, cluster: clusterFor(settings.cluster, { onRequest: () => calls++ }), namespaces: settings.namespaces }]
        : this.agent.clusters(settings.cluster.expectedClusters).map((name) => ({ name, cluster: agentCluster(this.agent.port(name)), namespaces: settings.namespaces }));
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
    return { watched, github, budget, clusterCalls: () => calls };
  }

  private cost(): SqlCost {
    return { ...this.sql.cost };
  }

  private costSince(before: SqlCost): SqlCost {
    return { rowsRead: this.sql.cost.rowsRead - before.rowsRead, rowsWritten: this.sql.cost.rowsWritten - before.rowsWritten };
  }
}
