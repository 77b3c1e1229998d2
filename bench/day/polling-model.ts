// A model of the polling reaper that teams run today as a CronJob: every 5
// minutes a fresh pod mints an installation token, lists the EphemeralRunners,
// and for each busy one (status.workflowRunId set) reads its run and the run's
// jobs from GitHub (2 requests), then deletes it when the job or the run is
// over. It decides with the same judge and policy as arc-reaper (so the
// difference is only in what each knows, and when). When the installation's
// 5,000 requests of the hour are spent, the rest of the poll is skipped.
import { judge } from "../../src/reaper/judge.ts";
import type { Policy } from "../../src/model/policy.ts";
import type { GithubWord } from "../../src/model/verdict.ts";
import { trackedRunners } from "./fold-facts.ts";
import type { Fact } from "../../src/model/facts.ts";
import { GithubCalls } from "./hourly-limit.ts";
import type { ReaperOutcome } from "./outcome.ts";
import { SimCluster } from "./sim-cluster.ts";
import type { Trace } from "./trace.ts";

export const POLLING_MODEL = { everyMs: 300_000, jobsPerPage: 100 };

export function runPollingReaper(trace: Trace, policy: Policy, horizonMs: number): ReaperOutcome {
  const cluster = new SimCluster(trace);
  const calls = new GithubCalls();
  const iso = (t: number) => new Date(trace.epoch + t).toISOString();
  let wrongDeletions = 0;
  let skippedChecks = 0;

  for (let t = POLLING_MODEL.everyMs; t <= horizonMs; t += POLLING_MODEL.everyMs) {
    const busy = cluster.busyAt(t);
    if (busy.length === 0) continue;
    if (!calls.take(t, "token mint")) {
      skippedChecks += busy.length;
      continue;
    }
    for (const [i, job] of busy.entries()) {
      const run = trace.runs[job.run]!;
      const pages = Math.ceil(run.jobs.length / POLLING_MODEL.jobsPerPage);
      let read = calls.take(t, "run read");
      for (let p = 0; p < pages && read; p++) read = calls.take(t, "run jobs read");
      if (!read) {
        skippedChecks += busy.length - i;
        break;
      }
      // What GitHub answers at t, as facts.
      const common = { runner: job.runner, repo: run.repo, runId: run.id, runAttempt: 1, jobId: job.id, installationId: 4242, source: "rest" };
      const facts: Fact[] = [{ type: "job-started", ...common, startedAt: iso(job.startedAt) }];
      if (job.completedAt <= t)
        facts.push({ type: "job-completed", ...common, startedAt: iso(job.startedAt), completedAt: iso(job.completedAt), conclusion: job.conclusion });
      if (run.completedAt <= t)
        facts.push({
          type: "run-completed",
          repo: run.repo,
          runId: run.id,
          runAttempt: 1,
          updatedAt: iso(run.completedAt),
          conclusion: run.conclusion,
          source: "rest",
        });
      const word: GithubWord =
        job.completedAt <= t
          ? { kind: "job", status: "completed", conclusion: job.conclusion, completedAt: iso(job.completedAt) }
          : { kind: "job", status: "in_progress", conclusion: null, completedAt: null };
      const tracked = trackedRunners(facts)[0]!;
      const verdict = judge({ tracked, cluster: { kind: "found", runner: cluster.runner(job) }, github: word, now: trace.epoch + t, policy });
      if (verdict.verdict !== "delete") continue;
      if (job.completedAt > t && verdict.cause !== "over-bound") wrongDeletions++;
      cluster.delete(job, t);
    }
  }

  return {
    name: "polling reaper (CronJob, every 5 min)",
    calls,
    delays: trace.jobs.flatMap((j) => {
      if (j.stuck === null) return [];
      const at = cluster.deletedAt.get(j.index);
      return [{ job: j.index, stuck: j.stuck, delayMs: at === undefined ? null : at - j.completedAt }];
    }),
    wrongDeletions,
    skippedChecks,
  };
}
