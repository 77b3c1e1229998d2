// In-memory fakes of the reaper's edges for plain-Node tests: the ledger port,
// a cluster (namespaces of EphemeralRunners, reads, lists, deletes by uid) and
// GitHub (jobs and runs, failing on demand, every call recorded).
import type { Cluster, DeleteOutcome } from "../../../src/cluster/ephemeral-runners.ts";
import { ClusterError } from "../../../src/cluster/ephemeral-runners.ts";
import type { Github } from "../../../src/github/github-client.ts";
import { newCallBudget, GithubBudgetExhausted, type CallBudget } from "../../../src/github/call-budget.ts";
import type { Settings } from "../../../src/config/settings.ts";
import type { Fact } from "../../../src/model/facts.ts";
import { dueAtOf } from "../../../src/model/next-look.ts";
import type { Policy } from "../../../src/model/policy.ts";
import type { ClusterRunner, DeletionWatch, RunnerRecord, UnseenRunner } from "../../../src/model/runner.ts";
import { verdictKey } from "../../../src/model/verdict.ts";
import { SlidingWindow } from "../../../src/model/window.ts";
import type { DeletionCheck } from "../../../src/reaper/check-deletion.ts";
import type { LedgerPort, Stored } from "../../../src/reaper/ports.ts";
import type { Caller, Result } from "../../../src/reaper/reconcile.ts";
import type { PassDeps } from "../../../src/reaper/reconcile-all.ts";
import { scheduleFromFacts } from "../../../src/reaper/schedule-facts.ts";

export const REPO = "octo/repo";

/** The ledger port over arrays: stores what reconcile answers, as the SQLite ledger does (simplified). */
export class FakeLedger implements LedgerPort {
  records: RunnerRecord[] = [];
  unseenRows: UnseenRunner[] = [];
  deletionTimes: number[] = [];
  isPaused = false;
  /** Runners ARC marked Failed: not tracked unless a test sets a port. */
  failed?: LedgerPort["failed"];
  /** No delivery received, none remembered: a redelivery lists and asks, and keeps nothing. */
  redeliveries: LedgerPort["redeliveries"] = { received: () => false, get: () => undefined, put: () => undefined, pending: () => [] };
  readonly policy: Policy;
  readonly cap: number;
  clock: () => number;
  constructor(policy: Policy, cap: number, clock: () => number) {
    this.policy = policy;
    this.cap = cap;
    this.clock = clock;
  }

  openRunners(): RunnerRecord[] {
    return this.records.filter((r) => r.state === "running" || r.state === "finished").map((r) => ({ ...r }));
  }
  dueRunners(now: number, limit: number): RunnerRecord[] {
    return this.openRunners()
      .filter((r) => r.dueAt !== null && r.dueAt <= now)
      .sort((a, b) => a.dueAt! - b.dueAt!)
      .slice(0, limit);
  }
  unseen(): UnseenRunner[] {
    return this.unseenRows.map((u) => ({ ...u }));
  }
  dueUnseen(now: number, limit: number): UnseenRunner[] {
    return this.unseen()
      .filter((u) => u.dueAt !== null && u.dueAt <= now)
      .slice(0, limit);
  }
  /** Facts from a webhook or GitHub: a row per (runner, job), its next look from the facts. */
  record(facts: readonly Fact[], now: number): void {
    for (const f of facts) {
      if (f.type === "run-completed") {
        for (const r of this.records)
          if (r.repo === f.repo && r.runId === f.runId && (r.state === "running" || r.state === "finished") && !r.runCompleted)
            this.save(r, { ...r, runCompleted: { at: f.updatedAt, conclusion: f.conclusion, attempt: f.runAttempt } }, now);
        continue;
      }
      this.unseenRows = this.unseenRows.filter((u) => u.name !== f.runner);
      const existing = this.records.find((r) => r.runner === f.runner && r.jobId === f.jobId);
      const base: RunnerRecord = existing ?? {
        runner: f.runner,
        repo: f.repo,
        runId: f.runId,
        runAttempt: f.runAttempt,
        jobId: f.jobId,
        state: "running",
        reason: "",
        dueAt: null,
        story: [],
      };
      const next: RunnerRecord = { ...base, startedAt: base.startedAt ?? f.startedAt };
      if (f.type === "job-completed" && !base.jobCompleted) next.jobCompleted = { at: f.completedAt, conclusion: f.conclusion };
      if (existing && next.startedAt === existing.startedAt && next.jobCompleted === existing.jobCompleted) continue; // known: nothing written
      if (next.jobCompleted) next.state = "finished";
      this.save(existing, next, now);
    }
  }
  private save(existing: RunnerRecord | undefined, next: RunnerRecord, now: number): void {
    if (existing?.state === "reaped" || existing?.state === "gone") return;
    const planned = scheduleFromFacts(next, now, this.policy);
    const row = { ...next, dueAt: dueAtOf(planned.next), factAt: now, id: existing?.id ?? this.records.length + 1 };
    delete row.heldFor;
    this.records = [...this.records.filter((r) => r !== existing), row];
  }
  learn(facts: Fact[], _runner?: ClusterRunner): RunnerRecord | undefined {
    const job = facts.find((f) => f.type === "job-started" || f.type === "job-completed");
    if (!job) return undefined;
    this.record(facts, this.clock());
    return this.records.find((r) => r.runner === job.runner && r.jobId === job.jobId);
  }
  store(results: readonly Result[], _by: Caller, now: number): Stored {
    for (const r of results) {
      if (r.record) {
        const i = this.records.findIndex((x) => x.runner === r.record!.runner && x.jobId === r.record!.jobId);
        const cur = this.records[i];
        if (!cur || (cur.state !== "running" && cur.state !== "finished")) continue;
        // Facts that came in while it was judged stand (as the SQLite ledger's conditional write).
        if (!r.close && (cur.jobCompleted?.at !== r.record.jobCompleted?.at || cur.runCompleted?.at !== r.record.runCompleted?.at)) continue;
        const identity = { uid: cur.uid ?? r.identity?.uid, namespace: cur.namespace ?? r.identity?.namespace, cluster: cur.cluster ?? r.identity?.cluster };
        this.records[i] = r.close
          ? { ...cur, ...identity, state: r.close, reason: r.verdict.reason, dueAt: null, failures: 0, heldFor: undefined, pruneAt: now + 86_400_000 }
          : {
              ...cur,
              ...identity,
              verdict: r.verdict.verdict,
              reason: r.verdict.reason,
              verdictKey: verdictKey(r.verdict),
              dueAt: dueAtOf(r.next),
              failures: r.failures,
              heldFor: r.heldFor,
              checkedAt: r.asked ? now : cur.checkedAt,
            };
        if (r.unseen) this.unseenRows = this.unseenRows.filter((u) => !(u.name === r.unseen!.name && u.uid === r.unseen!.uid));
      } else if (r.unseen) {
        this.unseenRows = this.unseenRows.filter((u) => !(u.name === r.unseen!.name && u.uid === r.unseen!.uid));
        if (!r.close) this.unseenRows.push({ ...r.unseen, reason: r.verdict.reason, dueAt: dueAtOf(r.next), failures: r.failures, heldFor: r.heldFor });
      }
    }
    return { logged: 0 };
  }
  deletions(now: number): SlidingWindow {
    return new SlidingWindow(this.deletionTimes, this.cap, now);
  }
  saveDeletions(window: SlidingWindow): void {
    this.deletionTimes = window.toJSON();
  }
  /** Our deletions watched, and each check stored for one (with who looked). */
  watches: DeletionWatch[] = [];
  checks: { w: DeletionWatch; check: DeletionCheck; now: number; by: Caller }[] = [];
  deletionWatches(): DeletionWatch[] {
    return this.watches.map((w) => ({ ...w }));
  }
  dueDeletions(now: number, limit: number): DeletionWatch[] {
    return this.deletionWatches()
      .filter((w) => w.dueAt <= now)
      .slice(0, limit);
  }
  storeDeletionCheck(w: DeletionWatch, check: DeletionCheck, now: number, by: Caller): void {
    this.checks.push({ w, check, now, by });
  }
  paused(): boolean {
    return this.isPaused;
  }
  deliveriesMark() {
    return { listedUntil: 0 };
  }
  setDeliveriesMark(): void {}
}

/** EphemeralRunners by namespace; a namespace may be made unreadable; every delete is recorded with the clock. */
export class FakeCluster implements Cluster {
  objects = new Map<string, ClusterRunner[]>();
  unreadable = new Set<string>();
  deleted: { runner: ClusterRunner; at: number }[] = [];
  reads = 0;
  clock: () => number;
  readonly onDelete?: (runner: ClusterRunner) => void;
  constructor(clock: () => number, onDelete?: (runner: ClusterRunner) => void) {
    this.clock = clock;
    this.onDelete = onDelete;
  }

  put(runner: ClusterRunner): void {
    const list = (this.objects.get(runner.namespace) ?? []).filter((r) => r.name !== runner.name);
    this.objects.set(runner.namespace, [...list, runner]);
  }
  remove(namespace: string, name: string): void {
    this.objects.set(
      namespace,
      (this.objects.get(namespace) ?? []).filter((r) => r.name !== name),
    );
  }
  async listRunners(namespace: string): Promise<ClusterRunner[]> {
    if (this.unreadable.has(namespace)) throw new ClusterError(503, `namespace ${namespace} cannot be read`);
    return (this.objects.get(namespace) ?? []).map((r) => ({ ...r }));
  }
  async readRunner(namespace: string, name: string): Promise<ClusterRunner | undefined> {
    this.reads++;
    if (this.unreadable.has(namespace)) throw new ClusterError(503, `namespace ${namespace} cannot be read`);
    const r = (this.objects.get(namespace) ?? []).find((o) => o.name === name);
    return r && { ...r };
  }
  async deleteRunner(runner: Pick<ClusterRunner, "namespace" | "name" | "uid">): Promise<DeleteOutcome> {
    const there = (this.objects.get(runner.namespace) ?? []).find((o) => o.name === runner.name && o.uid === runner.uid);
    if (!there) return { kind: "gone" };
    this.onDelete?.(there);
    this.deleted.push({ runner: there, at: this.clock() });
    this.remove(runner.namespace, runner.name);
    return { kind: "deleted" };
  }
}

export interface FakeJob {
  id: number;
  runId: number;
  runner: string;
  status: "in_progress" | "completed";
  startedAt: string;
  completedAt: string | null;
  /** GitHub answers 404 for it (its run deleted). */
  missing?: boolean;
}

/** GitHub's REST API as reconcile uses it; `failing` makes every call throw; every call is recorded. */
export class FakeGithub {
  jobs = new Map<number, FakeJob>();
  failing = false;
  calls: { what: string; at: number }[] = [];
  clock: () => number;
  budget: CallBudget;
  constructor(clock: () => number, budget: CallBudget = newCallBudget(1000)) {
    this.clock = clock;
    this.budget = budget;
  }

  private call(what: string): void {
    if (this.budget.used >= this.budget.limit) throw new GithubBudgetExhausted(`the budget of ${this.budget.limit} GitHub calls is spent`);
    this.budget.used++;
    this.calls.push({ what, at: this.clock() });
    if (this.failing) throw new Error("GitHub answered 502");
  }
  asGithub(): Github {
    const self = this;
    const api = {
      cache: { memory: { installationFailedUntil: () => 0 } },
      async installationFor() {
        return 1;
      },
      async job(_repo: string, id: number) {
        self.call(`job ${id}`);
        const j = self.jobs.get(id);
        if (!j || j.missing) throw new Error(`HTTP 404: job ${id} not found`);
        return { status: j.status, conclusion: j.status === "completed" ? "success" : null, completedAt: j.completedAt, names: undefined };
      },
      async run(_repo: string, runId: number) {
        self.call(`run ${runId}`);
        const jobs = [...self.jobs.values()].filter((j) => j.runId === runId);
        if (jobs.length === 0 || jobs.some((j) => j.missing)) throw new Error(`HTTP 404: run ${runId} not found`);
        const done = jobs.every((j) => j.status === "completed");
        const last =
          jobs
            .map((j) => j.completedAt ?? "")
            .sort()
            .at(-1) ?? "";
        return { status: done ? "completed" : "in_progress", conclusion: done ? "success" : null, runAttempt: 1, updatedAt: last, names: undefined };
      },
      // No failed delivery to redeliver (not a runner call: not counted).
      async deliveriesSince() {
        return { deliveries: [], complete: true };
      },
      async redeliver() {},
      async inProgressRunsPage(_repo: string, _installationId: number, page: number) {
        self.call(`runs in progress, page ${page}`);
        const running = new Set([...self.jobs.values()].filter((j) => j.status === "in_progress" && !j.missing).map((j) => j.runId));
        return { runs: [...running].map((id) => ({ id, runAttempt: 1, status: "in_progress" })), last: true };
      },
      async attemptJobsPage(_repo: string, runId: number, attempt: number) {
        self.call(`jobs of run ${runId} attempt ${attempt}`);
        const jobs = [...self.jobs.values()].filter((j) => j.runId === runId && !j.missing);
        const shown = jobs.map((j) => ({
          id: j.id,
          runId,
          runAttempt: attempt,
          status: j.status,
          conclusion: j.status === "completed" ? "success" : null,
          startedAt: j.startedAt,
          completedAt: j.completedAt,
          runnerName: j.runner,
        }));
        return { jobs: shown, last: true };
      },
      async runnerJob(_repo: string, runId: number, runner: string) {
        self.call(`jobs of run ${runId}`);
        const j = [...self.jobs.values()].find((x) => x.runId === runId && x.runner === runner);
        return (
          j && {
            id: j.id,
            runAttempt: 1,
            status: j.status,
            conclusion: j.status === "completed" ? "success" : null,
            startedAt: j.startedAt,
            completedAt: j.completedAt,
            names: undefined,
          }
        );
      },
    };
    return api as unknown as Github;
  }
}

export const policy: Policy = { graceSeconds: 300, maxJobSeconds: 432_000, recheckSeconds: 3600 };

function settingsFor(p: Policy, cap: number, budget: number): Settings {
  return {
    graceSeconds: p.graceSeconds,
    maxJobSeconds: p.maxJobSeconds,
    recheckSeconds: p.recheckSeconds,
    recheckListedRuns: "read",
    dryRun: false,
    maxDeletionsPerMinute: cap,
    maxGithubCallsPerMinute: budget,
    redeliveryLookbackSeconds: 0,
    deliveriesEverySeconds: 300,
  } as unknown as Settings;
}

/** The deps of one pass over the fakes, with the GitHub window as the ledger keeps it. */
export function passDeps(o: {
  ledger: FakeLedger;
  cluster: FakeCluster;
  github: FakeGithub;
  namespaces: string[];
  now: number;
  clock: () => number;
  cap: number;
  budget: number;
  githubTimes: number[];
}): PassDeps {
  const times = new SlidingWindow(o.githubTimes, o.budget, o.clock()).toJSON();
  o.github.budget = newCallBudget(Math.max(0, o.budget - times.length));
  return {
    ledger: o.ledger,
    watched: [{ name: "default", cluster: o.cluster, namespaces: o.namespaces }],
    github: o.github.asGithub(),
    budget: o.github.budget,
    githubTimes: times,
    settings: settingsFor(policy, o.cap, o.budget),
    now: o.now,
    clock: o.clock,
  };
}

/** The unit tests' usual busy runner: r-1 in arc-a on run 7 of REPO, created long before `now`. */
export const busyRunner = (now: number, over: Partial<ClusterRunner> = {}): ClusterRunner => ({
  cluster: "default",
  namespace: "arc-a",
  name: "r-1",
  uid: "u-1",
  workflowRunId: 7,
  jobRepositoryName: REPO,
  createdAt: new Date(now - 600_000_000).toISOString(),
  ...over,
});

/** A busy or idle EphemeralRunner as ARC writes it. */
export function object(o: { name: string; namespace: string; uid: string; runId?: number; createdAt: number }): ClusterRunner {
  const r: ClusterRunner = { name: o.name, namespace: o.namespace, uid: o.uid, createdAt: new Date(o.createdAt).toISOString(), cluster: "default" };
  if (o.runId !== undefined) {
    r.workflowRunId = o.runId;
    r.jobRepositoryName = REPO;
  }
  return r;
}
