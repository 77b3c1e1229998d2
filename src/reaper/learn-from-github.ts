// For a busy runner no webhook told us about (arc-reaper was down, a delivery
// was lost, or the runner predates the install): ask GitHub about its run and
// turn the answer into facts, recorded in the ledger, so it is not asked twice.
import type { Github, GithubJob } from "../github/github-client.ts";
import { CLOCK_SKEW_MS } from "../model/policy.ts";
import type { ClusterRunner } from "../model/runner.ts";
import type { Fact } from "../model/facts.ts";
import { isOwnerRepo } from "../model/shapes.ts";
import { jobNamingRunner } from "./job-names-runner.ts";

export type Learned = { kind: "known"; facts: Fact[]; job?: GithubJob } | { kind: "unknown"; why: string };

export async function learnFromGithub(github: Github, runner: ClusterRunner): Promise<Learned> {
  const repo = runner.jobRepositoryName;
  const runId = runner.workflowRunId;
  if (!isOwnerRepo(repo) || runId === undefined) {
    return {
      kind: "unknown",
      why: `runner works on run ${runId ?? "?"} but status.jobRepositoryName ${JSON.stringify(repo ?? null)} is not owner/repo: cannot ask GitHub`,
    };
  }
  const installationId = await github.installationFor(repo);
  const run = await github.run(repo, runId, installationId);
  const facts: Fact[] = [];
  if (run.status === "completed") {
    // The whole run is over, whichever attempt the runner served: the run's time decides.
    facts.push(
      {
        type: "run-completed",
        repo,
        runId,
        runAttempt: run.runAttempt,
        updatedAt: run.updatedAt,
        conclusion: run.conclusion ?? "completed",
        installationId,
        source: "rest",
        names: run.names,
      },
      // Job unknown (0): recorded so the runner is tracked; the run's completion covers it.
      {
        type: "job-started",
        runner: runner.name,
        repo,
        runId,
        runAttempt: run.runAttempt,
        jobId: 0,
        startedAt: runner.createdAt ?? run.updatedAt,
        installationId,
        source: "rest",
        names: run.names,
      },
    );
    return { kind: "known", facts };
  }
  // Only a job that started after this object was created (less the skew) can be its own: an earlier
  // job of the same run on the same name ran on an earlier runner of that name.
  const created = runner.createdAt ? Date.parse(runner.createdAt) : NaN;
  const found = await github.runnerJob(repo, runId, runner.name, installationId, Number.isNaN(created) ? undefined : created - CLOCK_SKEW_MS);
  if (!found) {
    return { kind: "unknown", why: `GitHub lists no job of run ${runId} in ${repo} on runner ${runner.name}` };
  }
  // Asked by name, and only the name can be held to it here: the object's status.runnerId is ARC's number, the
  // same as GitHub's only in a cluster where ids were seen to match (identify.ts), which this ask cannot know.
  const job = jobNamingRunner(found, { name: runner.name });
  const common = {
    runner: runner.name,
    repo,
    runId,
    runAttempt: job.runAttempt,
    jobId: job.id,
    ...(job.runnerId !== undefined ? { runnerId: job.runnerId } : {}),
    installationId,
    source: "rest",
    names: job.names,
  };
  if (job.status === "completed" && job.completedAt) {
    facts.push({
      type: "job-completed",
      ...common,
      startedAt: job.startedAt ?? undefined,
      completedAt: job.completedAt,
      conclusion: job.conclusion ?? "completed",
    });
  } else if (job.startedAt) {
    facts.push({ type: "job-started", ...common, startedAt: job.startedAt });
  } else {
    return { kind: "unknown", why: `job ${job.id} of run ${runId} in ${repo} has not started according to GitHub` };
  }
  return { kind: "known", facts, job };
}
