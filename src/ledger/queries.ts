// What the admin views and /metrics read: a page of runners (filtered and paged
// in the store), one runner's story, and a snapshot of counts and counters that
// reads the open rows' index and the counters, never the closed history.
import type { CallBudget } from "../github/call-budget.ts";
import type { PassSummary } from "../reaper/run-pass.ts";
import type { CounterSample } from "./counters-table.ts";
import { CountersTable } from "./counters-table.ts";
import { type LastSweep, MemoryTable } from "./memory-table.ts";
import { isOpen, RUNNER_STATES, type RunnerRecord, type RunnerState, type StoryEntry } from "../model/runner.ts";
import { RunnersTable } from "./runners-table.ts";
import { FailedTable } from "./failed-table.ts";
import type { DeletionCode } from "../model/deletion-codes.ts";
import type { FailedCode } from "../model/failed-codes.ts";
import type { FailedRunner } from "../model/failed.ts";
import { codeOfKey, type VerdictCode } from "../model/verdict.ts";
import type { IdleCount } from "../model/idle.ts";
import type { Sql } from "./sql.ts";

export const MAX_PAGE = 500;

export interface RunnerQuery {
  state?: RunnerState;
  repo?: string;
  /** Only rows of this cluster (the object seen doing the job lived there). */
  cluster?: string;
  limit?: number;
  cursor?: string;
}

/** One runner as the admin listing shows it. */
export interface RunnerRow {
  name: string;
  state: RunnerState;
  repository: string;
  runId: number;
  runAttempt: number;
  jobId: number;
  /** The cluster of the object seen doing the job (KUBE_CLUSTER_NAME, or the agent's AGENT_CLUSTER); null until one was seen. */
  cluster: string | null;
  namespace: string | null;
  uid: string | null;
  startedAt: string | null;
  completedAt: string | null;
  conclusion: string | null;
  /** Open rows: when the alarm next judges it. Null once closed: nothing more will happen to it. */
  dueAt: string | null;
  decidedAt: string | null;
  /** Closed rows: when it was reaped or found gone. */
  closedAt: string | null;
  /** Reaped rows: which evidence condemned it (job-completed, run-completed, over-bound). */
  cause: string | null;
  /** Closed rows: when the row leaves the history (REAPER_HISTORY_DAYS after it closed). */
  prunedAt: string | null;
  reason: string;
  /**
   * The code of the decision `reason` words (a Kubernetes Status `reason` beside its `message`), from the
   * set it came from: a verdict's (VERDICT_CODES), a check of our deletion's for a row it restated (stuck,
   * or reaped after it was: DELETION_CODES), a Failed runner's (FAILED_CODES). Null: never judged, or
   * judged before rows kept its code. What code and queries read; the reason is for people.
   */
  code: RowCode | null;
  /** The workflow's, the job's and the branch's names, and the run's page (https), as GitHub gave them: author-written text. */
  workflow: string | null;
  job: string | null;
  branch: string | null;
  runUrl: string | null;
  /** Failed runners (state failed, and those closed after it): ARC's scale set label, status.reason and status.message (cleaned), and when it failed. */
  scaleSet?: string | null;
  arcReason?: string | null;
  arcMessage?: string | null;
  failedAt?: string | null;
}

/** A row's code: of the set its decision came from. */
type RowCode = VerdictCode | DeletionCode | FailedCode;

export interface RunnerPage {
  runners: RunnerRow[];
  /** Pass as ?cursor= for the next page; null on the last. */
  nextCursor: string | null;
}

/** The last sweep's figures, for /metrics and the admin page: its report's counts, its time and what GitHub said. */
export function lastSweepOf(report: PassSummary, budget: CallBudget, now: number, durationMs: number): LastSweep {
  const { checked, deleted, kept, waiting, gone, heldBack, githubCalls, dryRun, paused } = report;
  return {
    at: new Date(now).toISOString(),
    durationMs,
    checked,
    deleted,
    kept,
    waiting,
    gone,
    heldBack,
    errors: report.errorsByKind,
    githubCalls,
    githubCounted: report.githubCounted,
    rateLimitRemaining: budget.rateLimitRemaining,
    rateLimitLimit: budget.rateLimitLimit,
    dryRun,
    paused,
    ...(report.unreadable ? { unreadable: report.unreadable } : {}),
  };
}

export interface LedgerSnapshot {
  runners: Record<RunnerState, number>;
  counters: CounterSample[];
  lastSweep: LastSweep | null;
  paused: { since: string; by: string } | null;
  alarmAt: string | null;
  /** Runners deleted by arc-reaper that still exist REAPER_STUCK_SECONDS later; absent until the ledger counts them. */
  stuckDeletions?: number;
  /** Runners ARC marked Failed holding slots now, per scale set. */
  failedRunners?: { cluster: string; namespace: string; scaleSet: string; n: number }[];
  /** The clusters where ARC's runner ids were seen to match GitHub's, and since when (ms). */
  runnerIdsMatch?: Record<string, number>;
  /** Runners that never work, per scale set and runner version, as the sweeps counted them; absent before the first. */
  idleRunners?: IdleCount;
}

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

function toRunnerRow(r: RunnerRecord): RunnerRow {
  const open = isOpen(r.state);
  const completions = [r.jobCompleted, r.runCompleted].filter((c): c is NonNullable<typeof c> => c !== undefined).sort((a, b) => a.at.localeCompare(b.at));
  return {
    name: r.runner,
    state: r.state,
    repository: r.repo,
    runId: r.runId,
    runAttempt: r.runAttempt,
    jobId: r.jobId,
    cluster: r.cluster ?? null,
    namespace: r.namespace ?? null,
    uid: r.uid ?? null,
    startedAt: r.startedAt ?? null,
    completedAt: completions[0]?.at ?? null,
    conclusion: completions[0]?.conclusion ?? null,
    dueAt: open ? iso(r.dueAt) : null,
    decidedAt: iso(r.decidedAt),
    closedAt: open ? null : iso(r.decidedAt),
    cause: open ? null : (r.cause ?? null),
    prunedAt: open ? null : iso(r.pruneAt ?? null),
    reason: r.reason || "recorded; not judged yet",
    code: runnerCode(r),
    workflow: r.names?.workflow ?? null,
    job: r.names?.job ?? null,
    branch: r.names?.branch ?? null,
    runUrl: r.names?.runUrl ?? null,
  };
}

/**
 * A runner row's code: the deletion check's that restated it, else its verdict key's. A stuck row restated
 * before rows kept the check's code has none: its key names the verdict that condemned it, not why it is stuck.
 */
function runnerCode(r: RunnerRecord): RowCode | null {
  if (r.checkCode !== undefined) return r.checkCode;
  return r.state === "stuck" ? null : (codeOfKey(r.verdictKey) ?? null);
}

/** A Failed runner as the listing and the story show it: no job; ARC's reason and message. */
function toFailedRow(f: FailedRunner): RunnerRow {
  const open = f.state === "failed";
  return {
    name: f.name,
    state: f.state,
    repository: "",
    runId: f.runId ?? 0,
    runAttempt: 0,
    jobId: 0,
    cluster: f.cluster,
    namespace: f.namespace,
    uid: f.uid,
    startedAt: null,
    completedAt: null,
    conclusion: null,
    dueAt: null,
    decidedAt: iso(f.deletedAt ?? f.firstSeen),
    closedAt: open ? null : iso(f.closedAt),
    cause: f.deletedAt !== undefined ? "failed" : null,
    prunedAt: null,
    reason: f.reason || "seen Failed; not judged yet",
    // Its story's last entry is its decision's (a new code always adds one); entries from before codes have none.
    code: f.code ?? f.story.at(-1)?.code ?? null,
    workflow: null,
    job: null,
    branch: null,
    runUrl: null,
    scaleSet: f.scaleSet ?? null,
    arcReason: f.arcReason ?? null,
    arcMessage: f.arcMessage ?? null,
    failedAt: iso(f.failedAt),
  };
}

export function ledgerQueries(sql: Sql) {
  const runners = new RunnersTable(sql);
  return {
    page(q: RunnerQuery): RunnerPage {
      const limit = Math.min(Math.max(1, q.limit ?? 100), MAX_PAGE);
      const before = q.cursor === undefined ? undefined : Number(q.cursor);
      if (q.state === "failed") {
        // Runners ARC marked Failed live in their own table (no job): listed under ?state=failed, newest first.
        const failed = q.repo === undefined ? new FailedTable(sql).page("failed", q.cluster, before, limit + 1) : [];
        const shownFailed = failed.slice(0, limit);
        return { runners: shownFailed.map(toFailedRow), nextCursor: failed.length > limit ? String(shownFailed[shownFailed.length - 1]!.id) : null };
      }
      const rows = runners.page({ state: q.state, repo: q.repo, cluster: q.cluster, before, limit: limit + 1 });
      const more = rows.length > limit;
      const shown = rows.slice(0, limit);
      return { runners: shown.map(toRunnerRow), nextCursor: more ? String(shown[shown.length - 1]!.id) : null };
    },

    story(name: string): { runner: string; jobs: (RunnerRow & { story: StoryEntry[] })[] } {
      const failed = new FailedTable(sql).byName(name).map((f) => ({ ...toFailedRow(f), story: f.story }));
      return { runner: name, jobs: [...runners.byName(name).map((r) => ({ ...toRunnerRow(r), story: r.story })), ...failed] };
    },

    async snapshot(storage: DurableObjectStorage): Promise<LedgerSnapshot> {
      const counters = new CountersTable(sql).all();
      const memory = new MemoryTable(sql);
      const counts = Object.fromEntries(RUNNER_STATES.map((s) => [s, 0])) as Record<RunnerState, number>;
      for (const state of ["running", "finished", "stuck"] as const) {
        counts[state] = Number(sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM runners WHERE state = ?", state)?.n ?? 0);
      }
      counts.failed = new FailedTable(sql).count("failed");
      for (const c of counters)
        if (c.name === "arc_reaper_closed_runners" && (c.labels.state === "reaped" || c.labels.state === "gone")) counts[c.labels.state] = c.value;
      const alarm = await storage.getAlarm();
      return {
        runners: counts,
        stuckDeletions: counts.stuck,
        failedRunners: new FailedTable(sql).perScaleSet(),
        runnerIdsMatch: memory.runnerIdsMatch(),
        counters: counters.filter((c) => c.name !== "arc_reaper_closed_runners"),
        lastSweep: memory.get("last-sweep") ?? null,
        paused: memory.get("paused") ?? null,
        alarmAt: iso(alarm),
        ...idleOf(memory),
      };
    },
  };
}

function idleOf(memory: MemoryTable): { idleRunners?: IdleCount } {
  const idle = memory.get("idle-runners");
  return idle ? { idleRunners: idle } : {};
}

/** A cursor must be what a page handed out: a positive whole number. */
export function parseCursor(cursor: string | undefined): { cursor?: string; error?: string } {
  if (cursor === undefined) return {};
  if (/^[1-9]\d{0,15}$/.test(cursor)) return { cursor };
  return { error: `cursor must be the nextCursor of a previous page, got ${JSON.stringify(cursor)}` };
}
