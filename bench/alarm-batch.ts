// The CPU of one alarm run over a full batch of due runners (issue 25), measured
// under `wrangler dev` in direct mode with the 12 namespaces of the 50,000 fleet
// (each a stand-in tenant behind bench/kube-router.ts). `batch` runners, spread
// over the namespaces, complete on a webhook's word so that their grace ends at
// the same second, a little after seeding: the ledger's alarm then reads each by
// name in every watched namespace and deletes it (the deletion cap is raised to
// the batch, so that every one is deleted: the costliest run). Before them, a
// background of in-progress rows not yet due, so the ledger is a large fleet's.
//   node bench/alarm-batch.ts [batch] [background]
import { startLocalStack, waitFor, workflowJobPayload, type LocalStack } from "../scripts/lib/local-stack.ts";
import { makeEphemeralRunner, type KubeTenant } from "../test/standins/kube/control.ts";
import { startKubeRouter } from "./kube-router.ts";
import { loadAverage } from "./machine.ts";
import { cpuMs, waitIdle, workerdPidsFor } from "./proc.ts";
import { BENCH_LOGS, namespacesFor, PRODUCTION_SETTINGS, routeTenants } from "./sweep-cost.ts";
import { alarmBatchTable } from "./tables.ts";

/** gather-due.ts's ALARM_BATCH: due runners one alarm run judges. */
export const ALARM_BATCH = 100;
const REPO = "octo-org/octo-repo";
const INSTALLATION = 4242;
const GRACE_SECONDS = Number(PRODUCTION_SETTINGS.REAPER_GRACE_SECONDS);
/** Seconds from the start of seeding to the batch's due time: seeding and settling fit well within. */
const LEAD_SECONDS = 45;
const SEED_BATCH = 200;

export interface AlarmBatch {
  batch: number;
  background: number;
  namespaces: number;
  /** The alarm's own log lines (msg "alarm"), one per run. */
  runs: { judged: number; deleted: number; clusterCalls: number; rowsRead: number; rowsWritten: number }[];
  gets: number;
  deletes: number;
  /** workerd CPU from just before the due time until idle again (every run). */
  cpuMs: number;
  /** From the due time to the last DELETE at the stand-ins. */
  wallMs: number;
  load: string[];
}

async function seedLive(stack: LocalStack, hooks: { event: string; payload: Record<string, unknown> }[], tag: string): Promise<void> {
  for (let i = 0; i < hooks.length; i += SEED_BATCH) {
    const batch = hooks.slice(i, i + SEED_BATCH).map((h, k) => ({ ...h, guid: `${tag}-${i + k}` }));
    const res = await fetch(`${stack.url}/test/seed-live`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(batch),
    });
    const body = (await res.json()) as { written?: number };
    if (res.status !== 200 || body.written !== batch.length) throw new Error(`alarm batch: seeding answered ${res.status}: ${JSON.stringify(body)}`);
  }
}

const job = (runner: string, i: number, startedAt: string) => ({
  runner,
  repo: REPO,
  runId: 800_000 + i,
  runAttempt: 1,
  jobId: 900_000 + i,
  installationId: INSTALLATION,
  startedAt,
});

export async function measureAlarmBatch(batch: number, background: number, log: (line: string) => void): Promise<AlarmBatch> {
  const load = [loadAverage()];
  const namespaces = namespacesFor(50_000);
  const router = await startKubeRouter();
  const others: KubeTenant[] = [];
  let stack: LocalStack | undefined;
  try {
    stack = await startLocalStack({
      repositories: [REPO],
      installationId: INSTALLATION,
      namespace: namespaces[0],
      settings: {
        ...PRODUCTION_SETTINGS,
        REAPER_MAX_DELETIONS_PER_MINUTE: String(batch),
        KUBE_API_URL: router.url,
        REAPER_NAMESPACES: namespaces.join(","),
        ...BENCH_LOGS,
      },
      startTimeoutMs: 120_000,
    });
    const tenants = [stack.kube, ...(await routeTenants(router, stack, namespaces, others))];
    const pids = workerdPidsFor(Number(new URL(stack.url).port));
    if (pids.length === 0) throw new Error("alarm batch: found no workerd process under wrangler dev");

    // The background: jobs in progress, not due for an hour (their recheck), in the ledger only.
    const now = Date.now();
    const started = new Date(now - 60_000).toISOString();
    await seedLive(
      stack,
      Array.from({ length: background }, (_, i) => ({
        event: "workflow_job",
        payload: workflowJobPayload("in_progress", job(`arc-runners-bg-runner-${i}`, batch + i, started)),
      })),
      "bg",
    );
    log(`  seeded ${background} in-progress rows in ${((Date.now() - now) / 1000).toFixed(0)} s`);

    // The batch: completed so that every grace ends at the same second, LEAD_SECONDS from now.
    const dueAt = Math.ceil((Date.now() + LEAD_SECONDS * 1000) / 1000) * 1000;
    const completedAt = new Date(dueAt - GRACE_SECONDS * 1000).toISOString();
    const names = Array.from({ length: batch }, (_, i) => `arc-runners-alarm-runner-${i.toString().padStart(4, "0")}`);
    for (const [n, namespace] of namespaces.entries()) {
      const mine = names.flatMap((name, i) => (i % namespaces.length === n ? [{ name, i }] : []));
      if (mine.length > 0)
        await tenants[n]!.seedAll(
          mine.map(({ name, i }) =>
            makeEphemeralRunner({
              namespace,
              scaleSet: namespace,
              name,
              workflowRunId: 800_000 + i,
              jobRepositoryName: REPO,
              creationTimestamp: new Date(now - 65_000).toISOString(),
            }),
          ),
        );
    }
    await seedLive(
      stack,
      names.flatMap((name, i) => [
        { event: "workflow_job", payload: workflowJobPayload("in_progress", job(name, i, started)) },
        { event: "workflow_job", payload: workflowJobPayload("completed", { ...job(name, i, started), completedAt, conclusion: "success" }) },
      ]),
      "due",
    );
    if (Date.now() > dueAt - 5_000) throw new Error("alarm batch: seeding ran past the due time: the CPU before it would mix with the alarm's");
    await waitIdle(pids, { quietMsPerSecond: 20, timeoutMs: Math.max(1_000, dueAt - Date.now() - 3_000) });
    await Promise.all(tenants.map((t) => t.clearCalls()));
    const runsBefore = stack.logLines("alarm").length;
    load.push(loadAverage());
    await new Promise((r) => setTimeout(r, Math.max(0, dueAt - Date.now() - 1_500)));
    const cpu0 = cpuMs(pids);
    const calls = async () => (await Promise.all(tenants.map((t) => t.calls()))).flat().filter((k) => k.auth === "serviceaccount");
    const deletes = await waitFor(
      `the alarm to delete all ${batch} due runners`,
      async () => {
        const d = (await calls()).filter((k) => k.method === "DELETE");
        return d.length >= batch ? d : undefined;
      },
      600_000,
      250,
    );
    const wallMs = Math.max(...deletes.map((d) => Date.parse(d.time))) - dueAt;
    await waitIdle(pids, { quietMsPerSecond: 20, timeoutMs: 60_000 });
    const cpu = cpuMs(pids) - cpu0;
    load.push(loadAverage());
    const all = await calls();
    const runs = stack.logLines("alarm").slice(runsBefore) as unknown as AlarmBatch["runs"];
    const r: AlarmBatch = {
      batch,
      background,
      namespaces: namespaces.length,
      runs: runs.map(({ judged, deleted, clusterCalls, rowsRead, rowsWritten }) => ({ judged, deleted, clusterCalls, rowsRead, rowsWritten })),
      gets: all.filter((k) => k.method === "GET").length,
      deletes: all.filter((k) => k.method === "DELETE").length,
      cpuMs: cpu,
      wallMs,
      load,
    };
    log(
      `  ${r.runs.length} alarm run(s) judged ${batch} due runners: ${r.gets} GETs, ${r.deletes} DELETEs, ${(cpu / 1000).toFixed(2)} s of workerd CPU, ${(wallMs / 1000).toFixed(1)} s wall`,
    );
    return r;
  } finally {
    await stack?.stop();
    await Promise.all(others.map((t) => t.dispose().catch(() => undefined)));
    await router.close();
  }
}

if (import.meta.main) {
  const r = await measureAlarmBatch(Number(process.argv[2] ?? ALARM_BATCH), Number(process.argv[3] ?? 10_000), (line) => console.log(line));
  console.log(`\n${alarmBatchTable(r)}`);
}
