// The in-cluster server's memory: workerd's resident set (VmRSS) at idle, then
// with 10,000 tracked runners (each in the stand-in cluster and recorded by a
// signed workflow_job.in_progress webhook, as GitHub would send them; the
// stand-in cluster holds 5,000 of them), then
// after a sweep over them, and the reap delay after the grace for a few
// runners (the cluster's half). The server runs as the image runs it (test/node/server/server-rig.ts).
//   node bench/server-memory.ts [runners]
import { readFileSync } from "node:fs";
import { waitFor, workflowJobPayload } from "../scripts/lib/local-stack.ts";
import { makeEphemeralRunner } from "../test/standins/kube/control.ts";
import { INSTALLATION, NAMESPACE, postSigned, REPO, serverWorld } from "../test/node/server/server-rig.ts";

const runners = Number(process.argv[2] ?? 10_000);
const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const iso = (ms: number) => new Date(ms).toISOString();
const say = (line: string) => process.stdout.write(`${line}\n`);

const world = await serverWorld();
try {
  const server = await world.start({
    settings: { REAPER_CLIENT_ADDRESS_HEADER: "X-Forwarded-For", REAPER_SWEEP_EVERY_SECONDS: "60", REAPER_GRACE_SECONDS: "2" },
  });
  await waitFor("the first sweep", async () => (server.lines("sweep").length > 0 ? true : undefined), 30_000);
  await new Promise((r) => setTimeout(r, 2_000));
  say(`idle: ${rssMiB(server.pid).toFixed(1)} MiB`);

  const names = Array.from({ length: runners }, (_, i) => `arc-runners-mem-runner-${i}`);
  // The stand-in holds at most 5,000 objects a tenant: the rest are tracked from their webhooks alone (a sweep finds them gone).
  const inCluster = Math.min(runners, 5_000);
  for (let i = 0; i < inCluster; i += 1_000) {
    await world.kube.seedAll(
      names
        .slice(i, Math.min(i + 1_000, inCluster))
        .map((name, j) =>
          makeEphemeralRunner({ namespace: NAMESPACE, scaleSet: "arc-runners", name, workflowRunId: 500_000 + i + j, jobRepositoryName: REPO }),
        ),
    );
  }
  const started = Date.now();
  const startedAt = iso(started - 60_000);
  // GitHub's deliveries come from many addresses: 500 per forwarded address keeps each under the front door's limit.
  for (let i = 0; i < runners; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map(async (name, j) => {
        const n = i + j;
        const payload = workflowJobPayload("in_progress", {
          runner: name,
          repo: REPO,
          runId: 500_000 + n,
          runAttempt: 1,
          jobId: 5_000_000 + n,
          installationId: INSTALLATION,
          startedAt,
        });
        const res = await postSigned(world, server.url, "workflow_job", payload, { "x-forwarded-for": `10.9.${Math.floor(n / 500) % 250}.${(n % 250) + 1}` });
        if (res.status >= 300) throw new Error(`delivery ${n} answered ${res.status}: ${await res.text()}`);
      }),
    );
  }
  say(`${runners} deliveries in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await new Promise((r) => setTimeout(r, 2_000));
  say(`${runners} tracked runners: ${rssMiB(server.pid).toFixed(1)} MiB`);
  const before = server.lines("sweep").length;
  await waitFor("a sweep over them", async () => (server.lines("sweep").length > before ? true : undefined), 90_000, 250);
  const sweep = server.lines("sweep").at(-1);
  say(`after a sweep over them (${String(sweep?.durationMs)} ms): ${rssMiB(server.pid).toFixed(1)} MiB`);

  // Reap delay: five runners complete one at a time, each due 2 s later; delay = DELETE - (completed_at + grace).
  const delays: number[] = [];
  for (let k = 0; k < 5; k++) {
    const n = k;
    const completed = Math.floor(Date.now() / 1000) * 1000;
    const job = { runner: names[n]!, repo: REPO, runId: 500_000 + n, runAttempt: 1, jobId: 5_000_000 + n, installationId: INSTALLATION, startedAt };
    await postSigned(world, server.url, "workflow_job", workflowJobPayload("completed", { ...job, completedAt: iso(completed), conclusion: "cancelled" }), {
      "x-forwarded-for": "10.8.0.1",
    });
    const at = await waitFor(
      "the DELETE",
      async () => {
        const call = (await world.kube.calls()).find((c) => c.method === "DELETE" && c.path.endsWith(`/${names[n]}`));
        return call ? Date.parse(call.time) : undefined;
      },
      20_000,
      20,
    );
    delays.push(at - (completed + 2_000));
  }
  say(`reap delay after the grace (ms): ${delays.join(", ")}`);
  say(`after: ${rssMiB(server.pid).toFixed(1)} MiB`);
  await server.kill();
} finally {
  await world.close();
}
