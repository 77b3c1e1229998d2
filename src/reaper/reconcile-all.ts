// Reconcile over the runners a pass brings, oldest first (so the GitHub budget
// goes to the oldest), rows whose last ask failed after all others, then the
// ledger stores what came of each.
import type { Settings } from "../config/settings.ts";
import type { CallBudget } from "../github/call-budget.ts";
import type { Github } from "../github/github-client.ts";
import type { Policy } from "../model/policy.ts";
import { SlidingWindow } from "../model/window.ts";
import { clusterOf, deleteInItsCluster, type WatchedCluster } from "./look.ts";
import type { LedgerPort } from "./ports.ts";
import { shareRunReads } from "./recheck-runs.ts";
import { reconcile, type Caller, type ReconcileInput, type ReconcileContext, type Result } from "./reconcile.ts";

export interface PassDeps {
  ledger: LedgerPort;
  watched: readonly WatchedCluster[];
  github: Github | Error;
  budget: CallBudget;
  /** GitHub calls made in the last 60 s before this pass (the budget's limit is what they leave). */
  githubTimes: readonly number[];
  settings: Settings;
  /** The pass's one clock: max(the cron's scheduled time, Date.now()) at its start. */
  now: number;
  /** The real clock at the moment of a call (never earlier than `now`): the windows are stamped with it. */
  clock: () => number;
  /** Whether a cluster is retired as of `now` (agent mode with AGENT_CLUSTERS): its rows close as gone. */
  retired?: (cluster: string, now: number) => boolean;
  /** How a cluster is not watched now, or undefined when it is: its rows close after the history window (unwatched-rows.ts). */
  unwatched?: (cluster: string) => string | undefined;
}

/** Every runner's result of one reconcileAll, and how many of them it deleted. */
export interface ReconciledRunners {
  results: Result[];
  deleted: number;
}

export const policyOf = (s: Settings): Policy => ({ graceSeconds: s.graceSeconds, maxJobSeconds: s.maxJobSeconds, recheckSeconds: s.recheckSeconds });

export async function reconcileAll(items: ReconcileInput[], deps: PassDeps, by: Caller): Promise<ReconciledRunners> {
  const { ledger, settings, now, github, budget } = deps;
  if (items.length === 0) return { results: [], deleted: 0 };
  const deletions = ledger.deletions(deps.clock());
  const reapedUids = new Set<string>();
  // Rechecks grouped per run: one read of a run's jobs answers for all of them.
  const policy = policyOf(settings);
  const reads = shareRunReads(items, github, ledger, { readListed: settings.recheckListedRuns === "read", policy });
  // One context for the pass: every runner shares its windows and what was deleted in it.
  const ctx: ReconcileContext = {
    now,
    clock: deps.clock,
    policy,
    dryRun: settings.dryRun,
    paused: ledger.paused(),
    github: reads.github,
    githubFreeAt: () => {
      const at = deps.clock();
      return new SlidingWindow([...deps.githubTimes, ...Array<number>(budget.used).fill(at)], settings.maxGithubCallsPerMinute, at).freeAt(at);
    },
    deletions,
    deleteRunner: (runner, context) => deleteInItsCluster(deps.watched, runner, context),
    deleteErrorKind: (runner) => clusterOf(deps.watched, runner)?.cluster.errorKind ?? "cluster",
    learn: (facts, runner) => ledger.learn(facts, runner),
    listed: reads.listed,
    ...(reads.attemptJob ? { attemptJob: reads.attemptJob } : {}),
    reapedUids,
  };
  const results: Result[] = [];
  for (const item of oldestFirst(items, github, now)) results.push(await reconcile(item, ctx));
  ledger.saveDeletions(deletions);
  ledger.store(results, by, now);
  await reads.apply(results, now);
  return { results, deleted: reapedUids.size };
}

/**
 * Oldest first (a job's start, or a runner's creation); rows whose last ask failed, and repositories whose
 * installation could not be found, after all others: they must not eat the budget rechecks and unseen runners need.
 */
function oldestFirst(items: ReconcileInput[], github: Github | Error, now: number): ReconcileInput[] {
  // Keys computed once per item, and the installation memory read once per repository (the ledger's
  // SQL): a comparator that read it was O(n log n) statements, 2 s of CPU a sweep at 10,000 runners.
  const failedRepos = new Map<string, number>();
  const failed = (repo: string | undefined): number => {
    if (!repo || github instanceof Error) return 0;
    let f = failedRepos.get(repo);
    if (f === undefined) {
      f = github.cache.memory.installationFailedUntil(repo) > now ? 1 : 0;
      failedRepos.set(repo, f);
    }
    return f;
  };
  const keyed = items.map((i) => {
    const runner = i.view.kind === "found" ? i.view.runner : undefined;
    const askFailed = (i.record?.failures ?? i.unseen?.failures ?? 0) > 0 ? 1 : 0;
    return { i, failed: Math.max(askFailed, failed(i.record?.repo ?? runner?.jobRepositoryName)), age: i.record?.startedAt ?? runner?.createdAt ?? "" };
  });
  keyed.sort((a, b) => a.failed - b.failed || (a.age < b.age ? -1 : a.age > b.age ? 1 : 0));
  return keyed.map((k) => k.i);
}
