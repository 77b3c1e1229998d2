// The alarm's latency, measured under `wrangler dev`: how long after a runner's
// due time (completed_at + grace) the ledger's alarm has deleted it. Runners
// complete one at a time, so each delete comes from its own alarm firing, not
// from a sweep (none is triggered). The synthetic day draws its reap delays
// from these samples.
import { startLocalStack, workflowJobPayload } from "../scripts/lib/local-stack.ts";
import { makeEphemeralRunner } from "../test/standins/kube/control.ts";
import { waitFor } from "../scripts/lib/local-stack.ts";

const GRACE_SECONDS = 5;
const REPO = "octo-org/octo-repo";

export interface AlarmLatency {
  graceSeconds: number;
  /** ms from the due time to the DELETE reaching the cluster, one per runner. */
  samplesMs: number[];
}

export async function measureAlarmLatency(runners: number, log: (line: string) => void): Promise<AlarmLatency> {
  const stack = await startLocalStack({ repositories: [REPO], settings: { REAPER_GRACE_SECONDS: String(GRACE_SECONDS), REAPER_DRY_RUN: "false" } });
  try {
    const names = Array.from({ length: runners }, (_, i) => `arc-runners-alarm-runner-${i}`);
    await stack.kube.seedAll(
      names.map((name, i) =>
        makeEphemeralRunner({ namespace: stack.namespace, scaleSet: "arc-runners", name, workflowRunId: 700_000 + i, jobRepositoryName: REPO }),
      ),
    );
    const due = new Map<string, number>();
    for (const [i, runner] of names.entries()) {
      const job = {
        runner,
        repo: REPO,
        runId: 700_000 + i,
        runAttempt: 1,
        jobId: 900_000 + i,
        installationId: stack.installationId,
        startedAt: new Date(Date.now() - 60_000).toISOString(),
      };
      await stack.postWebhook("workflow_job", workflowJobPayload("in_progress", job));
      // completed_at carries whole seconds, as GitHub sends it: the due time is that second + the grace.
      const completedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
      await stack.postWebhook("workflow_job", workflowJobPayload("completed", { ...job, completedAt: completedAt.toISOString(), conclusion: "success" }));
      due.set(runner, completedAt.getTime() + GRACE_SECONDS * 1000);
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    const deletes = await waitFor(
      "every runner to be deleted by the alarm",
      async () => {
        const d = (await stack.kube.calls()).filter((c) => c.method === "DELETE" && c.status < 300);
        return d.length >= runners ? d : undefined;
      },
      (GRACE_SECONDS + 30) * 1000,
      250,
    );
    const samplesMs = deletes.flatMap((c) => {
      const name = c.path.split("/").pop() ?? "";
      const at = due.get(name);
      return at === undefined ? [] : [Date.parse(c.time) - at];
    });
    log(`  ${samplesMs.length} runners deleted by the alarm, ${Math.min(...samplesMs)} to ${Math.max(...samplesMs)} ms after their due time`);
    return { graceSeconds: GRACE_SECONDS, samplesMs };
  } finally {
    await stack.stop();
  }
}
