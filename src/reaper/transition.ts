// What one reconcile result does to the ledger's rows, as a pure function: the
// runner row's next state (its close, the identity of the object seen doing its
// job, its verdict key, story, due and prune times), the unseen row's, our own
// delete's watch, the counters to add and the decision line to log. The ledger
// (src/ledger/ledger-store.ts) writes what this answers and decides nothing.
import { dueAtOf } from "../model/next-look.ts";
import { withStory, type DeletionWatch, type RunnerRecord, type UnseenRunner } from "../model/runner.ts";
import { isNewDecision, verdictKey } from "../model/verdict.ts";
import type { DecisionLine } from "./log-lines.ts";
import { nextLook } from "./next-look.ts";
import type { Caller, Result } from "./reconcile.ts";

export interface TransitionContext {
  now: number;
  by: Caller;
  /** A closed row is pruned this many days after its close. */
  historyDays: number;
  /** Our delete is looked at again this long after it, to see its object gone (else it is stuck). */
  stuckSeconds: number;
}

/** One counter to add to: its name, labels and amount. */
interface CounterAdd {
  name: string;
  labels?: Record<string, string>;
}

export interface Transition {
  /**
   * The runner row as it is to be: written when `changed` (a close always is; an open row only if it is
   * still as it was judged), and rolled up into the day at a glance once written or left unchanged.
   */
  row?: { next: RunnerRecord; changed: boolean; closing: boolean; newDecision: boolean };
  /** The unseen row as it is to be stored. */
  putUnseen?: UnseenRunner;
  /** The unseen row that ends (a close, or a row that now accounts for its runner). */
  endUnseen?: { name: string; uid: string };
  /** Our own delete, watched until its object goes. */
  watch?: DeletionWatch;
  counters: CounterAdd[];
  /** The decision line, when the decision is worth one: logged if the row's write went through. */
  line?: DecisionLine;
}

export function transition(r: Result, ctx: TransitionContext): Transition {
  const counters = resultCounters(r);
  const t: Transition = { counters };
  let worthALine = false;
  if (r.record) {
    const row = rowTransition(r, r.record, ctx);
    t.row = { next: row.next, changed: row.changed, closing: row.next.state !== r.record.state, newDecision: row.newDecision };
    if (row.watch) t.watch = row.watch;
    counters.push(...row.counters);
    worthALine = row.logged;
    if (r.unseen) t.endUnseen = { name: r.unseen.name, uid: r.unseen.uid };
  } else if (r.unseen) {
    const unseen = unseenTransition(r, r.unseen);
    if (unseen.put) t.putUnseen = unseen.put;
    if (unseen.end) t.endUnseen = { name: r.unseen.name, uid: r.unseen.uid };
    worthALine = unseen.logged;
  }
  if (worthALine) t.line = decisionLine(r, ctx.by);
  return t;
}

interface RowChange {
  next: RunnerRecord;
  changed: boolean;
  newDecision: boolean;
  logged: boolean;
  counters: CounterAdd[];
  watch?: DeletionWatch;
}

function rowTransition(r: Result, record: RunnerRecord, ctx: TransitionContext): RowChange {
  const { now, by } = ctx;
  // A back-off repeats the row's last decision (its reason is that decision's): its key stands.
  const key = r.verdict.code === "BackingOff" && record.verdictKey !== undefined ? record.verdictKey : verdictKey(r.verdict);
  const newDecision = key !== record.verdictKey && isNewDecision(record.verdictKey, r.verdict);
  const identity = {
    uid: record.uid ?? r.identity?.uid,
    namespace: record.namespace ?? r.identity?.namespace,
    cluster: record.cluster ?? r.identity?.cluster,
  };
  const counters: CounterAdd[] = [];
  let watch: DeletionWatch | undefined;
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
        pruneAt: now + ctx.historyDays * 86_400_000,
        failures: 0,
        heldFor: undefined,
      },
      { at: new Date(now).toISOString(), what: `${r.close}: ${r.verdict.reason}`, source: by, code: r.verdict.code },
    );
    counters.push({ name: "arc_reaper_closed_runners", labels: { state: r.close } });
    if (r.close === "reaped") {
      counters.push({ name: "arc_reaper_deletions_total", labels: { cause: r.verdict.cause ?? "unknown" } });
      counters.push({ name: "arc_reaper_cluster_deletions_total", labels: { cluster: clusterOfResult(r) } });
    }
    // Our own delete (not one that another row's delete served): watched until its object goes.
    if (r.close === "reaped" && r.deleted && r.view.kind === "found" && record.id !== undefined) {
      const o = r.view.runner;
      watch = {
        rowId: record.id,
        name: o.name,
        cluster: o.cluster ?? "default",
        namespace: o.namespace,
        uid: o.uid,
        repo: record.repo,
        jobId: record.jobId,
        installationId: record.installationId,
        deletedAt: now,
        dueAt: nextLook({ kind: "deletion-watch", now, stuckSeconds: ctx.stuckSeconds }).at,
        reason: r.verdict.reason,
      };
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
    if (newDecision) {
      next.decidedAt = now;
      next = withStory(next, { at: new Date(now).toISOString(), what: `${r.verdict.verdict}: ${r.verdict.reason}`, source: by, code: r.verdict.code });
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
  const logged = newDecision || r.close === "reaped" || r.verdict.error === true;
  return watch ? { next, changed, newDecision, logged, counters, watch } : { next, changed, newDecision, logged, counters };
}

interface UnseenChange {
  put?: UnseenRunner;
  end?: true;
  logged: boolean;
}

function unseenTransition(r: Result, unseen: UnseenRunner): UnseenChange {
  if (r.close) return { end: true, logged: unseen.reason !== null };
  const fresh = unseen.reason === null;
  // A back-off repeats the row's last decision: its key stands. A row judged before unseen rows kept a key
  // (reason set, no key) takes its verdict's key now, as the same decision: it never stored which it was.
  const key = r.verdict.code === "BackingOff" && unseen.verdictKey !== undefined ? unseen.verdictKey : verdictKey(r.verdict);
  const newDecision = fresh || (unseen.verdictKey !== undefined && unseen.verdictKey !== key);
  const next: UnseenRunner = { ...unseen, reason: r.verdict.reason, verdictKey: key, dueAt: dueAtOf(r.next), failures: r.failures, heldFor: r.heldFor };
  const changed =
    fresh ||
    unseen.verdictKey !== key ||
    unseen.reason !== next.reason ||
    unseen.dueAt !== next.dueAt ||
    unseen.heldFor !== next.heldFor ||
    (unseen.failures ?? 0) !== r.failures;
  const logged = newDecision || r.verdict.error === true;
  return changed ? { put: next, logged } : { logged };
}

/** Counters every result adds to, whatever row it is about: errors and deletions held back. */
function resultCounters(r: Result): CounterAdd[] {
  const counters: CounterAdd[] = [];
  if (r.verdict.error) {
    const kind = r.errorKind ?? "github";
    counters.push({ name: "arc_reaper_errors_total", labels: { kind } });
    counters.push({ name: "arc_reaper_cluster_errors_total", labels: { cluster: clusterOfResult(r), kind } });
  }
  if (r.heldFor === "cap") counters.push({ name: "arc_reaper_deletions_held_back_total" });
  return counters;
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
