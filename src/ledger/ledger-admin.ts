// The admin views and switches, behind one RpcTarget the ledger returns
// (`ledger.admin()`): the runners' pages and stories, the snapshot for
// /metrics, the agents' statuses, pause and resume, and the deep health check.
import { RpcTarget } from "cloudflare:workers";
import type { Settings, SettingsResult } from "../config/settings.ts";
import { deepHealth, type DeepHealth } from "../health/deep-health.ts";
import type { AgentStatus } from "../agent-link/agent-link.ts";
import { adminView, type AdminView } from "./admin-view.ts";
import { knownInstallations } from "./known-installations.ts";
import type { LedgerStore } from "./ledger-store.ts";
import type { PassHost } from "./ledger-pass.ts";
import { pause, resume, type PausedBy, type PauseState } from "./pause-switch.ts";
import { ledgerQueries, type LedgerSnapshot, type RunnerPage, type RunnerQuery } from "./queries.ts";
import type { Sql } from "./sql.ts";

/** What the admin calls need of the Durable Object. */
export interface AdminHost extends Pick<PassHost, "clients" | "rearm" | "log"> {
  sql: Sql;
  storage: DurableObjectStorage;
  settingsResult(): SettingsResult;
  settings(): Settings;
  state(settings: Settings): LedgerStore;
  agentStatuses(settings: Settings): AgentStatus[];
  idle(): Promise<void>;
}

export class LedgerAdmin extends RpcTarget {
  readonly #host: AdminHost;

  constructor(host: AdminHost) {
    super();
    this.#host = host;
  }

  runners(query: RunnerQuery): RunnerPage {
    return ledgerQueries(this.#host.sql).page(query);
  }

  story(name: string): ReturnType<ReturnType<typeof ledgerQueries>["story"]> {
    return ledgerQueries(this.#host.sql).story(name);
  }

  /** GET /admin: the page of runners, the snapshot and the day at a glance, with the rows read for them. */
  adminView(query: RunnerQuery, now: number): Promise<AdminView> {
    return adminView(this.#host.sql, this.#host.storage, query, now);
  }

  snapshot(): Promise<LedgerSnapshot> {
    return ledgerQueries(this.#host.sql).snapshot(this.#host.storage);
  }

  /** Every watched cluster's agent: AGENT_CLUSTERS, connected, known (agent mode: /metrics, /admin, /healthz/deep). */
  agentStatuses(): AgentStatus[] {
    return this.#host.agentStatuses(this.#host.settings());
  }

  /**
   * POST /admin/pause: nothing is deleted until resumed; decisions are still made and logged.
   * In force for every step that reads the switch from now on; answers once a sweep or alarm
   * already deleting (it read the switch before it was set) has finished, so the answer means it.
   */
  async pause(by: PausedBy): Promise<PauseState> {
    const state = pause(this.#host.sql, by, Date.now());
    this.#host.log({ msg: "paused", since: state.since, by: state.by });
    await this.#host.idle();
    return state;
  }

  /** POST /admin/resume: the runners the pause kept are due now, and the alarm is set for them. */
  async resume(by: PausedBy): Promise<{ wasPaused: boolean; madeDue: number }> {
    const { wasPaused } = resume(this.#host.sql);
    const settings = this.#host.settingsResult();
    let madeDue = 0;
    if (settings.ok) {
      const state = this.#host.state(settings.settings);
      madeDue = state.release("paused", Date.now());
      await this.#host.rearm(state);
    }
    this.#host.log({ msg: "resumed", by, wasPaused, madeDue });
    return { wasPaused, madeDue };
  }

  /** GET /healthz/deep: each namespace listed, a token minted per known installation, the deliveries listed. */
  async deepHealth(): Promise<DeepHealth> {
    const settings = this.#host.settings();
    const state = this.#host.state(settings);
    // A fresh token cache, so that each installation's token is really minted. Its GitHub calls come out of the
    // window the sweep and the alarm share (setup polls this every 2 s): never more than the cap in any 60 s.
    const limit = settings.maxGithubCallsPerMinute;
    const spent = state.githubTimes(Date.now(), limit).length;
    const { watched, github, budget } = this.#host.clients(settings, state, new Map(), limit - spent);
    const connected =
      settings.cluster.mode === "agent"
        ? this.#host
            .agentStatuses(settings)
            .filter((a) => a.connected)
            .map((a) => a.cluster)
        : undefined;
    const finishRefused = settings.finishStuck
      ? state.deletionWatches().flatMap((w) => (w.finishRefused ? [{ name: w.name, namespace: w.namespace, cluster: w.cluster, why: w.finishRefused }] : []))
      : undefined;
    const health = await deepHealth({
      cluster: settings.cluster,
      namespaces: settings.namespaces,
      clusters: watched,
      connected,
      github,
      installations: knownInstallations(this.#host.sql),
      finishRefused,
      runnerIdsMatch: state.memory.runnerIdsMatch(),
      ...(settings.cluster.mode === "direct" ? { listShape: (cluster: string) => state.memory.listShape(cluster).note() } : {}),
    });
    state.spendGithubCalls(Date.now(), budget.used, limit);
    this.#host.log({ msg: "deep health", ok: health.ok, failed: health.checks.filter((c) => !c.ok), githubCalls: budget.used });
    return health;
  }
}
