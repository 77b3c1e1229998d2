// The admin views and switches, behind one RpcTarget the ledger returns
// (`ledger.admin()`): the runners' pages and stories, the snapshot for
// /metrics, the agents' statuses, pause and resume, and the deep health check.
import { RpcTarget } from "cloudflare:workers";
import { deepHealth, type DeepHealth } from "../health/deep-health.ts";
import type { AgentStatus } from "../agent-link/agent-link.ts";
import { adminView, type AdminView } from "../ledger/admin-view.ts";
import { decodeBackup, encodeBackup, type BackupRefusalReason } from "../ledger/backup-format.ts";
import { LEFT_OUT } from "../ledger/backup-tables.ts";
import { readBackup } from "../ledger/read-backup.ts";
import { restoreBackup, type RestoreOutcome } from "../ledger/restore-backup.ts";
import { knownInstallations } from "../ledger/known-installations.ts";
import type { MemoryTable, PausedBy, PauseState } from "../ledger/memory-table.ts";
import { sweepDriver } from "../config/home.ts";
import type { Settings } from "../config/settings.ts";
import type { SweepState } from "../health/sweep-check.ts";
import { pause, resume } from "../ledger/pause-switch.ts";
import { ledgerQueries, type LedgerSnapshot, type RunnerPage, type RunnerQuery } from "../ledger/queries.ts";
import type { LedgerRoot } from "./ledger-root.ts";

/** When the last sweep completed, what drives it, and where the alarm stands (the deep health's sweep check). */
async function sweepState(root: LedgerRoot, settings: Settings, memory: MemoryTable): Promise<SweepState> {
  const last = memory.get("last-sweep");
  return { driver: sweepDriver(settings.home), lastAt: last ? Date.parse(last.at) : null, alarmAt: await root.storage.getAlarm(), now: Date.now() };
}

/** A restore's answer: what it wrote, or why the backup (decodeBackup) or the ledger (restoreBackup) refused it. */
export type RestoreAnswer = RestoreOutcome | { ok: false; reason: BackupRefusalReason; message: string };

export class LedgerAdmin extends RpcTarget {
  readonly #root: LedgerRoot;

  constructor(root: LedgerRoot) {
    super();
    this.#root = root;
  }

  runners(query: RunnerQuery): RunnerPage {
    return ledgerQueries(this.#root.sql).page(query);
  }

  story(name: string): ReturnType<ReturnType<typeof ledgerQueries>["story"]> {
    return ledgerQueries(this.#root.sql).story(name);
  }

  /** GET /admin: the page of runners, the snapshot and the day at a glance, with the rows read for them. */
  adminView(query: RunnerQuery, now: number): Promise<AdminView> {
    return adminView(this.#root.sql, this.#root.storage, query, now);
  }

  snapshot(): Promise<LedgerSnapshot> {
    return ledgerQueries(this.#root.sql).snapshot(this.#root.storage);
  }

  /** Every watched cluster's agent: AGENT_CLUSTERS, connected, known (agent mode: /metrics, /admin, /healthz/deep). */
  agentStatuses(): AgentStatus[] {
    return this.#root.agentStatuses(this.#root.settings());
  }

  /**
   * POST /admin/pause: nothing is deleted until resumed; decisions are still made and logged.
   * In force for every step that reads the switch from now on; answers once a sweep or alarm
   * already deleting (it read the switch before it was set) has finished, so the answer means it.
   */
  async pause(by: PausedBy): Promise<PauseState> {
    const state = pause(this.#root.sql, by, Date.now());
    this.#root.log({ msg: "paused", since: state.since, by: state.by });
    await this.#root.idle();
    return state;
  }

  /** POST /admin/resume: the runners the pause kept are due now, and the alarm is set for them. */
  async resume(by: PausedBy): Promise<{ wasPaused: boolean; madeDue: number }> {
    const { wasPaused } = resume(this.#root.sql);
    const settings = this.#root.settingsResult();
    let madeDue = 0;
    if (settings.ok) {
      const state = this.#root.store(settings.settings);
      madeDue = state.release("paused", Date.now());
      await this.#root.rearm(state);
    }
    this.#root.log({ msg: "resumed", by, wasPaused, madeDue });
    return { wasPaused, madeDue };
  }

  /**
   * GET /admin/backup: every backed-up table read in one synchronous step (src/ledger/read-backup.ts says why
   * that is one state), then encoded as NDJSON and streamed.
   */
  async backup(): Promise<ReadableStream<Uint8Array>> {
    const started = Date.now();
    const content = readBackup(this.#root.sql);
    const readMs = Date.now() - started;
    const chunks = await encodeBackup(content, new Date(started), LEFT_OUT);
    const rows = Object.fromEntries(content.tables.map((t) => [t.name, t.rows.length]));
    this.#root.log({
      msg: "ledger backed up",
      schemaVersion: content.schemaVersion,
      rows,
      bytes: chunks[0]!.byteLength + chunks[1]!.byteLength,
      databaseBytes: this.#root.storage.sql.databaseSize,
      readMs,
    });
    return new Blob(chunks).stream();
  }

  /**
   * POST /admin/restore: a backup checked whole, then written into this ledger if it holds no facts, in one
   * transaction, after any sweep or alarm under way. `live`: this is the ledger the server serves, whose alarm
   * is set for the restored rows; another (restored under a new LEDGER_NAME, to be switched to) is left without
   * an alarm, so it decides nothing until it is served.
   */
  async restore(body: ReadableStream<Uint8Array>, live: boolean): Promise<RestoreAnswer> {
    const started = Date.now();
    const decoded = await decodeBackup(await new Response(body).text());
    if (!decoded.ok) {
      this.#root.log({ msg: "ledger restore refused", reason: decoded.reason, message: decoded.message });
      return decoded;
    }
    return this.#root.exclusive(async () => {
      const outcome = restoreBackup(this.#root.sql, (run) => this.#root.storage.transactionSync(run), decoded);
      if (!outcome.ok) {
        this.#root.log({ msg: "ledger restore refused", reason: outcome.reason, message: outcome.message });
        return outcome;
      }
      const settings = this.#root.settingsResult();
      if (live && settings.ok) await this.#root.rearm(this.#root.store(settings.settings));
      else await this.#root.storage.deleteAlarm();
      this.#root.log({
        msg: "ledger restored",
        schemaVersion: outcome.schemaVersion,
        migratedTo: outcome.migratedTo,
        rows: outcome.rows,
        live,
        ms: Date.now() - started,
      });
      return outcome;
    });
  }

  /** GET /healthz/deep: each namespace listed, a token minted per known installation, the deliveries listed. */
  async deepHealth(): Promise<DeepHealth> {
    const settings = this.#root.settings();
    const state = this.#root.store(settings);
    // A fresh token cache, so that each installation's token is really minted. Its GitHub calls come out of the
    // window the sweep and the alarm share (setup polls this every 2 s): never more than the cap in any 60 s.
    const limit = settings.maxGithubCallsPerMinute;
    const spent = state.githubTimes(Date.now(), limit).length;
    const { watched, github, budget } = this.#root.clients(settings, state, new Map(), limit - spent);
    const connected =
      settings.cluster.mode === "agent"
        ? this.#root
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
      installations: knownInstallations(this.#root.sql),
      finishRefused,
      runnerIdsMatch: state.memory.runnerIdsMatch(),
      sweep: await sweepState(this.#root, settings, state.memory),
      clusterIdentities: state.memory.clusterIdentities(),
      ...(settings.cluster.mode === "direct" ? { listShape: (cluster: string) => state.memory.listShape(cluster).note() } : {}),
    });
    state.spendGithubCalls(Date.now(), budget.used, limit);
    this.#root.log({ msg: "deep health", ok: health.ok, failed: health.checks.filter((c) => !c.ok), githubCalls: budget.used });
    return health;
  }
}
