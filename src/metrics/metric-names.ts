// Every metric family /metrics exposes. The alert rules and the dashboard in
// infra/monitoring may use only these names; a test holds both to this list.
export const METRIC_NAMES = [
  "arc_reaper_runners", // gauge {state}: running, finished, failed, stuck, reaped, gone (the ledger's open and closed rows)
  "arc_reaper_deletions_total", // counter {cause}: job-completed, run-completed, over-bound, failed
  "arc_reaper_deletions_held_back_total", // counter: condemned runners kept because the per-sweep cap was reached
  "arc_reaper_errors_total", // counter {kind}: cluster, github, redelivery, agent
  "arc_reaper_sweeps_total", // counter
  "arc_reaper_alarms_total", // counter
  "arc_reaper_webhook_deliveries_total", // counter {event, outcome}: recorded, ignored, invalid, rejected, too_large, misconfigured
  "arc_reaper_last_sweep_timestamp_seconds", // gauge
  "arc_reaper_last_sweep_duration_seconds", // gauge
  "arc_reaper_last_sweep_errors", // gauge {kind}
  "arc_reaper_last_sweep_github_requests", // gauge
  // Seconds since the last sweep completed, by the clock at the scrape (a completion stamped in the future reads 0), by what
  // drives the sweep in this home: the cron trigger on Cloudflare, the ledger's alarm in the cluster. Absent before the first.
  "arc_reaper_last_sweep_age_seconds", // gauge {home, driven_by}: cron, alarm
  // How often sweeps are due in this home: 60 for the cron trigger, REAPER_SWEEP_EVERY_SECONDS for the ledger's alarm.
  "arc_reaper_sweep_every_seconds", // gauge {home, driven_by}: cron, alarm
  "arc_reaper_last_sweep_github_counted_requests", // gauge: of those, counted against the rate limit (all but 304s)
  "arc_reaper_github_rate_limit_remaining", // gauge
  "arc_reaper_github_rate_limit_limit", // gauge
  "arc_reaper_paused", // gauge: 1 while deletions are paused
  // Agent mode: 1 while that cluster's agent is connected; every cluster of AGENT_CLUSTERS has a sample (0 while away).
  "arc_reaper_agent_connected", // gauge {cluster}
  // Agent mode: 1 while the connected agent can read that namespace, 0 while it cannot (e.g. its Role removed: 403).
  "arc_reaper_agent_namespace_readable", // gauge {cluster, namespace}
  // Agent mode: GET /agent refused before the upgrade, by the cluster named ("other" for a name not expected).
  "arc_reaper_agent_refusals_total", // counter {cluster}
  // Deletions by the runner's cluster.
  "arc_reaper_cluster_deletions_total", // counter {cluster}
  // Errors by the runner's cluster ("unknown" while no view named one) and kind.
  "arc_reaper_cluster_errors_total", // counter {cluster, kind}: cluster, github, redelivery, agent
  // A cluster name found pointing at another cluster (its kube-system uid changed): what was known of its runner ids is forgotten.
  "arc_reaper_cluster_identity_changes_total", // counter {cluster}
  "arc_reaper_stuck_deletions", // gauge: runners arc-reaper deleted that still exist REAPER_STUCK_SECONDS later (ARC holds them)
  // Runners ARC marked Failed that hold a slot of their scale set now.
  "arc_reaper_failed_runners", // gauge {cluster, namespace, scale_set}
  // Held deletions finished (REAPER_FINISH_STUCK): ARC's finalizers removed, by outcome (finished, refused, conflict, failed).
  "arc_reaper_finishes_total", // counter {outcome}
  // 1 where ARC's runner ids (status.runnerId) were seen to match GitHub's (runner_id): only there does another id rule a runner out.
  "arc_reaper_runner_ids_match", // gauge {cluster}
  // Runners that never work, as the last sweep counted them: idle past REAPER_IDLE_ALERT_SECONDS, or Outdated (a parked scale set).
  "arc_reaper_idle_runners", // gauge {cluster, namespace, scale_set, runner_version, why}: idle, outdated
] as const;

export type MetricName = (typeof METRIC_NAMES)[number];
