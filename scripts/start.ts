// npm start: the Worker locally, with something to look at.
//
// Without a .dev.vars of your own, the real Worker (wrangler dev) runs against
// the stand-in GitHub and Kubernetes APIs the demo uses, in dry run, with one
// runner busy on a job; each Enter sends the next signed sample webhook of that
// job (in_progress, then completed), and the admin page shows what arc-reaper
// makes of it. With a .dev.vars (copied from .dev.vars.example and pointed at
// your GitHub and cluster), it is wrangler dev with those settings (scripts/dev.sh).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { makeEphemeralRunner } from "../test/standins/kube/control.ts";
import { ROOT, startLocalStack, workflowJobPayload } from "./lib/local-stack.ts";

if (existsSync(join(ROOT, ".dev.vars"))) {
  const r = spawnSync("bash", [join(ROOT, "scripts/dev.sh"), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}

const REPO = "octo-org/octo-repo";
const RUNNER = "arc-runners-x7k2p-runner-s4mpl";
const GRACE = 30;
console.log("npm start: the Worker (wrangler dev) on stand-in GitHub and Kubernetes APIs, in dry run (a .dev.vars of your own runs it on yours).");
const stack = await startLocalStack({ settings: { REAPER_DRY_RUN: "true", REAPER_GRACE_SECONDS: String(GRACE) } });
const stop = (code: number) => void stack.stop().finally(() => process.exit(code));
process.once("SIGINT", () => stop(130));
process.once("SIGTERM", () => stop(143));

const iso = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().replace(/\.\d{3}Z$/, "Z");
await stack.kube.seed(
  makeEphemeralRunner({
    namespace: stack.namespace,
    scaleSet: "arc-runners",
    name: RUNNER,
    workflowRunId: 9001,
    jobRepositoryName: REPO,
    creationTimestamp: iso(600_000),
  }),
);
const job = { runner: RUNNER, repo: REPO, runId: 9001, runAttempt: 1, jobId: 90010, installationId: stack.installationId, startedAt: iso(300_000) };
const samples = [
  { what: `workflow_job.in_progress (job ${job.jobId} starts on ${RUNNER})`, payload: () => workflowJobPayload("in_progress", job) },
  {
    what: `workflow_job.completed (job ${job.jobId} cancelled: in dry run, "would delete" after the ${GRACE} s grace)`,
    payload: () => workflowJobPayload("completed", { ...job, completedAt: iso(0), conclusion: "cancelled" }),
  },
];

console.log(`\nWorker:     ${stack.url} (admin page ${stack.url}/admin, token ${stack.adminToken})`);
console.log(`Cluster:    ${RUNNER} in ${stack.namespace}, busy on run ${job.runId}`);
console.log(`Sweep now:  curl "${stack.url}/cdn-cgi/local/scheduled?cron=*+*+*+*+*"`);
console.log(`Enter sends the next signed sample webhook: ${samples[0]?.what}. Ctrl-C stops everything.`);
let next = 0;
createInterface({ input: process.stdin }).on("line", () => {
  const sample = samples[next];
  if (!sample) {
    console.log(`No more samples: see ${stack.url}/admin (the runner's story) or Ctrl-C to stop.`);
    return;
  }
  next += 1;
  void stack.postWebhook("workflow_job", sample.payload()).then(
    ({ status, body }) => {
      console.log(`sent ${sample.what}: ${status} ${JSON.stringify(body)}`);
      const following = samples[next];
      console.log(following ? `Enter sends ${following.what}.` : `Open ${stack.url}/admin: ${RUNNER} is finished, "would delete" once the grace is over.`);
    },
    (e: unknown) => console.log(`sending ${sample.what} to ${stack.url}/webhook failed: ${e instanceof Error ? e.message : String(e)}`),
  );
});
