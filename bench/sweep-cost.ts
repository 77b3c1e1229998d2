// Table 2: what one sweep costs with 100, 1,000 and 10,000 tracked runners,
// measured on the real Worker under `wrangler dev` against the stand-ins.
// Facts are seeded through POST /webhook (real, signed payloads); the cluster
// through the Kubernetes stand-in's control API; then one cron sweep runs.
import { randomBytes } from "node:crypto";
import { startLocalStack, workflowJobPayload, workflowRunPayload, type LocalStack } from "../scripts/lib/local-stack.ts";
import { createKubeTenant, makeEphemeralRunner, roleBindings, type KubeTenant } from "../test/standins/kube/control.ts";
import { startKubeRouter } from "./kube-router.ts";
import { cpuMs, waitIdle, workerdPidsFor } from "./proc.ts";
import { mixFor, type SeedRunner } from "./sweep-mix.ts";

export interface SweepCase {
  runners: number;
  /** Settings over the production defaults (e.g. lifted caps). */
  settings?: Record<string, string>;
  label?: string;
}

export interface SweepCost {
  label: string;
  runners: number;
  seedSeconds: number;
  webhooks: number;
  kvLists: number;
  kvGets: number;
  kvPuts: number;
  clusterCalls: number;
  clusterByVerb: Record<string, number>;
  githubCalls: number;
  githubLogged: number;
  subrequests: number;
  wallMs: number;
  cpuMs: number;
  verdicts: { deleted: number; kept: number; waiting: number; gone: number; errors: number };
}

// The values of wrangler.toml [vars]: what a deployment runs with.
export const PRODUCTION_SETTINGS: Record<string, string> = {
  REAPER_GRACE_SECONDS: "300",
  REAPER_MAX_JOB_SECONDS: "432000",
  REAPER_MAX_DELETIONS_PER_SWEEP: "50",
  REAPER_MAX_GITHUB_CALLS_PER_SWEEP: "100",
  REAPER_REDELIVERY_LOOKBACK_SECONDS: "3600",
  REAPER_DRY_RUN: "false",
};

const REPO = "octo-org/octo-repo";
// Two scale sets, two namespaces: the Kubernetes stand-in holds 5,000 objects per tenant,
// so each namespace lives in its own tenant behind one API URL (bench/kube-router.ts).
export const NAMESPACES = ["arc-runners", "arc-runners-b"] as const;
const INSTALLATION = 4242;
const SEED_CONCURRENCY = 16;
const CLUSTER_BATCH = 500;

async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

function webhooksFor(r: SeedRunner): { event: string; payload: Record<string, unknown> }[] {
  const job = { runner: r.runner, repo: REPO, runId: r.runId, runAttempt: 1, jobId: r.jobId, installationId: INSTALLATION, startedAt: r.startedAt };
  const hooks = [{ event: "workflow_job", payload: workflowJobPayload("in_progress", job) }];
  if (r.completedAt && r.role !== "cancelled") {
    hooks.push({ event: "workflow_job", payload: workflowJobPayload("completed", { ...job, completedAt: r.completedAt, conclusion: "success" }) });
  }
  if (r.role === "cancelled" && r.completedAt) {
    hooks.push({ event: "workflow_run", payload: workflowRunPayload({ repo: REPO, runId: r.runId, runAttempt: 1, installationId: INSTALLATION, updatedAt: r.completedAt, conclusion: "cancelled" }) });
  }
  return hooks;
}

async function seed(stack: LocalStack, tenants: readonly KubeTenant[], runners: readonly SeedRunner[]): Promise<number> {
  const hooks = runners.flatMap(webhooksFor);
  await pool(hooks, SEED_CONCURRENCY, async ({ event, payload }) => {
    const res = await stack.postWebhook(event, payload);
    if (res.status !== 202) throw new Error(`seeding: POST /webhook answered ${res.status}: ${JSON.stringify(res.body)}`);
  });
  for (const [n, namespace] of NAMESPACES.entries()) {
    const inCluster = runners.filter((r) => r.inCluster && r.index % NAMESPACES.length === n);
    for (let i = 0; i < inCluster.length; i += CLUSTER_BATCH) {
      await tenants[n]!.seedAll(
        inCluster.slice(i, i + CLUSTER_BATCH).map((r) =>
          makeEphemeralRunner({
            namespace,
            scaleSet: namespace,
            name: r.runner,
            workflowRunId: r.runId,
            jobRepositoryName: REPO,
            creationTimestamp: new Date(Date.parse(r.startedAt) - 5_000).toISOString(),
          }),
        ),
      );
    }
  }
  // Past the bound: GitHub still shows the job in_progress when asked.
  for (const r of runners.filter((x) => x.role === "over-bound")) {
    await stack.github.putJob({ repo: REPO, id: r.jobId, run_id: r.runId, run_attempt: 1, status: "in_progress", started_at: r.startedAt, runner_name: r.runner });
  }
  return hooks.length;
}

export async function measureSweep(c: SweepCase, log: (line: string) => void): Promise<SweepCost> {
  const router = await startKubeRouter();
  let stack: LocalStack | undefined;
  let second: KubeTenant | undefined;
  try {
    stack = await startLocalStack({
      repositories: [REPO],
      installationId: INSTALLATION,
      namespace: NAMESPACES[0],
      settings: { ...PRODUCTION_SETTINGS, KUBE_API_URL: router.url, REAPER_NAMESPACES: NAMESPACES.join(","), ...c.settings },
      startTimeoutMs: 120_000,
    });
    // The first namespace is the stack's own tenant, with arc-reaper's token; the second
    // gets a tenant of its own with the same RBAC, and the router sends its token.
    router.routes.set(NAMESPACES[0], { baseUrl: stack.kube.baseUrl });
    second = await createKubeTenant(new URL(stack.kube.baseUrl).origin, { namespaces: [NAMESPACES[1]] });
    const token = `bench-kube-${randomBytes(18).toString("base64url")}`;
    await second.addServiceAccount({ name: "arc-reaper", namespace: "arc-reaper", token, bindings: roleBindings([NAMESPACES[1]]) });
    router.routes.set(NAMESPACES[1], { baseUrl: second.baseUrl, token });
    const tenants = [stack.kube, second];

    const seedStart = performance.now();
    const runners = mixFor(c.runners, Date.now());
    const webhooks = await seed(stack, tenants, runners);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    log(`  seeded ${c.runners} runners (${webhooks} webhooks) in ${seedSeconds.toFixed(1)} s`);

    await Promise.all([...tenants.map((t) => t.clearCalls()), stack.github.clearCalls()]);
    const pids = workerdPidsFor(Number(new URL(stack.url).port));
    if (pids.length === 0) throw new Error("sweep cost: found no workerd process under wrangler dev");
    // The seeding's log output and garbage collection must not land in the sweep's CPU.
    if (!(await waitIdle(pids))) log("  workerd did not go idle after seeding: the CPU figure includes some of it");
    const cpu0 = cpuMs(pids);
    const t0 = performance.now();
    const { summary } = await stack.sweep({ timeoutMs: 300_000 });
    const wallMs = performance.now() - t0;
    const cpu = cpuMs(pids) - cpu0;

    // Every tracked runner is judged once: fewer means the seeding did not land.
    if (summary.checked !== c.runners) throw new Error(`sweep cost: the sweep checked ${summary.checked} runners, not the ${c.runners} seeded`);
    const line = summary as unknown as Record<string, unknown>;
    const kvLists = Number(line.kvLists);
    const kvPuts = Number(line.kvPuts);
    // The sweep's store type is Pick<KVNamespace, "put" | "list">: it cannot get.
    const kvGets = typeof line.kvGets === "number" ? line.kvGets : 0;
    const kubeCalls = (await Promise.all(tenants.map((t) => t.calls()))).flat().filter((k) => k.auth === "serviceaccount");
    const clusterByVerb: Record<string, number> = {};
    for (const k of kubeCalls) {
      const verb = k.method === "GET" ? (k.path.endsWith("/ephemeralrunners") ? "list" : "get") : k.method.toLowerCase();
      clusterByVerb[verb] = (clusterByVerb[verb] ?? 0) + 1;
    }
    const githubCalls = (await stack.github.calls()).length;
    return {
      label: c.label ?? c.runners.toLocaleString("en-US"),
      runners: c.runners,
      seedSeconds,
      webhooks,
      kvLists,
      kvGets,
      kvPuts,
      clusterCalls: kubeCalls.length,
      clusterByVerb,
      githubCalls,
      githubLogged: summary.githubCalls,
      subrequests: kubeCalls.length + githubCalls + kvLists + kvGets + kvPuts,
      wallMs,
      cpuMs: cpu,
      verdicts: { deleted: summary.deleted, kept: summary.kept, waiting: summary.waiting, gone: summary.gone, errors: summary.errors },
    };
  } finally {
    await stack?.stop();
    await second?.dispose().catch(() => undefined);
    await router.close();
  }
}
