// The ledger's tables behind the LedgerPort the reaper uses: recording facts,
// storing what reconcile answered (verdicts, due times, holds, closes, unseen
// rows), the deletion window, the deliveries mark and the pause switch. It
// stores; it decides nothing (decisions come in as reconcile's results; the
// facts' schedule and the next look of a recheck or a lifted hold as functions).
import type { Fact } from "../model/facts.ts";
import type { ClusterRunner, DeletionWatch } from "../model/runner.ts";
import type { DeletionCheck } from "../reaper/check-deletion.ts";
import { DeletionsTable } from "./deletions-table.ts";
import { failedPort } from "./failed-port.ts";
import { idlePort } from "./idle-port.ts";
import { FailedTable } from "./failed-table.ts";
import { verdictKey, type HeldFor } from "../model/verdict.ts";
import { SlidingWindow } from "../model/window.ts";
import { dueAtOf, type NextLook } from "../model/next-look.ts";
import type { Policy } from "../model/policy.ts";
import type { DecisionLine } from "../reaper/log-lines.ts";
import type { LookCase } from "../reaper/next-look.ts";
import type { FailedPort, LedgerPort, Stored } from "../reaper/ports.ts";
import type { Caller, Result } from "../reaper/reconcile.ts";
import type { DeliveriesMark } from "../reaper/redeliver-failed.ts";
import type { IdleCount } from "../model/idle.ts";
import { CountersTable } from "./counters-table.ts";
import { ReceivedGuidsTable } from "./received-guids-table.ts";
import { MemoryTable } from "./memory-table.ts";
import { recordFacts, type ScheduleFacts } from "./record-facts.ts";
import { rollUpDecision } from "./roll-up-decision.ts";
import { RedeliveriesTable } from "./redeliveries-table.ts";
import { withStory } from "./runner-record.ts";
import type { RunnerRecord } from "../model/runner.ts";
import { RunnersTable } from "./runners-table.ts";
import type { Sql } from "./sql.ts";
import { UnseenTable, type UnseenRunner } from "./unseen-table.ts";

const DELETIONS_KEY = "deletions-times";
const GITHUB_KEY = "github-times";

export interface LedgerOptions {
  schedule: ScheduleFacts;
  /** When a runner is looked at again: the reaper's one answer (src/reaper/next-look.ts), for a recheck and a lifted hold. */
  look: (c: LookCase) => NextLook;
  /** For the day at a glance's delay after the grace. */
  policy: Policy;
  historyDays: number;
  stuckSeconds: number;
  maxDeletionsPerMinute: number;
  log: (line: DecisionLine) => void;
}

export class LedgerStore implements LedgerPort {
  readonly runners: RunnersTable;
  readonly unseenRunners: UnseenTable;
  readonly memory: MemoryTable;
  readonly counters: CountersTable;
  readonly redeliveries: RedeliveriesTable;
  readonly deletionsWatched: DeletionsTable;
  readonly failed: FailedPort;
  readonly idle: { store(count: IdleCount): void };
  private readonly sql: Sql;
  private readonly opts: LedgerOptions;

  constructor(sql: Sql, opts: LedgerOptions) {
    this.sql = sql;
    this.opts = opts;
    this.runners = new RunnersTable(sql);
    this.unseenRunners = new UnseenTable(sql);
    this.memory = new MemoryTable(sql);
    this.counters = new CountersTable(sql);
    this.redeliveries = new RedeliveriesTable(sql);
    this.deletionsWatched = new DeletionsTable(sql);
    this.failed = failedPort(sql, this.counters, opts.log);
    this.idle = idlePort(this.memory);
  }

  /** Facts from a webhook or GitHub's REST API; answers the rows they changed. A job fact ends any unseen row of its runner. */
  record(facts: readonly Fact[], now: number): RunnerRecord[] {
    for (const f of facts) if (f.type !== "run-completed") this.unseenRunners.removeName(f.runner);
    return recordFacts(this.sql, this.runners, facts, now, this.opts.schedule, Date.now()).changed;
  }

  openRunners(): RunnerRecord[] {
    return this.runners.open();
  }

  dueRunners(now: number, limit: number): RunnerRecord[] {
    return this.runners.due(now, limit);
  }

  unseen(): UnseenRunner[] {
    return this.unseenRunners.all();
  }

  dueUnseen(now: number, limit: number): UnseenRunner[] {
    return this.unseenRunners.due(now, limit);
  }

  learn(facts: Fact[], runner?: ClusterRunner, now = Date.now()): RunnerRecord | undefined {
    const job = facts.find((f) => f.type === "job-started" || f.type === "job-completed");
    if (!job || (job.type !== "job-started" && job.type !== "job-completed")) return undefined;
    const existing = this.runners.get(job.runner, job.jobId);
    // A name that came back: the closed row of the earlier object is history of another runner.
    if (existing?.closed && runner && existing.uid !== runner.uid) {
      this.sql.run("DELETE FROM runners WHERE id = ?", existing.id ?? -1);
      this.counters.add("arc_reaper_closed_runners", { state: existing.closed.outcome }, -1);
    }
    this.record(facts, now);
    return this.runners.get(job.runner, job.jobId);
  }

  openOfRun(repo: string, runId: number): RunnerRecord[] {
    return this.runners.openOfRun(repo, runId);
  }

  rechecked(records: readonly RunnerRecord[], now: number): void {
    for (const record of records) {
      const next: RunnerRecord = { ...record, checkedAt: now };
      // The due time moves with the recheck only when the facts set it (no hold, no earlier look asked for).
      next.dueAt = dueAtOf(this.opts.look({ kind: "rechecked", before: record, after: next, policy: this.opts.policy }));
      this.runners.update(next, record, { closing: false });
    }
  }

  store(results: readonly Result[], by: Caller, now: number): Stored {
    let logged = 0;
    for (const r of results) {
      const line = r.record ? this.storeRecord(r, r.record, by, now) : r.unseen ? this.storeUnseen(r, r.unseen) : false;
      if (r.record && r.unseen) this.unseenRunners.remove(r.unseen.name, r.unseen.uid);
      if (r.verdict.error) this.counters.add("arc_reaper_errors_total", { kind: r.errorKind ?? "github" });
      if (r.verdict.error) this.counters.add("arc_reaper_cluster_errors_total", { cluster: clusterOfResult(r), kind: r.errorKind ?? "github" });
      if (r.heldFor === "cap") this.counters.add("arc_reaper_deletions_held_back_total");
      if (line) {
        logged++;
        this.opts.log(decisionLine(r, by));
      }
    }
    return { logged };
  }

  private storeRecord(r: Result, record: RunnerRecord, by: Caller, now: number): boolean {
    const key = verdictKey(r.verdict);
    const identity = {
      uid: record.uid ?? r.identity?.uid,
      namespace: record.namespace ?? r.identity?.namespace,
      cluster: record.cluster ?? r.identity?.cluster,
    };
    let next: RunnerRecord;
    if (r.close) {
      next = withStory(
        {
          ...record,
          ...identity,
          state: r.close,
          verdict: r.verdict.verdict,
          reason: r.verdict.reason,
          verdictKey: key,
          cause: r.close === "reaped" ? r.verdict.cause : undefined,
          decidedAt: now,
          dueAt: null,
          pruneAt: now + this.opts.historyDays * 86_400_000,
          failures: 0,
          heldFor: undefined,
        },
        { at: new Date(now).toISOString(), what: `${r.close}: ${r.verdict.reason}`, source: by },
      );
      this.counters.add("arc_reaper_closed_runners", { state: r.close });
      if (r.close === "reaped") this.counters.add("arc_reaper_deletions_total", { cause: r.verdict.cause ?? "unknown" });
      if (r.close === "reaped") this.counters.add("arc_reaper_cluster_deletions_total", { cluster: clusterOfResult(r) });
      // Our own delete (not one that another row's delete served): watched until its object goes.
      if (r.close === "reaped" && r.deleted && r.view.kind === "found" && record.id !== undefined) {
        const o = r.view.runner;
        this.deletionsWatched.put({
          rowId: record.id,
          name: o.name,
          cluster: o.cluster ?? "default",
          namespace: o.namespace,
          uid: o.uid,
          repo: record.repo,
          jobId: record.jobId,
          installationId: record.installationId,
          deletedAt: now,
          dueAt: now + this.opts.stuckSeconds * 1000,
          reason: r.verdict.reason,
        });
      }
    } else {
      next = {
        ...record,
        ...identity,
        verdict: r.verdict.verdict,
        reason: r.verdict.reason,
        verdictKey: key,
        dueAt: dueAtOf(r.next),
        failures: r.failures,
        heldFor: r.heldFor,
      };
      if (r.asked) next.checkedAt = now;
      if (key !== record.verdictKey) {
        next.decidedAt = now;
        next = withStory(next, { at: new Date(now).toISOString(), what: `${r.verdict.verdict}: ${r.verdict.reason}`, source: by });
      }
    }
    const changed =
      key !== record.verdictKey ||
      next.state !== record.state ||
      next.dueAt !== record.dueAt ||
      next.uid !== record.uid ||
      next.cluster !== record.cluster ||
      next.namespace !== record.namespace ||
      next.checkedAt !== record.checkedAt ||
      next.heldFor !== record.heldFor ||
      (next.failures ?? 0) !== (record.failures ?? 0);
    // Facts may have come in (a webhook) while the runner was being judged: then the row is left as
    // they made it (their due time stands; the alarm judges it again). A close is written regardless.
    if (changed && !this.runners.update(next, record, { closing: next.state !== record.state })) return false;
    rollUpDecision(this.sql, { before: record, after: next, verdict: r.verdict, at: now, policy: this.opts.policy });
    return key !== record.verdictKey || r.close === "reaped" || r.verdict.error === true;
  }

  private storeUnseen(r: Result, unseen: UnseenRunner): boolean {
    if (r.close) {
      this.unseenRunners.remove(unseen.name, unseen.uid);
      return unseen.reason !== "";
    }
    const fresh = unseen.reason === "";
    const next: UnseenRunner = { ...unseen, reason: r.verdict.reason, dueAt: dueAtOf(r.next), failures: r.failures, heldFor: r.heldFor };
    if (fresh || unseen.reason !== next.reason || unseen.dueAt !== next.dueAt || unseen.heldFor !== next.heldFor || (unseen.failures ?? 0) !== r.failures)
      this.unseenRunners.put(next);
    return fresh || verdictKey({ verdict: "keep", reason: unseen.reason }) !== verdictKey(r.verdict) || r.verdict.error === true;
  }

  deletionWatches(): DeletionWatch[] {
    return this.deletionsWatched.all();
  }

  dueDeletions(now: number, limit: number): DeletionWatch[] {
    return this.deletionsWatched.due(now, limit);
  }

  storeDeletionCheck(w: DeletionWatch, check: DeletionCheck, now: number, by: Caller): void {
    if (check.kind === "unknown") {
      this.deletionsWatched.put({ ...w, dueAt: check.dueAt });
      return;
    }
    const line = { msg: "decision", by, runner: w.name, namespace: w.namespace, repository: w.repo, run: null, job: w.jobId } as const;
    if (check.kind === "went") {
      this.deletionsWatched.remove(w.rowId);
      if (w.stuckAt === undefined) return; // the common case: it went as ARC should; the row says reaped already
      // Stuck no more: reaped, with the reason it was condemned for and how long it took.
      if (this.restate(w.rowId, "stuck", "reaped", `${w.reason}; ${check.reason}`, `reaped: ${check.reason}`, now, by)) {
        this.opts.log({ ...line, verdict: "deleted", reason: `reaped: ${check.reason}` });
      }
      return;
    }
    this.deletionsWatched.put({ ...w, dueAt: check.dueAt, stuckAt: w.stuckAt ?? now, ...(check.finishRefused ? { finishRefused: check.finishRefused } : {}) });
    if (check.newly && this.restate(w.rowId, "reaped", "stuck", check.reason, check.reason, now, by)) {
      this.opts.log({ ...line, verdict: "keep", reason: check.reason, error: "cluster" });
    }
    // A finish refused (403) is shown on the row once: the row's reason says what to apply.
    if (!check.newly && check.finishRefused && !w.finishRefused && this.restate(w.rowId, "stuck", "stuck", check.reason, check.reason, now, by)) {
      this.opts.log({ ...line, verdict: "keep", reason: check.reason, error: "cluster" });
    }
  }

  /** Moves a closed row from one closed state to another (its story and gauges follow); answers whether it was in `from`. */
  private restate(rowId: number, from: "reaped" | "stuck", to: "reaped" | "stuck", reason: string, what: string, now: number, by: Caller): boolean {
    const record = this.runners.byId(rowId);
    if (record?.state !== from) return false;
    const pruneAt = to === "reaped" ? now + this.opts.historyDays * 86_400_000 : undefined; // a stuck row is never pruned
    this.runners.put(withStory({ ...record, state: to, reason, decidedAt: now, dueAt: null, pruneAt }, { at: new Date(now).toISOString(), what, source: by }));
    this.counters.add("arc_reaper_closed_runners", { state: from }, -1);
    this.counters.add("arc_reaper_closed_runners", { state: to });
    return true;
  }

  deletions(now: number): SlidingWindow {
    return new SlidingWindow(this.memory.get<number[]>(DELETIONS_KEY) ?? [], this.opts.maxDeletionsPerMinute, now);
  }

  saveDeletions(window: SlidingWindow): void {
    const times = window.toJSON();
    if (JSON.stringify(times) !== JSON.stringify(this.memory.get<number[]>(DELETIONS_KEY) ?? [])) this.memory.set(DELETIONS_KEY, times);
  }

  /** GitHub calls of the last 60 s: the alarm and the sweep share REAPER_MAX_GITHUB_CALLS_PER_MINUTE in any 60 s. */
  githubTimes(now: number, limit: number): number[] {
    return new SlidingWindow(this.memory.get<number[]>(GITHUB_KEY) ?? [], limit, now).toJSON();
  }

  spendGithubCalls(now: number, n: number, limit: number): void {
    if (n === 0) return;
    const window = new SlidingWindow(this.memory.get<number[]>(GITHUB_KEY) ?? [], limit, now);
    window.take(now, n);
    this.memory.set(GITHUB_KEY, window.toJSON());
  }

  runnerIdsMatched(clusters: Iterable<string>, now: number): void {
    this.memory.runnerIdsMatched(clusters, now);
  }

  /** Lifts a hold (resume; an agent's return: its cluster's rows only): the rows it held are due now; answers how many. */
  release(hold: HeldFor, now: number, cluster?: string): number {
    const next = this.opts.look({ kind: "released", now });
    return this.runners.release(hold, next, cluster) + this.unseenRunners.release(hold, next, cluster);
  }

  countFinish(outcome: "finished" | "refused" | "conflict" | "failed"): void {
    this.counters.add("arc_reaper_finishes_total", { outcome });
  }

  paused(): boolean {
    return this.memory.get<{ since: string }>("paused") !== undefined;
  }

  deliveriesMark(): DeliveriesMark {
    return this.memory.get<DeliveriesMark>("deliveries-mark") ?? { listedUntil: 0 };
  }

  setDeliveriesMark(mark: DeliveriesMark): void {
    if (JSON.stringify(mark) !== JSON.stringify(this.deliveriesMark())) this.memory.set("deliveries-mark", mark);
  }

  /** The earliest time anything is due: the alarm's time. */
  nextDue(): number | null {
    const dues = [this.runners.nextDue(), this.unseenRunners.nextDue(), this.deletionsWatched.nextDue()].filter((d): d is number => d !== null);
    return dues.length > 0 ? Math.min(...dues) : null;
  }

  /** Closed runners past the history are deleted; their gauges follow. */
  prune(now: number): number {
    let pruned = 0;
    for (const state of ["reaped", "gone"] as const) {
      // `+state`: not an index term, so SQLite takes the partial index on prune_at (rows past their history) instead of
      // walking every closed row of the state (the first sweep read the whole history without it: 100,600 rows at 100,000).
      const n = this.sql.run(`DELETE FROM runners WHERE +state = ? AND prune_at <= ?`, state, now);
      this.counters.add("arc_reaper_closed_runners", { state }, -n);
      pruned += n;
    }
    new FailedTable(this.sql).prune(now - this.opts.historyDays * 86_400_000);
    this.redeliveries.prune(now - 3 * 86_400_000);
    new ReceivedGuidsTable(this.sql).prune(now - this.opts.historyDays * 86_400_000);
    this.sql.run("DELETE FROM runs WHERE updated_at < ?", new Date(now - this.opts.historyDays * 86_400_000 - 2 * 86_400_000).toISOString());
    return pruned;
  }
}

function decisionLine(r: Result, by: Caller): DecisionLine {
  const runner = r.view.kind === "found" ? r.view.runner : undefined;
  const line: DecisionLine = {
    msg: "decision",
    by,
    runner: r.name,
    namespace: runner?.namespace ?? r.record?.namespace ?? null,
    repository: r.record?.repo ?? runner?.jobRepositoryName ?? null,
    run: r.record?.runId ?? runner?.workflowRunId ?? null,
    job: r.record?.jobId ?? null,
    verdict: r.close === "reaped" ? "deleted" : r.verdict.verdict,
    code: r.verdict.code,
    reason: r.verdict.reason,
  };
  if (runner?.cluster && runner.cluster !== "default") line.cluster = runner.cluster;
  if (r.verdict.error) line.error = r.errorKind ?? "github";
  if (r.heldFor) line.heldFor = r.heldFor;
  return line;
}

/** The cluster a result is about, for the per-cluster counters: "unknown" while no view could name it. */
function clusterOfResult(r: Result): string {
  const seen = r.view.kind === "found" ? r.view.runner.cluster : undefined;
  return r.record?.cluster ?? r.identity?.cluster ?? seen ?? r.unseen?.cluster ?? "unknown";
}
