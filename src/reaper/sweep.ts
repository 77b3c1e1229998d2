// One sweep: level-triggered. It reads every fact (one KV list pass) and every
// EphemeralRunner (one list per namespace), judges each runner, asks GitHub
// only about runners past the bound or without facts (oldest first, within the
// budget), then deletes what the judge condemned, at most the cap.
import type { Cluster } from "../cluster/ephemeral-runners.ts";
import type { Settings } from "../config/settings.ts";
import type { Github } from "../github/github-client.ts";
import { GithubBudgetExhausted, GithubRateLimited, type CallBudget } from "../github/call-budget.ts";
import { factTtlSeconds } from "../store/fact-ttl.ts";
import type { Fact } from "../store/facts.ts";
import { listRecords, newKvCounter, writeFact, type FactsKV, type KvCounter } from "../store/kv-facts.ts";
import { summaryWorthWriting, writeSweepSummary, type SweepSummary } from "../store/sweep-summary.ts";
import { judge, type ClusterRunner, type ClusterView, type GithubWord, type Policy, type Verdict } from "./judge.ts";
import { learnFromGithub } from "./learn-from-github.ts";
import { redeliverFailed, type RedeliveryReport } from "./redeliver-failed.ts";
import { trackedRunners, type TrackedRunner } from "./tracked-runners.ts";

/** Per isolate, across sweeps. */
export interface SweepMemory {
  /** When a busy runner without facts was first seen (ms), by name and run. */
  busyWithoutFacts: Map<string, number>;
}

export const newSweepMemory = (): SweepMemory => ({ busyWithoutFacts: new Map() });

// A runner's in_progress webhook arrives seconds after ARC marks it busy: give it
// this long before spending GitHub calls on a runner no webhook told us about.
export const RECONCILE_SETTLE_MS = 3 * 60_000;

export interface SweepDeps {
  kv: FactsKV;
  cluster: Cluster;
  /** Builds the GitHub client; it throws when the App's settings cannot make one (e.g. the key). */
  github: () => Github;
  budget: CallBudget;
  settings: Settings;
  memory: SweepMemory;
  now: number;
  log: (fields: Record<string, unknown>) => void;
  /** Requests sent to the API server so far, for the summary line. */
  clusterCalls?: () => number;
}

export interface Decision {
  runner: string;
  namespace: string | null;
  repository: string | null;
  run: number | null;
  job: number | null;
  verdict: Verdict["verdict"];
  reason: string;
  error?: boolean;
}

/** The JSON line each runner's decision is logged as. */
export type DecisionLine = Decision & { msg: "decision" };

/** The JSON summary line a sweep logs when it ends: the report's counts plus its costs. */
export type SweepLine = { msg: "sweep" } & Pick<
  SweepReport,
  "checked" | "deleted" | "kept" | "waiting" | "gone" | "errors" | "errorsByKind" | "dryRun" | "githubCalls" | "redelivery"
> & { clusterCalls: number | null; kvLists: number; kvPuts: number; kvGets: number; durationMs: number };

export interface SweepReport {
  checked: number;
  deleted: number;
  kept: number;
  waiting: number;
  gone: number;
  errors: number;
  errorsByKind: Record<string, number>;
  dryRun: boolean;
  kv: KvCounter;
  githubCalls: number;
  redelivery: RedeliveryReport | { error: string };
  decisions: Decision[];
}

interface Case {
  name: string;
  tracked?: TrackedRunner;
  cluster: ClusterView;
  verdict: Verdict;
  /** Where an error verdict came from, for the metrics. */
  errorKind?: "cluster" | "github";
}

export async function sweep(deps: SweepDeps): Promise<SweepReport> {
  const { settings, now } = deps;
  const wallStart = Date.now(); // now may be a simulated time; the duration is real
  const policy = { graceSeconds: settings.graceSeconds, maxJobSeconds: settings.maxJobSeconds };
  const kvCounter = newKvCounter();
  const ttl = factTtlSeconds(settings);
  const record = (fact: Fact) => writeFact(deps.kv, fact, ttl, kvCounter);

  // One client a sweep, or the reason there is none: both redelivery and the asks need it.
  let github: Github | Error;
  try {
    github = deps.github();
  } catch (e) {
    github = e instanceof Error ? e : new Error(String(e));
  }

  const { facts, lastSweep } = await listRecords(deps.kv, kvCounter);
  const { byName, listErrors } = await readCluster(deps.cluster, settings.namespaces);
  const cases = judgeAll(trackedRunners(facts), byName, listErrors, deps.memory, now, policy);

  // Redelivery first, but never with more than half the budget: runner checks need the rest.
  let redelivery: SweepReport["redelivery"];
  try {
    if (github instanceof Error) throw github;
    redelivery = await redeliverFailed({
      github,
      facts,
      record,
      now,
      lookbackSeconds: settings.redeliveryLookbackSeconds,
      maxCallsUsed: () => deps.budget.used >= Math.floor(deps.budget.limit / 2),
    });
  } catch (e) {
    redelivery = { error: (e as Error).message };
  }
  await askGithub(deps, github, cases, record, policy);
  const deleted = await reap(deps, cases, record);
  for (const c of cases) {
    if (c.verdict.verdict === "gone" && c.tracked) {
      await record({ type: "runner-closed", runner: c.name, jobId: c.tracked.jobId, outcome: "gone", at: new Date(now).toISOString(), reason: c.verdict.reason });
    }
  }

  const decisions = cases.map(decisionOf);
  for (const d of decisions) deps.log({ msg: "decision", ...d } satisfies DecisionLine);
  const errorsByKind = {
    cluster: listErrors.length + cases.filter((c) => c.verdict.error && c.errorKind === "cluster").length,
    github: cases.filter((c) => c.verdict.error && c.errorKind !== "cluster").length,
    redelivery: "error" in redelivery ? 1 : redelivery.failed.length,
  };
  const count = (...verdicts: Verdict["verdict"][]) => cases.filter((c) => verdicts.includes(c.verdict.verdict)).length;
  const report: SweepReport = {
    checked: cases.length,
    deleted,
    // A delete verdict still standing after reap() is one that succeeded; the rest were kept.
    kept: count("keep", "delete") - deleted,
    waiting: count("wait"),
    gone: count("gone"),
    errors: errorsByKind.cluster + errorsByKind.github + errorsByKind.redelivery,
    errorsByKind,
    dryRun: settings.dryRun,
    kv: kvCounter,
    githubCalls: deps.budget.used,
    redelivery,
    decisions,
  };
  const summary: SweepSummary = {
    type: "sweep-summary",
    at: new Date(now).toISOString(),
    durationMs: Date.now() - wallStart,
    checked: report.checked,
    deleted: report.deleted,
    kept: report.kept,
    waiting: report.waiting,
    gone: report.gone,
    errors: errorsByKind,
    githubCalls: deps.budget.used,
    rateLimitRemaining: deps.budget.rateLimitRemaining,
    dryRun: settings.dryRun,
  };
  if (summaryWorthWriting(summary, lastSweep)) await writeSweepSummary(deps.kv, summary, kvCounter);
  deps.log({
    msg: "sweep",
    checked: report.checked,
    deleted: report.deleted,
    kept: report.kept,
    waiting: report.waiting,
    gone: report.gone,
    errors: report.errors,
    errorsByKind,
    dryRun: report.dryRun,
    githubCalls: report.githubCalls,
    clusterCalls: deps.clusterCalls?.() ?? null,
    kvLists: kvCounter.lists,
    kvPuts: kvCounter.puts,
    kvGets: kvCounter.gets,
    durationMs: summary.durationMs,
    redelivery,
  } satisfies SweepLine);
  return report;
}

/** The first verdict for every runner with open facts and every runner in the cluster. */
function judgeAll(
  tracked: TrackedRunner[],
  byName: Map<string, ClusterRunner[]>,
  listErrors: string[],
  memory: SweepMemory,
  now: number,
  policy: Policy,
): Case[] {
  const viewOf = (name: string): ClusterView => {
    const found = byName.get(name) ?? [];
    if (found.length === 1) return { kind: "found", runner: found[0]! };
    if (found.length > 1) return { kind: "unknown", why: `a runner named ${name} is in several namespaces` };
    if (listErrors.length > 0) return { kind: "unknown", why: listErrors.join("; ") };
    return { kind: "missing" };
  };
  const cases: Case[] = tracked
    .filter((t) => !t.closed)
    .map((t) => {
      const cluster = viewOf(t.runner);
      return { name: t.runner, tracked: t, cluster, verdict: judge({ tracked: t, cluster, now, policy }), errorKind: cluster.kind === "unknown" ? "cluster" : undefined };
    });

  // Runners no webhook told us about: idle ones cost nothing; busy ones are asked
  // about (in askGithub) once they stayed busy without facts for the settle time.
  const known = new Set(tracked.map((t) => t.runner));
  const stillBusy = new Map<string, number>();
  for (const name of byName.keys()) {
    if (known.has(name)) continue;
    const cluster = viewOf(name);
    let verdict = judge({ cluster, now, policy });
    if (verdict.askGithub && cluster.kind === "found") {
      const key = `${name}#${cluster.runner.workflowRunId}`;
      const since = memory.busyWithoutFacts.get(key) ?? now;
      stillBusy.set(key, since);
      if (now - since < RECONCILE_SETTLE_MS) {
        verdict = { verdict: "keep", reason: `runner works on run ${cluster.runner.workflowRunId} and no webhook told us about it yet: waiting ${RECONCILE_SETTLE_MS / 1000}s for one before asking GitHub` };
      }
    }
    cases.push({ name, cluster, verdict });
  }
  memory.busyWithoutFacts = stillBusy;
  return cases;
}

async function readCluster(cluster: Cluster, namespaces: string[]) {
  const byName = new Map<string, ClusterRunner[]>();
  const listErrors: string[] = [];
  await Promise.all(
    namespaces.map(async (ns) => {
      try {
        for (const runner of await cluster.listRunners(ns)) {
          byName.set(runner.name, [...(byName.get(runner.name) ?? []), runner]);
        }
      } catch (e) {
        listErrors.push((e as Error).message);
      }
    }),
  );
  return { byName, listErrors };
}

async function askGithub(deps: SweepDeps, github: Github | Error, cases: Case[], record: (f: Fact) => Promise<void>, policy: Policy) {
  const asks = cases.filter((c) => c.verdict.askGithub).sort((a, b) => ageKey(a).localeCompare(ageKey(b)));
  if (github instanceof Error) {
    for (const c of asks) c.verdict = { verdict: "keep", reason: `cannot ask GitHub: ${github.message}`, error: true };
    return;
  }
  let stopped: string | undefined;
  for (const c of asks) {
    if (stopped) {
      c.verdict = { verdict: "keep", reason: `${c.verdict.reason.replace(/: asking GitHub$/, "")}: not asked this sweep (${stopped})` };
      continue;
    }
    try {
      if (c.tracked) {
        const installation = c.tracked.installationId ?? (await github.installationFor(c.tracked.repo));
        const job = await github.job(c.tracked.repo, c.tracked.jobId, installation);
        const word: GithubWord = { kind: "job", status: job.status, conclusion: job.conclusion, completedAt: job.completedAt };
        c.verdict = judge({ tracked: c.tracked, cluster: c.cluster, github: word, now: deps.now, policy });
      } else if (c.cluster.kind === "found") {
        const learned = await learnFromGithub(github, c.cluster.runner);
        if (learned.kind === "unknown") {
          c.verdict = { verdict: "keep", reason: learned.why };
          continue;
        }
        for (const fact of learned.facts) await record(fact);
        c.tracked = learned.tracked;
        c.verdict = judge({ tracked: c.tracked, cluster: c.cluster, now: deps.now, policy });
        // Learned from GitHub just now: an over-the-bound job was confirmed running by this very read.
        if (c.verdict.askGithub && learned.job) {
          const word: GithubWord = { kind: "job", status: learned.job.status, conclusion: learned.job.conclusion, completedAt: learned.job.completedAt };
          c.verdict = judge({ tracked: c.tracked, cluster: c.cluster, github: word, now: deps.now, policy });
        }
      }
    } catch (e) {
      if (e instanceof GithubBudgetExhausted || e instanceof GithubRateLimited) {
        stopped = e.message;
        c.verdict = { verdict: "keep", reason: `${c.verdict.reason.replace(/: asking GitHub$/, "")}: not asked this sweep (${stopped})` };
        continue;
      }
      c.verdict = { verdict: "keep", reason: `GitHub could not be read, kept: ${(e as Error).message}`, error: true };
    }
  }
}

// Oldest first: a job's start, or a runner's creation when no facts exist.
function ageKey(c: Case): string {
  return c.tracked?.startedAt ?? (c.cluster.kind === "found" ? (c.cluster.runner.createdAt ?? "") : "");
}

async function reap(deps: SweepDeps, cases: Case[], record: (f: Fact) => Promise<void>): Promise<number> {
  const condemned = cases.filter((c) => c.verdict.verdict === "delete");
  let deleted = 0;
  let attempted = 0;
  for (const c of condemned) {
    if (c.cluster.kind !== "found") continue; // the judge never condemns what it cannot see
    const runner = c.cluster.runner;
    if (deps.settings.dryRun) {
      c.verdict = { verdict: "keep", reason: `dry run: would delete: ${c.verdict.reason}` };
      continue;
    }
    if (attempted >= deps.settings.maxDeletionsPerSweep) {
      c.verdict = { verdict: "keep", reason: `deletion cap of ${deps.settings.maxDeletionsPerSweep} reached this sweep, next sweep: ${c.verdict.reason}` };
      continue;
    }
    attempted++;
    const outcome = await deps.cluster.deleteRunner(runner);
    const at = new Date(deps.now).toISOString();
    const jobId = c.tracked?.jobId ?? 0;
    if (outcome.kind === "deleted") {
      deleted++;
      await record({ type: "runner-closed", runner: c.name, jobId, outcome: "reaped", at, reason: c.verdict.reason, cause: c.verdict.cause, namespace: runner.namespace });
    } else if (outcome.kind === "gone") {
      c.verdict = { verdict: "gone", reason: `runner ${c.name} was already gone from ${runner.namespace} (404)` };
    } else {
      c.verdict = { verdict: "keep", reason: `delete failed, retry next sweep: ${outcome.why}`, error: true };
      c.errorKind = "cluster";
    }
  }
  return deleted;
}

function decisionOf(c: Case): Decision {
  const runner = c.cluster.kind === "found" ? c.cluster.runner : undefined;
  const d: Decision = {
    runner: c.name,
    namespace: runner?.namespace ?? null,
    repository: c.tracked?.repo ?? runner?.jobRepositoryName ?? null,
    run: c.tracked?.runId ?? runner?.workflowRunId ?? null,
    job: c.tracked?.jobId ?? null,
    verdict: c.verdict.verdict,
    reason: c.verdict.reason,
  };
  if (c.verdict.error) d.error = true;
  return d;
}
