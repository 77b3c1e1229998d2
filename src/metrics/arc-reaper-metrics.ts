// The arc-reaper metric families, from one ledger snapshot: counts of open
// runners, the closed runners' gauges, the counters, the last sweep. Pure.
import type { SweepDriver } from "../config/home.ts";
import type { LedgerSnapshot } from "../ledger/queries.ts";
import { RUNNER_STATES } from "../model/runner.ts";
import type { MetricName } from "./metric-names.ts";
import type { Family, Sample } from "./prometheus.ts";

const DELETE_CAUSES = ["job-completed", "run-completed", "over-bound", "failed"] as const;
const FINISH_OUTCOMES = ["finished", "refused", "conflict", "failed"] as const;
const ERROR_KINDS = ["cluster", "github", "redelivery", "agent"] as const;

export interface MetricsInput {
  snapshot: LedgerSnapshot;
  /** In agent mode, whether each watched cluster's agent is connected; null in direct mode (the agent families are then absent). */
  agents: readonly { cluster: string; connected: boolean; namespaces?: readonly string[]; unreadable?: readonly { namespace: string }[] }[] | null;
  /** Direct mode: the one cluster's name (KUBE_CLUSTER_NAME, or "default"); agent mode takes the agents' clusters. */
  directCluster?: string;
  /** What drives the sweep in this home, and the clock at the scrape (ms): the last sweep's age and the period. */
  sweep?: { driver: SweepDriver; now: number };
}

type NamedFamily = Family & { name: MetricName };

/** A counter's samples from the snapshot, with the known label values at 0 until they first count. */
type Counter = (name: string, label?: string, zeroFor?: readonly string[]) => Sample[];

function countersOf(snapshot: LedgerSnapshot): Counter {
  return (name, label, zeroFor = []) => {
    const byKey = new Map<string, Sample>();
    for (const value of zeroFor) byKey.set(JSON.stringify({ [label!]: value }), { labels: { [label!]: value }, value: 0 });
    for (const c of snapshot.counters) {
      if (c.name === name) byKey.set(JSON.stringify(c.labels), { labels: Object.keys(c.labels).length > 0 ? c.labels : undefined, value: c.value });
    }
    if (!label && byKey.size === 0) byKey.set("{}", { value: 0 });
    return [...byKey.values()];
  };
}

export function arcReaperFamilies({ snapshot, agents, directCluster, sweep }: MetricsInput): NamedFamily[] {
  const watched = agents ? agents.map((a) => a.cluster) : directCluster !== undefined ? [directCluster] : [];
  const counter = countersOf(snapshot);
  return [
    ...tallyFamilies(snapshot, counter),
    ...lastSweepFamilies(snapshot.lastSweep),
    ...(sweep ? sweepClockFamilies(snapshot.lastSweep, sweep.driver, sweep.now) : []),
    ...fleetFamilies(snapshot, counter, watched),
    ...(agents !== null ? agentFamilies(agents, counter) : []),
  ];
}

/** The runners by state and what the ledger counted: deletions, holds, errors, sweeps, alarms, deliveries. */
function tallyFamilies(snapshot: LedgerSnapshot, counter: Counter): NamedFamily[] {
  return [
    {
      name: "arc_reaper_runners",
      help: "Runners in the ledger by state: running and finished are open; reaped and gone are the history of REAPER_HISTORY_DAYS.",
      type: "gauge",
      samples: RUNNER_STATES.map((state) => ({ labels: { state }, value: snapshot.runners[state] })),
    },
    {
      name: "arc_reaper_deletions_total",
      help: "EphemeralRunners arc-reaper deleted, by the evidence that condemned them.",
      type: "counter",
      samples: counter("arc_reaper_deletions_total", "cause", DELETE_CAUSES),
    },
    {
      name: "arc_reaper_deletions_held_back_total",
      help: "Condemned runners kept for a later minute because REAPER_MAX_DELETIONS_PER_MINUTE was reached.",
      type: "counter",
      samples: counter("arc_reaper_deletions_held_back_total"),
    },
    {
      name: "arc_reaper_errors_total",
      help: "Runners kept because something could not be read or done, by kind (cluster, github, redelivery, agent).",
      type: "counter",
      samples: counter("arc_reaper_errors_total", "kind", ERROR_KINDS),
    },
    { name: "arc_reaper_sweeps_total", help: "Sweeps run (the cron, once a minute).", type: "counter", samples: counter("arc_reaper_sweeps_total") },
    { name: "arc_reaper_alarms_total", help: "Ledger alarms run (at the earliest due time).", type: "counter", samples: counter("arc_reaper_alarms_total") },
    {
      name: "arc_reaper_webhook_deliveries_total",
      help: "Webhook deliveries by event and outcome (recorded, ignored, invalid, rejected, too_large, misconfigured), counted in the ledger.",
      type: "counter",
      samples: counter("arc_reaper_webhook_deliveries_total", "outcome"),
    },
  ];
}

/** The last sweep's figures, absent before the first sweep. */
function lastSweepFamilies(sweep: LedgerSnapshot["lastSweep"]): NamedFamily[] {
  const fromSweep = (value: number | null | undefined): Sample[] => (sweep && value !== null && value !== undefined ? [{ value }] : []);
  return [
    {
      name: "arc_reaper_last_sweep_timestamp_seconds",
      help: "When the last sweep ran, in seconds since the epoch.",
      type: "gauge",
      samples: fromSweep(sweep ? Date.parse(sweep.at) / 1000 : undefined),
    },
    {
      name: "arc_reaper_last_sweep_duration_seconds",
      help: "Wall time of the last sweep, in seconds.",
      type: "gauge",
      samples: fromSweep(sweep ? sweep.durationMs / 1000 : undefined),
    },
    {
      name: "arc_reaper_last_sweep_errors",
      help: "Errors in the last sweep, by kind (cluster, github, redelivery; agent in agent mode).",
      type: "gauge",
      samples: sweep ? Object.entries(sweep.errors).map(([kind, value]) => ({ labels: { kind }, value })) : [],
    },
    {
      name: "arc_reaper_last_sweep_github_requests",
      help: "GitHub API requests the last sweep made (token mints, look-ups, reads and redeliveries).",
      type: "gauge",
      samples: fromSweep(sweep?.githubCalls),
    },
    {
      name: "arc_reaper_last_sweep_github_counted_requests",
      help: "Of the last sweep's GitHub requests, those GitHub counts against the rate limit (all but the 304s of conditional requests).",
      type: "gauge",
      samples: fromSweep(sweep?.githubCounted ?? sweep?.githubCalls),
    },
    {
      name: "arc_reaper_github_rate_limit_remaining",
      help: "GitHub's x-ratelimit-remaining as the last sweep saw it; absent when it made no request.",
      type: "gauge",
      samples: fromSweep(sweep?.rateLimitRemaining),
    },
    {
      name: "arc_reaper_github_rate_limit_limit",
      help: "GitHub's x-ratelimit-limit as the last sweep saw it; absent when it made no request.",
      type: "gauge",
      samples: fromSweep(sweep?.rateLimitLimit),
    },
  ];
}

/** How long since the last sweep completed, and how often one is due, labelled with the home and what drives it there. */
function sweepClockFamilies(sweep: LedgerSnapshot["lastSweep"], driver: SweepDriver, now: number): NamedFamily[] {
  const labels = { home: driver.home, driven_by: driver.drivenBy };
  return [
    {
      name: "arc_reaper_last_sweep_age_seconds",
      help: "Seconds since the last sweep completed (a completion stamped in the future reads 0); driven_by: the cron trigger (Cloudflare) or the ledger's alarm (in the cluster).",
      type: "gauge",
      samples: sweep ? [{ labels, value: Math.max(0, (now - Date.parse(sweep.at)) / 1000) }] : [],
    },
    {
      name: "arc_reaper_sweep_every_seconds",
      help: "How often a sweep is due: 60 for the cron trigger, REAPER_SWEEP_EVERY_SECONDS for the ledger's alarm.",
      type: "gauge",
      samples: [{ labels, value: driver.everySeconds }],
    },
  ];
}

/** Per cluster and per scale set: deletions and errors, the pause, stuck deletions, Failed and idle runners, finishes, runner ids. */
function fleetFamilies(snapshot: LedgerSnapshot, counter: Counter, watched: readonly string[]): NamedFamily[] {
  return [
    {
      name: "arc_reaper_cluster_deletions_total",
      help: "EphemeralRunners arc-reaper deleted, by the cluster they lived in.",
      type: "counter",
      samples: counter("arc_reaper_cluster_deletions_total", "cluster"),
    },
    {
      name: "arc_reaper_cluster_errors_total",
      help: "Runners kept because something could not be read or done, by cluster (unknown: no view named one) and kind.",
      type: "counter",
      samples: counter("arc_reaper_cluster_errors_total", "cluster"),
    },
    {
      name: "arc_reaper_paused",
      help: "1 while deletions are paused (POST /admin/pause), else 0.",
      type: "gauge",
      samples: [{ value: snapshot.paused ? 1 : 0 }],
    },
    {
      name: "arc_reaper_stuck_deletions",
      help: "Runners arc-reaper deleted that still exist REAPER_STUCK_SECONDS later: ARC holds the deletion (GitHub says the job runs, or a finalizer is wedged).",
      type: "gauge",
      samples: snapshot.stuckDeletions === undefined ? [] : [{ value: snapshot.stuckDeletions }],
    },
    {
      name: "arc_reaper_failed_runners",
      help: "Runners ARC marked Failed (their pod could not be made) that hold a slot of their scale set now; scale_set is ARC's label (empty when unlabelled).",
      type: "gauge",
      samples: (snapshot.failedRunners ?? []).map((f) => ({ labels: { cluster: f.cluster, namespace: f.namespace, scale_set: f.scaleSet }, value: f.n })),
    },
    {
      name: "arc_reaper_idle_runners",
      help: "Runners that never work, per scale set and runner version (empty when the object does not tell), as the last sweep counted them: why idle (no job REAPER_IDLE_ALERT_SECONDS after it was created) or outdated (ARC marked it Outdated: its scale set is parked). Never deleted by arc-reaper.",
      type: "gauge",
      samples: (snapshot.idleRunners?.groups ?? []).map((g) => ({
        labels: { cluster: g.cluster, namespace: g.namespace, scale_set: g.scaleSet, runner_version: g.runnerVersion, why: g.why },
        value: g.n,
      })),
    },
    {
      name: "arc_reaper_finishes_total",
      help: "Held deletions finished with REAPER_FINISH_STUCK (ARC's finalizers removed after GitHub said the job completed), by outcome: finished, refused (403: the Role overlay is not applied), conflict (the object changed), failed.",
      type: "counter",
      samples: counter("arc_reaper_finishes_total", "outcome", FINISH_OUTCOMES),
    },
    {
      name: "arc_reaper_runner_ids_match",
      help: "1 where ARC's runner ids (status.runnerId) were seen to match GitHub's (workflow_job.runner_id), 0 for a watched cluster where they never were: there identity is by name, run and uid only.",
      type: "gauge",
      samples: [...new Set([...watched, ...Object.keys(snapshot.runnerIdsMatch ?? {})])]
        .sort()
        .map((cluster) => ({ labels: { cluster }, value: snapshot.runnerIdsMatch?.[cluster] !== undefined ? 1 : 0 })),
    },
    {
      name: "arc_reaper_cluster_identity_changes_total",
      help: "Times a cluster name was found pointing at another cluster (its kube-system namespace's uid changed: a new KUBE_API_URL, a reused agent cluster name); each forgets that runner ids matched there.",
      type: "counter",
      samples: counter("arc_reaper_cluster_identity_changes_total", "cluster"),
    },
  ];
}

/** Agent mode: each cluster's agent connected, each namespace readable, and GET /agent refused. */
function agentFamilies(agents: NonNullable<MetricsInput["agents"]>, counter: Counter): NamedFamily[] {
  return [
    {
      name: "arc_reaper_agent_connected",
      help: "1 while the cluster's in-cluster agent is connected (agent mode), else 0; every cluster of AGENT_CLUSTERS has a sample.",
      type: "gauge",
      samples: agents.map((a) => ({ labels: { cluster: a.cluster }, value: a.connected ? 1 : 0 })),
    },
    {
      name: "arc_reaper_agent_namespace_readable",
      help: "1 while the cluster's connected agent can read the namespace, 0 while it cannot (its list or watch fails, e.g. 403: its Role removed); its runners are then kept as ambiguous.",
      type: "gauge",
      samples: agents
        .filter((a) => a.connected)
        .flatMap((a) =>
          (a.namespaces ?? []).map((namespace) => ({
            labels: { cluster: a.cluster, namespace },
            value: (a.unreadable ?? []).some((u) => u.namespace === namespace) ? 0 : 1,
          })),
        ),
    },
    {
      name: "arc_reaper_agent_refusals_total",
      help: "GET /agent refused before the upgrade (a token that does not admit the cluster), by cluster (other: a name not expected).",
      type: "counter",
      samples: counter("arc_reaper_agent_refusals_total", "cluster"),
    },
  ];
}
