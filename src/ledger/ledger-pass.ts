// One pass as the ledger runs it, for the alarm and the sweep alike: the
// settings (a misconfiguration is logged and skips either), one clock
// (max(scheduled time, Date.now())), the clients and windows built once, a sweep
// that queued behind a pass run once (a sweep already ran after its scheduled
// time: skipped, logged), then what the pass answered stored, the alarm re-armed
// and one log line. The pass's own lines (a decision per runner on a sweep's
// first looks) go through one log budget (src/log.ts): those past it are
// counted, and the sweep or alarm line says how many.
import type { SettingsResult } from "../config/settings.ts";
import type { CallBudget } from "../github/call-budget.ts";
import type { Github } from "../github/github-client.ts";
import type { GithubCache } from "../github/installation-and-rate-memory.ts";
import type { Settings } from "../config/settings.ts";
import { logBudget } from "../log.ts";
import type { DecisionLine, SweepLine } from "../reaper/log-lines.ts";
import type { WatchedCluster } from "../reaper/look.ts";
import { runPass, type PassKind, type PassSummary } from "../reaper/run-pass.ts";
import type { LedgerStore } from "./ledger-store.ts";
import { lastSweepOf, type LastSweep } from "./queries.ts";
import type { SqlCost } from "./sql.ts";
import { tokenCacheFor } from "../github/token-cache.ts";

const PRUNE_EVERY_MS = 3_600_000;
/** When the last sweep started (the real clock); the in-cluster sweep clock counts from it (sweep-clock.ts). */
export const SWEEP_RAN_KEY = "sweep-ran-at";

export type PassOutcome = { skipped: string } | (PassSummary & { cost: SqlCost; clusterCalls: number; durationMs: number });

/** The clients of one invocation: the watched clusters, GitHub (or why it could not be built), the GitHub budget, and a count of cluster calls. */
export interface PassClients {
  watched: WatchedCluster[];
  github: Github | Error;
  budget: CallBudget;
  clusterCalls: () => number;
  /** Whether a cluster is retired as of a time (agent mode with AGENT_CLUSTERS; AgentLink.retired). */
  retired?: (cluster: string, now: number) => boolean;
}

/** What a pass needs of the Durable Object: its settings, tables, clients and alarm. */
export interface PassHost {
  settingsResult(): SettingsResult;
  /** The tables, their lines logged through `log` (a pass's log budget). */
  state(settings: Settings, log?: (line: DecisionLine) => void): LedgerStore;
  clients(settings: Settings, state: LedgerStore, tokens: GithubCache["tokens"], githubCalls: number): PassClients;
  rearm(state: LedgerStore): Promise<void>;
  cost(): SqlCost;
  log(line: Record<string, unknown>): void;
}

export async function ledgerPass(host: PassHost, kind: PassKind, scheduledTime: number): Promise<PassOutcome> {
  const started = Date.now();
  const result = host.settingsResult();
  if (!result.ok) {
    host.log({ msg: `${kind} skipped: arc-reaper is misconfigured`, errors: result.errors });
    return { skipped: `arc-reaper is misconfigured: ${result.errors.join("; ")}` };
  }
  const settings = result.settings;
  const logs = logBudget();
  const state = host.state(settings, logs.line);
  // One clock for the pass: a late cron measures ages from now, never from its scheduled time.
  const now = Math.max(scheduledTime, started);
  // The windows are stamped with the real clock at each call (in tests, a simulated future time may lead it).
  const clock = (): number => Math.max(now, Date.now());
  if (kind === "sweep") {
    const ranAt = state.memory.get<number>(SWEEP_RAN_KEY);
    if (ranAt !== undefined && ranAt >= scheduledTime) {
      const why = `a sweep already ran at ${new Date(ranAt).toISOString()}, after this one's scheduled time ${new Date(scheduledTime).toISOString()}`;
      host.log({ msg: "sweep skipped: it queued behind a pass", scheduledTime: new Date(scheduledTime).toISOString(), ranAt: new Date(ranAt).toISOString() });
      return { skipped: why };
    }
    state.memory.set(SWEEP_RAN_KEY, started); // the real clock: a sweep scheduled later (a simulated future in tests) still runs
  }
  const before = host.cost();
  const githubTimes = state.githubTimes(clock(), settings.maxGithubCallsPerMinute);
  const tokens = tokenCacheFor(settings);
  const { watched, github, budget, clusterCalls, retired } = host.clients(settings, state, tokens, settings.maxGithubCallsPerMinute - githubTimes.length);
  const report = await runPass(kind, { ledger: state, watched, github, budget, githubTimes, settings, now, clock, ...(retired ? { retired } : {}) });
  state.spendGithubCalls(clock(), budget.used, settings.maxGithubCallsPerMinute);
  if (kind === "sweep") {
    const pruneMark = state.memory.get<number>("pruned-at") ?? 0;
    if (now - pruneMark >= PRUNE_EVERY_MS) {
      state.prune(now);
      state.memory.set("pruned-at", now);
    }
  }
  state.counters.add(kind === "sweep" ? "arc_reaper_sweeps_total" : "arc_reaper_alarms_total");
  const durationMs = Date.now() - started;
  if (kind === "sweep") state.memory.set("last-sweep", lastSweepOf(report, budget, now, durationMs) satisfies LastSweep);
  await host.rearm(state);
  const after = host.cost();
  const cost = { rowsRead: after.rowsRead - before.rowsRead, rowsWritten: after.rowsWritten - before.rowsWritten };
  const { kind: _kind, ...fields } = report;
  const { bytes: logBytes, summarized } = logs.spent();
  // Lines past the budget, by msg: their runners' stories (the admin views) have each decision.
  const logSummarized = Object.keys(summarized).length > 0 ? { logSummarized: summarized } : {};
  if (kind === "sweep") {
    host.log({
      msg: "sweep",
      ...fields,
      clusterCalls: clusterCalls(),
      rowsRead: cost.rowsRead,
      rowsWritten: cost.rowsWritten,
      durationMs,
      logBytes,
      ...logSummarized,
    } satisfies SweepLine);
  } else if (report.checked > 0) {
    host.log({
      msg: "alarm",
      judged: report.checked,
      deleted: report.deleted,
      errors: report.errors,
      githubCalls: budget.used,
      clusterCalls: clusterCalls(),
      rowsRead: cost.rowsRead,
      rowsWritten: cost.rowsWritten,
      ...logSummarized,
    });
  }
  return { ...report, cost, clusterCalls: clusterCalls(), durationMs };
}
