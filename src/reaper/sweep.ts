// The sweep: the level-triggered net, once a minute. It lists every
// EphemeralRunner (one list per namespace) and reads the ledger's open runners
// only, judges them with the same step as the alarm, asks about busy runners
// nobody told us about (after a wait for their webhook), redelivers failed
// deliveries now and then, and deletes what the judge condemned.
import type { Cluster } from "../cluster/ephemeral-runners.ts";
import type { Settings } from "../config/settings.ts";
import type { CallBudget } from "../github/call-budget.ts";
import type { Github } from "../github/github-client.ts";
import type { RunnerRecord } from "../ledger/runner-record.ts";
import type { UnseenRunner } from "../ledger/unseen-table.ts";
import { judge, type ClusterRunner, type ClusterView, type Policy, type Verdict } from "./judge.ts";
import { judgeAndAct, type Case, type ErrorKind } from "./judge-and-act.ts";
import type { Caller, LedgerPort } from "./ledger-port.ts";
import { redeliverFailed, type RedeliveryReport } from "./redeliver-failed.ts";

// A runner's in_progress webhook arrives seconds after ARC marks it busy: give it
// this long before spending GitHub calls on a runner no webhook told us about.
export const RECONCILE_SETTLE_MS = 3 * 60_000;
/** A busy runner GitHub could not place is asked about again after this long. */
export const UNSEEN_RETRY_MS = 10 * 60_000;

export interface SweepDeps {
  ledger: LedgerPort;
  cluster: Cluster;
  github: Github | Error;
  budget: CallBudget;
  settings: Settings;
  now: number;
  log: (fields: Record<string, unknown>) => void;
}

export interface SweepReport {
  checked: number;
  deleted: number;
  kept: number;
  waiting: number;
  gone: number;
  heldBack: number;
  errors: number;
  errorsByKind: Record<string, number>;
  dryRun: boolean;
  paused: boolean;
  githubCalls: number;
  redelivery: RedeliveryReport | { error: string };
}

export const policyOf = (s: Settings): Policy => ({ graceSeconds: s.graceSeconds, maxJobSeconds: s.maxJobSeconds, recheckSeconds: s.recheckSeconds });

export async function sweep(deps: SweepDeps): Promise<SweepReport> {
  const { settings, now, ledger } = deps;
  const policy = policyOf(settings);
  const { byName, listErrors } = await listCluster(deps.cluster, settings.namespaces);
  // Through the agent, a view that could not be had is the agent's error, not the API server's.
  const clusterKind = deps.cluster.errorKind ?? "cluster";
  const cases = sweepCases(ledger.openRunners(), ledger.unseen(), byName, listErrors, now, policy, clusterKind);
  if (listErrors.length === 0) {
    const busy = new Set([...byName.values()].flat().filter((r) => r.workflowRunId !== undefined).map((r) => `${r.name}#${r.uid}`));
    ledger.forgetUnseen((u) => busy.has(`${u.name}#${u.uid}`));
  }

  const redelivery = await redeliverIfDue(deps);
  const paused = ledger.paused();
  const deleted = await judgeActAndRecord(cases, deps, "sweep");

  const count = (v: Verdict["verdict"]) => cases.filter((c) => c.verdict.verdict === v && !c.reaped).length;
  const errorsByKind: Record<string, number> = { cluster: 0, github: 0, redelivery: "error" in redelivery ? 1 : redelivery.failed.length };
  errorsByKind[clusterKind] = listErrors.length;
  for (const c of cases) if (c.verdict.error) errorsByKind[c.errorKind ?? "github"] = (errorsByKind[c.errorKind ?? "github"] ?? 0) + 1;
  const errors = Object.values(errorsByKind).reduce((a, b) => a + b, 0);
  return {
    checked: cases.length,
    deleted,
    kept: count("keep") + count("delete"),
    waiting: count("wait"),
    gone: count("gone"),
    heldBack: cases.filter((c) => c.heldBack).length,
    errors,
    errorsByKind,
    dryRun: settings.dryRun,
    paused,
    githubCalls: deps.budget.used,
    redelivery,
  };
}

/** The one step both callers share: judge and act on the cases, then record what came of them in the ledger. */
export async function judgeActAndRecord(cases: Case[], deps: Omit<SweepDeps, "log">, by: Caller): Promise<number> {
  const { ledger, settings, now } = deps;
  const deleted = await judgeAndAct(cases, {
    cluster: deps.cluster,
    github: deps.github,
    policy: policyOf(settings),
    now,
    dryRun: settings.dryRun,
    paused: ledger.paused(),
    maxDeletions: settings.maxDeletionsPerSweep,
    deletionsLeft: ledger.deletionsLeft(now),
    learn: (facts, runner) => ledger.learn(facts, now, runner),
  });
  ledger.spendDeletions(now, deleted);
  ledger.apply(cases, by, now);
  return deleted;
}

/** Every open runner, plus every busy runner in the cluster that no open runner accounts for. */
export function sweepCases(
  open: RunnerRecord[],
  unseen: UnseenRunner[],
  byName: Map<string, ClusterRunner[]>,
  listErrors: string[],
  now: number,
  policy: Policy,
  clusterErrorKind: ErrorKind = "cluster",
): Case[] {
  const viewOf = (name: string): ClusterView => {
    const found = byName.get(name) ?? [];
    if (found.length === 1) return { kind: "found", runner: found[0]! };
    if (found.length > 1) return { kind: "unknown", why: `a runner named ${name} is in several namespaces` };
    if (listErrors.length > 0) return { kind: "unknown", why: listErrors.join("; ") };
    return { kind: "missing" };
  };
  const cases: Case[] = [];
  const accounted = new Set<string>();
  for (const record of open) {
    const cluster = viewOf(record.runner);
    const verdict = judge({ tracked: record, cluster, now, policy });
    cases.push({ name: record.runner, record, cluster, verdict, errorKind: cluster.kind === "unknown" ? clusterErrorKind : undefined });
    // A replaced runner's facts close as gone; the object of that name is judged on its own below.
    if (!(verdict.verdict === "gone" && cluster.kind === "found")) accounted.add(record.runner);
  }
  const remembered = new Map(unseen.map((u) => [`${u.name}#${u.uid}`, u]));
  for (const [name, found] of byName) {
    if (accounted.has(name) || found.length !== 1) continue;
    const runner = found[0]!;
    const cluster: ClusterView = { kind: "found", runner };
    const verdict = judge({ cluster, now, policy });
    if (!verdict.askGithub) continue; // idle or being deleted: nothing to do, nothing to log
    cases.push(unseenCase(runner, remembered.get(`${name}#${runner.uid}`), verdict, now));
  }
  return cases;
}

/** A busy runner without facts: asked about once the wait for its webhook is over, then after a back-off. */
export function unseenCase(runner: ClusterRunner, known: UnseenRunner | undefined, verdict: Verdict, now: number): Case {
  const unseen: UnseenRunner = known ?? {
    name: runner.name,
    uid: runner.uid,
    namespace: runner.namespace,
    runId: runner.workflowRunId ?? 0,
    repo: runner.jobRepositoryName ?? null,
    firstSeen: now,
    dueAt: now + RECONCILE_SETTLE_MS,
    reason: "",
  };
  const cluster: ClusterView = { kind: "found", runner };
  if (now - unseen.firstSeen < RECONCILE_SETTLE_MS) {
    const reason = `runner works on run ${runner.workflowRunId} and no webhook told us about it yet: waiting ${RECONCILE_SETTLE_MS / 1000}s for one before asking GitHub`;
    return { name: runner.name, unseen, cluster, verdict: { verdict: "keep", reason } };
  }
  if (unseen.dueAt !== null && unseen.dueAt > now) {
    return { name: runner.name, unseen, cluster, verdict: { verdict: "keep", reason: unseen.reason || verdict.reason } };
  }
  return { name: runner.name, unseen, cluster, verdict };
}

async function redeliverIfDue(deps: SweepDeps): Promise<RedeliveryReport | { error: string }> {
  const { ledger, settings, now, github, budget } = deps;
  if (github instanceof Error) return { error: github.message };
  try {
    const result = await redeliverFailed({
      github,
      store: ledger.redeliveries,
      mark: ledger.deliveriesMark(),
      now,
      lookbackSeconds: settings.redeliveryLookbackSeconds,
      everySeconds: settings.deliveriesEverySeconds,
      // Never more than half the budget: runner checks need the rest.
      maxCallsUsed: () => budget.used >= Math.floor(budget.limit / 2),
    });
    ledger.setDeliveriesMark(result.mark);
    return result.report;
  } catch (e) {
    return { error: (e as Error).message };
  }
}

async function listCluster(cluster: Cluster, namespaces: string[]) {
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
