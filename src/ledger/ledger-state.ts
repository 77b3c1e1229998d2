// The ledger's tables behind the LedgerPort the reaper uses: recording facts,
// keeping verdicts and due times, closing runners, the unseen runners, the
// deletion window, the deliveries mark and the pause switch.
import type { Case } from "../reaper/judge-and-act.ts";
import type { DecisionLine } from "../reaper/log-lines.ts";
import { notTheJobsRunner, type ClusterRunner, type Policy } from "../reaper/judge.ts";
import type { Applied, Caller, LedgerPort } from "../reaper/ledger-port.ts";
import type { DeliveriesMark } from "../reaper/redeliver-failed.ts";
import { RECONCILE_SETTLE_MS, UNSEEN_RETRY_MS } from "../reaper/sweep.ts";
import type { Fact } from "../store/facts.ts";
import { CountersTable } from "./counters-table.ts";
import { DeliveriesReceived } from "./deliveries-received.ts";
import { dueOfVerdict, verdictKey } from "./due-at.ts";
import { MemoryTable } from "./memory-table.ts";
import { recordFacts } from "./record-facts.ts";
import { RedeliveriesTable } from "./redeliveries-table.ts";
import { withStory, type RunnerRecord } from "./runner-record.ts";
import { RunnersTable } from "./runners-table.ts";
import type { Sql } from "./sql.ts";
import { UnseenTable, type UnseenRunner } from "./unseen-table.ts";

/** A condemned runner held back by the cap is due again in the next minute's window. */
const HELD_BACK_RETRY_MS = 60_000;

export interface LedgerOptions {
  policy: Policy;
  historyDays: number;
  maxDeletionsPerMinute: number;
  log: (line: DecisionLine) => void;
}

export class LedgerState implements LedgerPort {
  readonly runners: RunnersTable;
  readonly unseenRunners: UnseenTable;
  readonly memory: MemoryTable;
  readonly counters: CountersTable;
  readonly redeliveries: RedeliveriesTable;
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
  }

  /** Facts from a webhook or GitHub's REST API; answers the rows they changed. */
  record(facts: readonly Fact[], now: number): RunnerRecord[] {
    return recordFacts(this.sql, this.runners, facts, now, this.opts.policy).changed;
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

  learn(facts: Fact[], now: number, runner?: ClusterRunner): RunnerRecord | undefined {
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

  apply(cases: Case[], by: Caller, now: number): Applied {
    let logged = 0;
    for (const c of cases) {
      const line = c.record ? this.applyToRecord(c, c.record, by, now) : c.unseen ? this.applyToUnseen(c, c.unseen, now) : false;
      if (c.record && c.unseen) this.unseenRunners.remove(c.unseen.name, c.unseen.uid);
      if (c.verdict.error) this.counters.add("arc_reaper_errors_total", { kind: c.errorKind ?? "github" });
      if (c.heldBack) this.counters.add("arc_reaper_deletions_held_back_total");
      if (line) {
        logged++;
        this.opts.log(decisionLine(c, by));
      }
    }
    return { logged };
  }

  private applyToRecord(c: Case, record: RunnerRecord, by: Caller, now: number): boolean {
    const key = verdictKey(c.verdict);
    const runner = c.cluster.kind === "found" ? c.cluster.runner : undefined;
    // The object seen busy on the job's run is the job's runner: only its uid may be deleted for this job.
    const identity: Pick<RunnerRecord, "uid" | "namespace"> = { uid: record.uid, namespace: record.namespace };
    if (runner && runner.workflowRunId === record.runId && !notTheJobsRunner(record, runner)) {
      identity.uid ??= runner.uid;
      identity.namespace ??= runner.namespace;
    }
    let next: RunnerRecord;
    if (c.reaped || c.verdict.verdict === "gone") {
      const state = c.reaped ? "reaped" : "gone";
      next = withStory(
        { ...record, ...identity, state, verdict: c.verdict.verdict, reason: c.verdict.reason, verdictKey: key, cause: c.reaped ? c.verdict.cause : undefined, decidedAt: now, dueAt: now + this.opts.historyDays * 86_400_000 },
        { at: new Date(now).toISOString(), what: `${state}: ${c.verdict.reason}`, source: by },
      );
      this.counters.add("arc_reaper_closed_runners", { state });
      if (c.reaped) this.counters.add("arc_reaper_deletions_total", { cause: c.verdict.cause ?? "unknown" });
    } else {
      next = { ...record, ...identity, verdict: c.verdict.verdict, reason: c.verdict.reason, verdictKey: key, dueAt: c.heldBack || c.deferred ? now + HELD_BACK_RETRY_MS : dueOfVerdict(c.verdict, now) };
      if (c.asked) next.checkedAt = now;
      if (key !== record.verdictKey) {
        next.decidedAt = now;
        next = withStory(next, { at: new Date(now).toISOString(), what: `${c.verdict.verdict}: ${c.verdict.reason}`, source: by });
      }
    }
    const changed =
      key !== record.verdictKey || next.state !== record.state || next.dueAt !== record.dueAt || next.uid !== record.uid ||
      next.namespace !== record.namespace || next.checkedAt !== record.checkedAt;
    // Facts may have come in (a webhook) while the runner was being judged: then the row is left as
    // they made it (their due time stands; the alarm judges it again). A close is written regardless.
    if (changed && !this.runners.update(next, record, { closing: next.state !== record.state })) return false;
    return key !== record.verdictKey || c.reaped === true || c.verdict.error === true;
  }

  private applyToUnseen(c: Case, unseen: UnseenRunner, now: number): boolean {
    const settling = now - unseen.firstSeen < RECONCILE_SETTLE_MS;
    // GitHub answered but could not place it: back off. Not asked (budget) or an error: the next minute.
    let dueAt: number | null;
    if (settling) dueAt = unseen.firstSeen + RECONCILE_SETTLE_MS;
    else if (c.asked && !c.verdict.error) dueAt = now + UNSEEN_RETRY_MS;
    else if (!c.deferred && !c.verdict.error && unseen.dueAt !== null && unseen.dueAt > now) dueAt = unseen.dueAt;
    else dueAt = now + HELD_BACK_RETRY_MS;
    const fresh = unseen.reason === "";
    if (fresh || unseen.reason !== c.verdict.reason || unseen.dueAt !== dueAt) this.unseenRunners.put({ ...unseen, reason: c.verdict.reason, dueAt });
    return fresh || verdictKey({ verdict: "keep", reason: unseen.reason }) !== verdictKey(c.verdict) || c.verdict.error === true;
  }

  forgetUnseen(keep: (u: UnseenRunner) => boolean): void {
    for (const u of this.unseenRunners.all()) if (!keep(u)) this.unseenRunners.remove(u.name, u.uid);
  }

  deletionsLeft(now: number): number {
    const window = this.memory.get<{ minute: number; count: number }>("deletions-window");
    const used = window && window.minute === Math.floor(now / 60_000) ? window.count : 0;
    return Math.max(0, this.opts.maxDeletionsPerMinute - used);
  }

  spendDeletions(now: number, n: number): void {
    if (n === 0) return;
    const minute = Math.floor(now / 60_000);
    const window = this.memory.get<{ minute: number; count: number }>("deletions-window");
    this.memory.set("deletions-window", { minute, count: (window?.minute === minute ? window.count : 0) + n });
  }

  /**
   * GitHub calls left in this minute's window: the alarm and the sweep share
   * REAPER_MAX_GITHUB_CALLS_PER_SWEEP a minute, so many alarms in one minute
   * cannot each spend a whole budget.
   */
  githubCallsLeft(now: number, limit: number): number {
    const window = this.memory.get<{ minute: number; count: number }>("github-window");
    return Math.max(0, limit - (window && window.minute === Math.floor(now / 60_000) ? window.count : 0));
  }

  spendGithubCalls(now: number, n: number): void {
    if (n === 0) return;
    const minute = Math.floor(now / 60_000);
    const window = this.memory.get<{ minute: number; count: number }>("github-window");
    this.memory.set("github-window", { minute, count: (window?.minute === minute ? window.count : 0) + n });
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
    const dues = [this.runners.nextDue(), this.unseenRunners.nextDue()].filter((d): d is number => d !== null);
    return dues.length > 0 ? Math.min(...dues) : null;
  }

  /** Closed runners past the history are deleted; their gauges follow. */
  prune(now: number): number {
    let pruned = 0;
    for (const state of ["reaped", "gone"] as const) {
      const n = this.sql.run(`DELETE FROM runners WHERE state = ? AND due_at <= ?`, state, now);
      this.counters.add("arc_reaper_closed_runners", { state }, -n);
      pruned += n;
    }
    this.redeliveries.prune(now - 3 * 86_400_000);
    new DeliveriesReceived(this.sql).prune(now - this.opts.historyDays * 86_400_000);
    this.sql.run("DELETE FROM runs WHERE updated_at < ?", new Date(now - this.opts.historyDays * 86_400_000 - 2 * 86_400_000).toISOString());
    return pruned;
  }
}

function decisionLine(c: Case, by: Caller): DecisionLine {
  const runner = c.cluster.kind === "found" ? c.cluster.runner : undefined;
  const line: DecisionLine = {
    msg: "decision",
    by,
    runner: c.name,
    namespace: runner?.namespace ?? c.record?.namespace ?? null,
    repository: c.record?.repo ?? runner?.jobRepositoryName ?? null,
    run: c.record?.runId ?? runner?.workflowRunId ?? null,
    job: c.record?.jobId ?? null,
    verdict: c.reaped ? "deleted" : c.verdict.verdict,
    reason: c.verdict.reason,
  };
  if (c.verdict.error) line.error = c.errorKind ?? "github";
  return line;
}
