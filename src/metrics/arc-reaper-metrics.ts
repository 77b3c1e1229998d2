// The arc-reaper metric families, from one KV list pass (the facts and the last
// sweep's summary) and this isolate's webhook counters. Pure: no I/O, no clock.
import { RUNNER_STATES, runnerRows, type RunnerState } from "../admin/runner-rows.ts";
import type { Policy } from "../reaper/judge.ts";
import type { Fact } from "../store/facts.ts";
import type { SweepSummary } from "../store/sweep-summary.ts";
import type { Family } from "./prometheus.ts";

export const DELETE_CAUSES = ["job-completed", "run-completed", "over-bound"] as const;
export const ERROR_KINDS = ["cluster", "github", "redelivery"] as const;

export interface MetricsInput {
  facts: readonly Fact[];
  lastSweep: SweepSummary | undefined;
  deliveries: readonly { event: string; outcome: string; count: number }[];
  now: number;
  policy: Policy & { dryRun: boolean };
}

export function arcReaperFamilies(input: MetricsInput): Family[] {
  const byState = new Map<RunnerState, number>(RUNNER_STATES.map((s) => [s, 0]));
  for (const { state } of runnerRows(input.facts, input.now, input.policy)) {
    byState.set(state, (byState.get(state) ?? 0) + 1);
  }

  const byCause = new Map<string, number>(DELETE_CAUSES.map((c) => [c, 0]));
  for (const fact of input.facts) {
    if (fact.type !== "runner-closed" || fact.outcome !== "reaped") continue;
    const cause = fact.cause ?? "unknown";
    byCause.set(cause, (byCause.get(cause) ?? 0) + 1);
  }

  const sweep = input.lastSweep;
  const errors = new Map<string, number>(ERROR_KINDS.map((k) => [k, 0]));
  for (const [kind, n] of Object.entries(sweep?.errors ?? {})) errors.set(kind, n);
  const fromSweep = (value: number | null | undefined) => (sweep && value !== null && value !== undefined ? [{ value }] : []);

  return [
    {
      name: "arc_reaper_runners",
      help: "Tracked runners by state (running, finished, reaped, gone), from the facts in KV.",
      type: "gauge",
      samples: [...byState].map(([state, value]) => ({ labels: { state }, value })),
    },
    {
      // Not monotonic: closed facts expire from KV (REAPER_MAX_JOB_SECONDS + 2 days), so this is a gauge.
      name: "arc_reaper_deletions_total",
      help: "EphemeralRunners arc-reaper deleted, by the evidence that condemned them; counts only what KV still holds (closed facts expire after REAPER_MAX_JOB_SECONDS + 2 days).",
      type: "gauge",
      samples: [...byCause].map(([cause, value]) => ({ labels: { cause }, value })),
    },
    {
      name: "arc_reaper_last_sweep_errors",
      help: "Errors in the last recorded sweep, by kind (cluster, github, redelivery).",
      type: "gauge",
      samples: sweep ? [...errors].map(([kind, value]) => ({ labels: { kind }, value })) : [],
    },
    {
      name: "arc_reaper_last_sweep_github_requests",
      help: "GitHub API requests the last recorded sweep made (token mints, look-ups, reads and redeliveries).",
      type: "gauge",
      samples: fromSweep(sweep?.githubCalls),
    },
    {
      name: "arc_reaper_github_rate_limit_remaining",
      help: "GitHub's x-ratelimit-remaining as last seen by a sweep; absent when that sweep made no request.",
      type: "gauge",
      samples: fromSweep(sweep?.rateLimitRemaining),
    },
    {
      name: "arc_reaper_last_sweep_timestamp_seconds",
      help: "When the last recorded sweep ran, in seconds since the epoch. The summary is rewritten at least every 5 minutes, and at once when a sweep deletes or its errors change.",
      type: "gauge",
      samples: fromSweep(sweep ? Date.parse(sweep.at) / 1000 : undefined),
    },
    {
      name: "arc_reaper_last_sweep_duration_seconds",
      help: "Wall time of the last recorded sweep, in seconds.",
      type: "gauge",
      samples: fromSweep(sweep ? sweep.durationMs / 1000 : undefined),
    },
    {
      name: "arc_reaper_webhook_deliveries_total",
      help: "Webhook deliveries by event and outcome (recorded, ignored, invalid, rejected), counted in memory per Workers isolate: each isolate starts from zero, so sum across scrapes with rate() or increase().",
      type: "counter",
      samples: input.deliveries.map((d) => ({ labels: { event: d.event, outcome: d.outcome }, value: d.count })),
    },
  ];
}
