// The store's tables behind the LedgerPort the reaper uses: recording facts,
// storing what reconcile answered (verdicts, due times, holds, closes, unseen
// rows), the deletion window, the deliveries mark and the pause switch. What a
// result does to the rows comes in as a function (options.transition, the
// reaper's transition.ts), as the facts' schedule and the next look of a recheck
// or a lifted hold do (options.schedule, options.look), and store() writes what
// it answers. A few choices are still made here: whether a recheck moves a row's
// due time (rechecked), that a returning name's closed row is dropped (learn),
// and how a watched deletion restates its row (storeDeletionCheck).
import type { Fact } from "../model/facts.ts";
import type { ClusterRunner, DeletionWatch } from "../model/runner.ts";
import type { DeletionCode } from "../model/deletion-codes.ts";
import type { DeletionCheck } from "../reaper/check-deletion.ts";
import { DeletionsTable } from "./deletions-table.ts";
import { failedPort } from "./failed-port.ts";
import { idlePort } from "./idle-port.ts";
import { FailedTable } from "./failed-table.ts";
import type { HeldFor } from "../model/verdict.ts";
import { SlidingWindow } from "../model/window.ts";
import { dueAtOf, type NextLook } from "../model/next-look.ts";
import type { Policy } from "../model/policy.ts";
import type { DecisionLine } from "../reaper/log-lines.ts";
import type { LookCase } from "../reaper/next-look.ts";
import type { FailedPort, LedgerPort, Stored } from "../reaper/ports.ts";
import type { Caller, Result } from "../reaper/reconcile.ts";
import type { DeliveriesMark } from "../reaper/redeliver-failed.ts";
import type { Transition, TransitionContext } from "../reaper/transition.ts";
import type { IdleCount } from "../model/idle.ts";
import { CountersTable } from "./counters-table.ts";
import { ReceivedGuidsTable } from "./received-guids-table.ts";
import { MemoryTable } from "./memory-table.ts";
import { recordFacts, type ScheduleFacts } from "./record-facts.ts";
import { rollUpDecision } from "./roll-up-decision.ts";
import { RedeliveriesTable } from "./redeliveries-table.ts";
import { withStory, type RunnerRecord } from "../model/runner.ts";
import { RunnersTable } from "./runners-table.ts";
import type { Sql } from "./sql.ts";
import { UnseenTable, type UnseenRunner } from "./unseen-table.ts";
import { ValidatorsTable } from "./validators-table.ts";

/** The store's settings and the reaper's decisions, handed in: built by LedgerRoot.store() (src/durable/ledger-root.ts) and nowhere else. */
export interface LedgerOptions {
  /** The next look the facts alone give a row: scheduleFromFacts (src/reaper/schedule-facts.ts) at the ledger's clock. */
  schedule: ScheduleFacts;
  /** When a runner is looked at again: the reaper's one answer, nextLook (src/reaper/next-look.ts), for a recheck and a lifted hold. */
  look: (c: LookCase) => NextLook;
  /** For the day at a glance's delay after the grace. */
  policy: Policy;
  historyDays: number;
  stuckSeconds: number;
  maxDeletionsPerMinute: number;
  log: (line: DecisionLine) => void;
  /** What a reconcile result does to the rows, transition (src/reaper/transition.ts): the decision this store writes. */
  transition: (r: Result, ctx: TransitionContext) => Transition;
}

export class LedgerStore implements LedgerPort {
  readonly runners: RunnersTable;
  readonly unseenRunners: UnseenTable;
  readonly memory: MemoryTable;
  /** What repeated GitHub GETs answered, for conditional requests. */
  readonly validators: ValidatorsTable;
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
    this.validators = new ValidatorsTable(sql);
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

  openToJudge(): RunnerRecord[] {
    return this.runners.openToJudge();
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
    for (const record of this.runners.whole(records)) {
      if (!record) continue; // the row is gone: nothing to move
      const next: RunnerRecord = { ...record, checkedAt: now };
      // The due time moves with the recheck only when the facts set it (no hold, no earlier look asked for).
      next.dueAt = dueAtOf(this.opts.look({ kind: "rechecked", before: record, after: next, policy: this.opts.policy }));
      this.runners.update(next, record, { closing: false });
    }
  }

  store(results: readonly Result[], by: Caller, now: number): Stored {
    let logged = 0;
    const ctx: TransitionContext = { now, by, historyDays: this.opts.historyDays, stuckSeconds: this.opts.stuckSeconds };
    for (const [r, t] of this.wholeWhereWritten(results, ctx)) {
      for (const c of t.counters) this.counters.add(c.name, c.labels);
      if (t.watch) this.deletionsWatched.put(t.watch);
      if (t.endUnseen) this.unseenRunners.remove(t.endUnseen.name, t.endUnseen.uid);
      if (t.putUnseen) this.unseenRunners.put(t.putUnseen);
      const written = r.record && t.row ? this.writeRow(r, r.record, t.row, now) : true;
      if (t.line && written) {
        logged++;
        this.opts.log(t.line);
      }
    }
    return { logged };
  }

  /**
   * Each result with its transition. A row read for judging only (openToJudge) that is to be written is read
   * whole first (one statement for all of them) and its transition made again on it: the same decision (the
   * story and names are never judged on), with the story the row holds. A row gone meanwhile is not written.
   */
  private wholeWhereWritten(results: readonly Result[], ctx: TransitionContext): [Result, Transition][] {
    const pairs = results.map((r): [Result, Transition] => [r, this.opts.transition(r, ctx)]);
    const unread = pairs.filter(([r, t]) => r.record?.storyUnread && t.row?.changed);
    if (unread.length === 0) return pairs;
    const completed = this.runners.whole(unread.map(([r]) => r.record!));
    const byResult = new Map(unread.map(([r], i) => [r, completed[i]]));
    return pairs.map(([r, t]) => {
      if (!byResult.has(r)) return [r, t];
      const record = byResult.get(r);
      if (!record) return [r, { ...t, row: undefined, line: undefined }];
      const again: Result = { ...r, record };
      return [again, this.opts.transition(again, ctx)];
    });
  }

  /** Writes the row the transition answered; answers false when facts came in while it was judged (the row is left as they made it). */
  private writeRow(r: Result, before: RunnerRecord, row: NonNullable<Transition["row"]>, now: number): boolean {
    // Their due time stands; the alarm judges it again. A close is written regardless.
    if (row.changed && !this.runners.update(row.next, before, { closing: row.closing })) return false;
    rollUpDecision(this.sql, { before, after: row.next, verdict: r.verdict, newDecision: row.newDecision, at: now, policy: this.opts.policy });
    return true;
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
      if (this.restate(w.rowId, "stuck", "reaped", check.code, `${w.reason}; ${check.reason}`, `reaped: ${check.reason}`, now, by)) {
        this.opts.log({ ...line, verdict: "deleted", code: check.code, reason: `reaped: ${check.reason}` });
      }
      return;
    }
    this.deletionsWatched.put({ ...w, dueAt: check.dueAt, stuckAt: w.stuckAt ?? now, ...(check.finishRefused ? { finishRefused: check.finishRefused } : {}) });
    if (check.newly && this.restate(w.rowId, "reaped", "stuck", check.code, check.reason, check.reason, now, by)) {
      this.opts.log({ ...line, verdict: "keep", code: check.code, reason: check.reason, error: "cluster" });
    }
    // A finish refused (403) is shown on the row once: the row's reason says what to apply.
    if (!check.newly && check.finishRefused && !w.finishRefused && this.restate(w.rowId, "stuck", "stuck", check.code, check.reason, check.reason, now, by)) {
      this.opts.log({ ...line, verdict: "keep", code: check.code, reason: check.reason, error: "cluster" });
    }
  }

  /** Moves a closed row from one closed state to another, with the check's code (its story and gauges follow); answers whether it was in `from`. */
  private restate(
    rowId: number,
    from: "reaped" | "stuck",
    to: "reaped" | "stuck",
    checkCode: DeletionCode,
    reason: string,
    what: string,
    now: number,
    by: Caller,
  ): boolean {
    const record = this.runners.byId(rowId);
    if (record?.state !== from) return false;
    const pruneAt = to === "reaped" ? now + this.opts.historyDays * 86_400_000 : undefined; // a stuck row is never pruned
    const restated = { ...record, state: to, checkCode, reason, decidedAt: now, dueAt: null, pruneAt };
    this.runners.put(withStory(restated, { at: new Date(now).toISOString(), what, source: by, code: checkCode }));
    this.counters.add("arc_reaper_closed_runners", { state: from }, -1);
    this.counters.add("arc_reaper_closed_runners", { state: to });
    return true;
  }

  deletions(now: number): SlidingWindow {
    return new SlidingWindow(this.memory.get("deletions-times") ?? [], this.opts.maxDeletionsPerMinute, now);
  }

  saveDeletions(window: SlidingWindow): void {
    const times = window.toJSON();
    if (JSON.stringify(times) !== JSON.stringify(this.memory.get("deletions-times") ?? [])) this.memory.set("deletions-times", times);
  }

  /** GitHub calls of the last 60 s: the alarm and the sweep share REAPER_MAX_GITHUB_CALLS_PER_MINUTE in any 60 s. */
  githubTimes(now: number, limit: number): number[] {
    return new SlidingWindow(this.memory.get("github-times") ?? [], limit, now).toJSON();
  }

  spendGithubCalls(now: number, n: number, limit: number): void {
    if (n === 0) return;
    const window = new SlidingWindow(this.memory.get("github-times") ?? [], limit, now);
    window.take(now, n);
    this.memory.set("github-times", window.toJSON());
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
    return this.memory.get("paused") !== undefined;
  }

  deliveriesMark(): DeliveriesMark {
    return this.memory.get("deliveries-mark") ?? { listedUntil: 0 };
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
    this.validators.prune();
    this.sql.run("DELETE FROM runs WHERE updated_at < ?", new Date(now - this.opts.historyDays * 86_400_000 - 2 * 86_400_000).toISOString());
    return pruned;
  }
}
