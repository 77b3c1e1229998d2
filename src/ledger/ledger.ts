// The ledger: one SQLite-backed Durable Object, the only place arc-reaper's
// state lives. Webhooks record facts here (RPC), the alarm fires at the
// earliest due time, the cron's sweep runs here, and the admin views and
// /metrics read from here. Instance fields are only caches: any call may meet
// a fresh instance.
import { DurableObject } from "cloudflare:workers";
import { clusterFor } from "../cluster/cluster-for.ts";
import type { Cluster } from "../cluster/ephemeral-runners.ts";
import { readSettings, type Settings, type SettingsResult } from "../config/settings.ts";
import type { WorkerEnv } from "../env.ts";
import { newCallBudget, type CallBudget } from "../github/call-budget.ts";
import { createGithub, type Github, type GithubCache } from "../github/github-client.ts";
import { logLine } from "../log.ts";
import { runAlarm } from "../reaper/alarm.ts";
import type { SweepLine } from "../reaper/log-lines.ts";
import { policyOf, sweep, type SweepReport } from "../reaper/sweep.ts";
import type { Fact } from "../store/facts.ts";
import { AgentLink, type AgentStatus } from "./agent-link.ts";
import { wakeAgentErrors } from "./agent-wake.ts";
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
import { receiveLoop } from "./receive-loop.ts";
import { seedHistory } from "./seed-history.ts";
import { Sql, type SqlCost } from "./sql.ts";
import { tokenCacheFor } from "./token-cache.ts";

/** Tests and the local demo may give one ledger its own settings; production never does. */
const TEST_HOOKS = "ARC_REAPER_TEST_HOOKS";
const PRUNE_EVERY_MS = 3_600_000;

/** What the Worker counted at its door (in its isolate) since its last flush. */
export interface DoorBatch {
  counts: { event: string; outcome: DeliveryOutcome; n: number }[];
  /** GUIDs of signed deliveries answered without facts (ignored), so that redelivery passes them over. */
  received: string[];
  /** The installation each of those deliveries named, per repository. */
  installations: { repo: string; id: number }[];
}

export interface Receipt {
  outcome: Received["outcome"];
  /** Rows this delivery wrote (facts and the delivery counter). */
  rowsWritten: number;
  changed: number;
}

export class Ledger extends DurableObject<WorkerEnv> {
  private readonly sql: Sql;
  /** Sweeps and alarms judge and act one at a time, so no runner is judged twice at once. */
  private acting: Promise<unknown> = Promise.resolve();
  /** Agent mode: the in-cluster agent's WebSocket, its view and the orders awaiting reports. */
  private readonly agent: AgentLink;
  /** A cache: the settings read from the env (and, in tests, the ledger's test settings). */
  private settingsCache?: { overrides: string; result: SettingsResult };

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    this.agent = new AgentLink(ctx, this.sql, logLine, { onViewComplete: () => void this.wakeAfterAgent() });
    void ctx.blockConcurrencyWhile(async () => migrate(this.sql));
  }

  /** A signed delivery: a replay is only counted; its facts are recorded idempotently, and the delivery counted. */
  async receive(delivery: SignedDelivery): Promise<Receipt> {
    const before = this.cost();
    const settings = this.settings();
    const state = this.state(settings);
    const { outcome, changed } = receiveDelivery(this.sql, state, delivery, Date.now(), settings);
    if (changed.length > 0) await this.rearm(state);
    return { outcome, rowsWritten: this.cost().rowsWritten - before.rowsWritten, changed: changed.length };
  }

  /** Deliveries the Worker answered without the ledger, counted in its isolate and sent here at most every 10 s. */
  async countBatch(batch: DoorBatch): Promise<void> {
    const counters = new CountersTable(this.sql);
    for (const { event, outcome, n } of batch.counts) countDelivery(counters, event, outcome, n);
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

  /** Runs the alarm's work as if it fired at `now` (tests drive simulated time); refused unless ARC_REAPER_TEST_HOOKS=on. */
  async alarmAt(now: number): Promise<void> {
    if (this.env[TEST_HOOKS] !== "on") throw new Error(`arc-reaper ledger: alarmAt is refused unless ${TEST_HOOKS}=on`);
    await this.exclusive(() => this.alarmNow(now));
  }

  /** Resolves once no sweep or alarm is running (tests and the local demo wait on it). */
  async idle(): Promise<void> {
    await this.exclusive(async () => undefined);
  }

  private exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.acting.then(run, run);
    this.acting = next.catch(() => undefined);
    return next;
  }

  private async sweepNow(now: number): Promise<SweepReport & { cost: SqlCost; clusterCalls: number; durationMs: number }> {
    const started = Date.now();
    const before = this.cost();
    const settings = this.settings();
    const state = this.state(settings);
    const { cluster, github, budget, clusterCalls } = this.edges(settings, state, tokenCacheFor(settings), state.githubCallsLeft(now, settings.maxGithubCallsPerSweep));
    const report = await sweep({ ledger: state, cluster, github, budget, settings, now, log: logLine });
    state.spendGithubCalls(now, budget.used);
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

  private async alarmNow(now = Date.now()): Promise<void> {
    const result = this.settingsResult();
    if (!result.ok) {
      logLine({ msg: "alarm skipped: arc-reaper is misconfigured", errors: result.errors });
      return;
    }
    const settings = result.settings;
    const state = this.state(settings);
    const before = this.cost();
    const { cluster, github, budget, clusterCalls } = this.edges(settings, state, tokenCacheFor(settings), state.githubCallsLeft(now, settings.maxGithubCallsPerSweep));
    const report = await runAlarm({ ledger: state, cluster, github, budget, settings, now });
    state.spendGithubCalls(now, budget.used);
    state.counters.add("arc_reaper_alarms_total");
    await this.rearm(state);
    const cost = this.costSince(before);
    if (report.judged > 0) logLine({ msg: "alarm", ...report, githubCalls: budget.used, clusterCalls: clusterCalls(), rowsRead: cost.rowsRead, rowsWritten: cost.rowsWritten });
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
    this.agent.closed(ws, 1006, error instanceof Error ? error.message : String(error));
  }

  /** The agent's view is whole again: what was kept for want of it is judged now, by the alarm. */
  private async wakeAfterAgent(): Promise<void> {
    try {
      if (wakeAgentErrors(this.sql, Date.now()) > 0) await this.rearm(this.state(this.settings()));
    } catch (e) {
      logLine({ msg: "waking runners after the agent's snapshot failed", error: e instanceof Error ? e.message : String(e) });
    }
  }

  /** Whether an agent is connected and what it said (agent mode: /metrics, /admin). */
  async agentStatus(): Promise<AgentStatus> {
    return this.agent.status();
  }

  async runners(query: RunnerQuery): Promise<RunnerPage> {
    return ledgerQueries(this.sql).page(query);
  }

  async story(name: string): Promise<ReturnType<ReturnType<typeof ledgerQueries>["story"]>> {
    return ledgerQueries(this.sql).story(name);
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
    const result = resume(this.sql, Date.now());
    logLine({ msg: "resumed", by, ...result });
    const settings = this.settingsResult();
    if (settings.ok) await this.rearm(this.state(settings.settings));
    return result;
  }

  /** GET /healthz/deep: each namespace listed, a token minted per known installation, the deliveries listed. */
  async deepHealth(): Promise<DeepHealth> {
    const settings = this.settings();
    const state = this.state(settings);
    // A fresh token cache, so that each installation's token is really minted; an operator's check has a budget of its own.
    const { cluster, github } = this.edges(settings, state, new Map(), settings.maxGithubCallsPerSweep);
    const health = await deepHealth({ cluster: settings.cluster, namespaces: settings.namespaces, clusterClient: cluster, github, installations: knownInstallations(this.sql) });
    logLine({ msg: "deep health", ok: health.ok, failed: health.checks.filter((c) => !c.ok) });
    return health;
  }

  /** Sets the settings of this ledger instance for tests; refused unless ARC_REAPER_TEST_HOOKS=on. */
  async useTestSettings(vars: Record<string, string>): Promise<void> {
    if (this.env[TEST_HOOKS] !== "on") throw new Error(`arc-reaper ledger: test settings are refused unless ${TEST_HOOKS}=on`);
    new MemoryTable(this.sql).set("test-settings", vars);
  }

  /** Bench only: `count` recorded deliveries made in here, one after another; refused unless ARC_REAPER_TEST_HOOKS=on. */
  async receiveLoop(first: number, count: number): Promise<{ count: number; ms: number; perSecond: number }> {
    if (this.env[TEST_HOOKS] !== "on") throw new Error(`arc-reaper ledger: receiveLoop is refused unless ${TEST_HOOKS}=on`);
    return receiveLoop((d) => this.receive(d), first, count);
  }

  /** Bench only: inserts closed rows of history in one statement; refused unless ARC_REAPER_TEST_HOOKS=on. */
  async seedHistory(from: number, count: number): Promise<number> {
    if (this.env[TEST_HOOKS] !== "on") throw new Error(`arc-reaper ledger: seedHistory is refused unless ${TEST_HOOKS}=on`);
    return seedHistory(this.sql, from, count, Date.now());
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
  private settingsResult(): SettingsResult {
    const overrides = this.env[TEST_HOOKS] === "on" ? (this.sql.first<{ value: string }>("SELECT value FROM memory WHERE key = 'test-settings'")?.value ?? "") : "";
    if (this.settingsCache?.overrides !== overrides) {
      const vars = overrides ? (JSON.parse(overrides) as Record<string, string>) : {};
      this.settingsCache = { overrides, result: readSettings({ ...this.env, ...vars }) };
    }
    return this.settingsCache.result;
  }

  private settings(): Settings {
    const result = this.settingsResult();
    if (!result.ok) throw new Error(`arc-reaper is misconfigured: ${result.errors.join("; ")}`);
    return result.settings;
  }

  private state(settings: Settings): LedgerState {
    return new LedgerState(this.sql, { policy: policyOf(settings), historyDays: settings.historyDays, maxDeletionsPerMinute: settings.maxDeletionsPerSweep, log: logLine });
  }

  /** The clients of one invocation, with a GitHub budget of `githubCalls` requests. */
  private edges(settings: Settings, state: LedgerState, tokens: GithubCache["tokens"], githubCalls: number): { cluster: Cluster; github: Github | Error; budget: CallBudget; clusterCalls: () => number } {
    let calls = 0;
    const budget = newCallBudget(githubCalls);
    const cluster = clusterFor(settings.cluster, { onRequest: () => calls++, agent: this.agent });
    let github: Github | Error;
    try {
      github = createGithub({
        apiUrl: settings.githubApiUrl,
        appId: settings.appId,
        privateKey: settings.privateKey,
        budget,
        cache: { tokens, memory: state.memory.github() },
      });
    } catch (e) {
      github = e instanceof Error ? e : new Error(String(e));
    }
    return { cluster, github, budget, clusterCalls: () => calls };
  }

  private cost(): SqlCost {
    return { ...this.sql.cost };
  }

  private costSince(before: SqlCost): SqlCost {
    return { rowsRead: this.sql.cost.rowsRead - before.rowsRead, rowsWritten: this.sql.cost.rowsWritten - before.rowsWritten };
  }
}
