// One pass as the ledger runs it, for the alarm and the sweep alike: the
// settings (a misconfiguration is logged and skips either), one clock
// (max(scheduled time, Date.now())), the clients and windows built once, a sweep
// that queued behind a pass run once (a sweep already ran after its scheduled
// time: skipped, logged), then what the pass answered stored, the alarm re-armed
// and one log line. The pass's own lines (a decision per runner on a sweep's
// first looks) go through one log budget (src/log.ts): those past it are
// counted, and the sweep or alarm line says how many.
import { countedCalls } from "../github/call-budget.ts";
import { tokenCacheFor } from "../github/token-cache.ts";
import { recordGithubCalls } from "../ledger/hourly-rollup.ts";
import { type LastSweep, MemoryTable } from "../ledger/memory-table.ts";
import { lastSweepOf } from "../ledger/queries.ts";
import type { SqlCost } from "../ledger/sql.ts";
import { logBudget } from "../log.ts";
import type { SweepLine } from "../reaper/log-lines.ts";
import { runPass, type PassKind, type PassSummary } from "../reaper/run-pass.ts";
import type { LedgerRoot } from "./ledger-root.ts";
import { nextSweepAt, sweepRanAt } from "./sweep-clock.ts";

const PRUNE_EVERY_MS = 3_600_000;
export type PassOutcome = { skipped: string } | (PassSummary & { cost: SqlCost; clusterCalls: number; durationMs: number });

/** One pass of `kind` in the object `root` composes. */
export async function ledgerPass(root: LedgerRoot, kind: PassKind, scheduledTime: number): Promise<PassOutcome> {
  const started = Date.now();
  const result = root.settingsResult();
  if (!result.ok) {
    root.log({ msg: `${kind} skipped: arc-reaper is misconfigured`, errors: result.errors });
    return { skipped: `arc-reaper is misconfigured: ${result.errors.join("; ")}` };
  }
  const settings = result.settings;
  const logs = logBudget();
  const state = root.store(settings, logs.line);
  // One clock for the pass: a late cron measures ages from now, never from its scheduled time.
  const now = Math.max(scheduledTime, started);
  // The windows are stamped with the real clock at each call (in tests, a simulated future time may lead it).
  const clock = (): number => Math.max(now, Date.now());
  if (kind === "sweep") {
    // A stamp in the future (the clock stepped back) reads as now: at most this one sweep is skipped, never all until real time passes it.
    const ranAt = sweepRanAt(state.memory, started, root.log);
    if (ranAt !== undefined && ranAt >= scheduledTime) {
      const why = `a sweep already ran at ${new Date(ranAt).toISOString()}, after this one's scheduled time ${new Date(scheduledTime).toISOString()}`;
      root.log({ msg: "sweep skipped: it queued behind a pass", scheduledTime: new Date(scheduledTime).toISOString(), ranAt: new Date(ranAt).toISOString() });
      return { skipped: why };
    }
    state.memory.set("sweep-ran-at", started); // the real clock: a sweep scheduled later (a simulated future in tests) still runs
  }
  const before = root.cost();
  const githubTimes = state.githubTimes(clock(), settings.maxGithubCallsPerMinute);
  const tokens = tokenCacheFor(settings);
  const { watched, github, budget, clusterCalls, retired, unwatched } = root.clients(
    settings,
    state,
    tokens,
    settings.maxGithubCallsPerMinute - githubTimes.length,
  );
  const report = await runPass(kind, { ledger: state, watched, github, budget, githubTimes, settings, now, clock, unwatched, ...(retired ? { retired } : {}) });
  state.spendGithubCalls(clock(), budget.used, settings.maxGithubCallsPerMinute);
  recordGithubCalls(root.sql, now, budget.used, countedCalls(budget));
  if (kind === "sweep") {
    const pruneMark = state.memory.get("pruned-at") ?? 0;
    if (now - pruneMark >= PRUNE_EVERY_MS) {
      state.prune(now);
      state.memory.set("pruned-at", now);
    }
  }
  state.counters.add(kind === "sweep" ? "arc_reaper_sweeps_total" : "arc_reaper_alarms_total");
  const durationMs = Date.now() - started;
  if (kind === "sweep") state.memory.set("last-sweep", lastSweepOf(report, budget, now, durationMs) satisfies LastSweep);
  await root.rearm(state);
  const after = root.cost();
  const cost = { rowsRead: after.rowsRead - before.rowsRead, rowsWritten: after.rowsWritten - before.rowsWritten };
  logPass(root.log, report, { cost, clusterCalls: clusterCalls(), githubCalls: budget.used, durationMs, logs: logs.spent() });
  return { ...report, cost, clusterCalls: clusterCalls(), durationMs };
}

/** The pass's one line: the sweep's always, the alarm's when it judged something. */
function logPass(
  log: LedgerRoot["log"],
  report: PassSummary,
  pass: { cost: SqlCost; clusterCalls: number; githubCalls: number; durationMs: number; logs: ReturnType<ReturnType<typeof logBudget>["spent"]> },
): void {
  const { kind, ...fields } = report;
  const { cost, durationMs } = pass;
  const { bytes: logBytes, summarized } = pass.logs;
  // Lines past the budget, by msg: their runners' stories (the admin views) have each decision.
  const logSummarized = Object.keys(summarized).length > 0 ? { logSummarized: summarized } : {};
  if (kind === "sweep") {
    log({
      msg: "sweep",
      ...fields,
      clusterCalls: pass.clusterCalls,
      rowsRead: cost.rowsRead,
      rowsWritten: cost.rowsWritten,
      durationMs,
      logBytes,
      ...logSummarized,
    } satisfies SweepLine);
  } else if (report.checked > 0) {
    log({
      msg: "alarm",
      judged: report.checked,
      deleted: report.deleted,
      errors: report.errors,
      githubCalls: pass.githubCalls,
      githubCounted: report.githubCounted,
      clusterCalls: pass.clusterCalls,
      rowsRead: cost.rowsRead,
      rowsWritten: cost.rowsWritten,
      ...logSummarized,
    });
  }
}

/** The alarm's pass, then in the cluster the sweep too when its time has come (sweep-clock.ts). */
export async function alarmPass(root: LedgerRoot): Promise<void> {
  await ledgerPass(root, "alarm", Date.now());
  const every = root.sweepEveryMs();
  if (every !== undefined && Date.now() >= nextSweepAt(new MemoryTable(root.sql), every, Date.now(), root.log)) await ledgerPass(root, "sweep", Date.now());
}
