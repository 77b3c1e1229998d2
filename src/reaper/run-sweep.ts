// Wires one sweep to the real edges: Workers KV, the cluster through
// client-node, GitHub through @octokit/app. Per-isolate caches are passed in.
import { clusterFor } from "../cluster/cluster-for.ts";
import type { Settings } from "../config/settings.ts";
import { newCallBudget } from "../github/call-budget.ts";
import { createGithub, type GithubCache } from "../github/github-client.ts";
import { logLine } from "../log.ts";
import type { FactsKV } from "../store/kv-facts.ts";
import { sweep, type SweepMemory, type SweepReport } from "./sweep.ts";

export interface SweepCounters {
  clusterCalls: number;
}

export interface IsolateState {
  github: GithubCache;
  sweep: SweepMemory;
}

export async function runSweep(kv: FactsKV, settings: Settings, state: IsolateState, now = Date.now()): Promise<SweepReport & SweepCounters> {
  const counters: SweepCounters = { clusterCalls: 0 };
  const budget = newCallBudget(settings.maxGithubCallsPerSweep);
  const cluster = clusterFor(settings.cluster, { onRequest: () => counters.clusterCalls++ });
  const github = () =>
    createGithub({ apiUrl: settings.githubApiUrl, appId: settings.appId, privateKey: settings.privateKey, budget, cache: state.github });
  const report = await sweep({ kv, cluster, github, budget, settings, memory: state.sweep, now, log: logLine, clusterCalls: () => counters.clusterCalls });
  return { ...report, ...counters };
}
