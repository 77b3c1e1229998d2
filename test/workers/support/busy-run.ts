// A run in progress on a stack: its busy runners in the cluster, their jobs in_progress on the
// GitHub stand-in, and each in_progress delivery recorded (the rechecks' scenarios start from it).
import { NOW } from "./kube-calls.ts";
import { before, REPO, type Stack } from "./stack.ts";

/** `count` busy runners `${prefix}${runId}-${i}` of run `runId`, each job started `startedSecondsAgo` before NOW. */
export async function busyRun(s: Stack, prefix: string, runId: number, count: number, startedSecondsAgo: number): Promise<{ id: number; name: string }[]> {
  const jobs: { id: number; name: string }[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}${runId}-${i}`;
    const startedAt = before(NOW, startedSecondsAgo);
    await s.runner({ name, workflowRunId: runId });
    const job = await s.github.putJob({ repo: REPO, run_id: runId, status: "in_progress", runner_name: name, started_at: startedAt });
    const answer = await s.jobStarted({ runner: name, runId, jobId: Number(job.id), startedAt });
    if (answer.status !== 202) throw new Error(`seeding ${name}: ${answer.status}`);
    jobs.push({ id: Number(job.id), name });
  }
  return jobs;
}
