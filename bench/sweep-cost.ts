// What one cron sweep costs, measured on the real Worker under `wrangler dev`
// against the stand-ins: live runners seeded through POST /webhook (real,
// signed payloads) and the Kubernetes stand-in's control API; closed history
// seeded straight into the ledger (POST /test/seed-history, bench only); then
// the alarm settles and sweeps run: the first (it writes every row's verdict)
// and then steady-state ones (they write only changes).
import type { ListShape } from "./list-shape-bytes.ts";
import { randomBytes } from "node:crypto";
import { startLocalStack, workflowJobPayload, type LocalStack, type SweepLog } from "../scripts/lib/local-stack.ts";
import { createKubeTenant, makeEphemeralRunner, roleBindings, type KubeTenant } from "../test/standins/kube/control.ts";
import { startKubeRouter, type KubeRouter } from "./kube-router.ts";
import { startCpuProfile, type ProfileLine } from "./cpu-profile.ts";
import { cpuMs, waitIdle, wranglerFlag, workerdPidsFor } from "./proc.ts";
import { mixFor, type SeedRunner } from "./sweep-mix.ts";

export interface SweepCase {
  runners: number;
  /** Closed rows put in the ledger before the sweeps. */
  history?: number;
  /** Steady-state sweeps after the first; the median is reported. */
  steadySweeps?: number;
  /** Also take a CPU profile of one more steady-state sweep (not counted in its CPU figures). */
  profile?: boolean;
  /** The roles' shares (sweep-mix.ts): MIX unless given. */
  mix?: Parameters<typeof mixFor>[2];
  /** Every line wrangler prints, as it comes (diagnostics). */
  onLog?: (line: string) => void;
  /** false: the API server refuses Tables (406), so the sweep lists full objects, as before it listed as Tables. */
  tables?: boolean;
  /** Seed in bulk whatever the size (POST /test/seed-live): minutes quicker on a loaded machine. */
  bulk?: boolean;
}

/** One sweep as measured. */
export interface OneSweep {
  checked: number;
  deleted: number;
  rowsRead: number;
  rowsWritten: number;
  clusterCalls: number;
  clusterByVerb: Record<string, number>;
  githubCalls: number;
  decisionLines: number;
  wallMs: number;
  cpuMs: number;
  /** Runners the sweep left for the next sweep's first look (a sweep gives at most 10,000 theirs). */
  deferred: number;
}

export interface SweepCost {
  runners: number;
  history: number;
  seedSeconds: number;
  webhooks: number;
  first: OneSweep;
  /** The sweeps after the first that still gave runners their first look (the fleet's first look spread over passes). */
  firstMore: OneSweep[];
  /** The steady-state sweeps, in order. */
  steady: OneSweep[];
  profile?: { totalMs: number; top: ProfileLine[] };
  /** Bytes per runner of a list page in each listing shape (bench/list-shape-bytes.ts), beside the sweep that lists them. */
  shapes?: ListShape[];
}

// What a deployment runs with: the code's defaults (wrangler.toml leaves them out), dry run off.
export const PRODUCTION_SETTINGS: Record<string, string> = {
  REAPER_GRACE_SECONDS: "300",
  REAPER_MAX_JOB_SECONDS: "432000",
  REAPER_MAX_DELETIONS_PER_MINUTE: "50",
  REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "100",
  REAPER_REDELIVERY_LOOKBACK_SECONDS: "3600",
  REAPER_DELIVERIES_EVERY_SECONDS: "300",
  REAPER_RECHECK_SECONDS: "3600",
  REAPER_HISTORY_DAYS: "7",
  REAPER_DRY_RUN: "false",
};

/**
 * The bench's stacks write the ledger's log lines 200 to a console.log (test/hooks/batch-console-logs.ts):
 * `wrangler dev`'s inspector proxy spends about 1 ms and a loopback connection on each console message, which
 * a deployed Worker never pays, and 10,000 of them within a minute exhaust the machine's file descriptors.
 */
export const BENCH_LOGS: Record<string, string> = { ARC_REAPER_TEST_HOOKS: "on", ARC_REAPER_TEST_LOG_BATCH: "200" };

const REPO = "octo-org/octo-repo";
// Two scale sets, two namespaces: the Kubernetes stand-in holds 5,000 objects per tenant,
// so each namespace lives in its own tenant behind one API URL (bench/kube-router.ts).
export const NAMESPACES = ["arc-runners", "arc-runners-b"] as const;
/** Objects per namespace (one stand-in tenant each) when a fleet needs more than two. */
const PER_NAMESPACE = 4_500;
/** Two namespaces up to 9,000 runners (tables 2 and 3 as before); then one more per 4,500 (50,000: 12). */
export function namespacesFor(runners: number): string[] {
  const n = Math.max(NAMESPACES.length, Math.ceil(runners / PER_NAMESPACE));
  return [...NAMESPACES, ...Array.from({ length: n - NAMESPACES.length }, (_, i) => `arc-runners-${String.fromCharCode(99 + i)}`)];
}
const INSTALLATION = 4242;
const SEED_CONCURRENCY = 16;
const CLUSTER_BATCH = 500;
export const HISTORY_BATCH = 50_000;

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
  if (r.completedAt)
    hooks.push({ event: "workflow_job", payload: workflowJobPayload("completed", { ...job, completedAt: r.completedAt, conclusion: "success" }) });
  return hooks;
}

/** Above this many live runners the webhooks are recorded in bulk (POST /test/seed-live, each through the ledger's receive), not one request each. */
const BULK_ABOVE = 10_000;
const BULK_BATCH = 200;

export async function seedLive(
  stack: LocalStack,
  tenants: readonly KubeTenant[],
  runners: readonly SeedRunner[],
  namespaces: readonly string[],
  bulk = false,
): Promise<number> {
  const hooks = runners.flatMap(webhooksFor);
  if (bulk || runners.length > BULK_ABOVE) {
    for (let i = 0; i < hooks.length; i += BULK_BATCH) {
      const batch = hooks.slice(i, i + BULK_BATCH).map((h, k) => ({ ...h, guid: `seed-${i + k}` }));
      const res = await fetch(`${stack.url}/test/seed-live`, {
        method: "POST",
        headers: { authorization: `Bearer ${stack.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(batch),
      }).catch(async (e: unknown) => {
        const probe = await fetch(`${stack.url}/test/seed-live`, { method: "POST", headers: { authorization: `Bearer ${stack.adminToken}` }, body: "[]" }).then(
          async (r) => `${r.status} ${await r.text()}`,
          (x: unknown) => String(x),
        );
        throw new Error(`seeding live runners in bulk (batch at ${i}): ${String(e)}; an empty batch answers ${probe}`);
      });
      const body = (await res.json()) as { written?: number };
      if (res.status !== 200 || body.written !== batch.length) throw new Error(`seeding live runners in bulk: answered ${res.status}: ${JSON.stringify(body)}`);
    }
  } else
    await pool(hooks, SEED_CONCURRENCY, async ({ event, payload }) => {
      // wrangler dev's proxy may drop a connection on a loaded machine: a delivery is retried (twice), as GitHub would.
      const post = async (tries: number): Promise<Awaited<ReturnType<LocalStack["postWebhook"]>>> => {
        try {
          return await stack.postWebhook(event, payload);
        } catch (e) {
          if (tries <= 1) throw e;
          await new Promise((r) => setTimeout(r, 500));
          return post(tries - 1);
        }
      };
      const res = await post(3);
      if (res.status !== 202) throw new Error(`seeding: POST /webhook answered ${res.status}: ${JSON.stringify(res.body)}`);
    });
  for (const [n, namespace] of namespaces.entries()) {
    const inCluster = runners.filter((r) => r.inCluster && r.index % namespaces.length === n);
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
  return hooks.length;
}

async function seedHistory(stack: LocalStack, count: number): Promise<void> {
  for (let from = 0; from < count; from += HISTORY_BATCH) {
    const n = Math.min(HISTORY_BATCH, count - from);
    const res = await fetch(`${stack.url}/test/seed-history?from=${from}&count=${n}`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.adminToken}` },
    });
    const body = (await res.json()) as { written?: number };
    if (res.status !== 200 || (body.written ?? 0) < n) throw new Error(`seeding history: answered ${res.status}: ${JSON.stringify(body)}`);
  }
}

export async function measureOne(
  stack: LocalStack,
  tenants: readonly KubeTenant[],
  pids: readonly number[],
  log: (line: string) => void,
  idleTimeoutMs = 15_000,
): Promise<OneSweep> {
  // Earlier work (seeding, the alarm, the last sweep's log lines) must not land in this sweep's CPU.
  if (!(await waitIdle(pids, { quietMsPerSecond: 20, timeoutMs: idleTimeoutMs }))) log("  workerd did not go idle: the CPU figure includes some other work");
  await Promise.all([...tenants.map((t) => t.clearCalls()), stack.github.clearCalls()]);
  const cpu0 = cpuMs(pids);
  const t0 = performance.now();
  const { summary, decisions } = await stack.sweep({ timeoutMs: 900_000 });
  const wallMs = performance.now() - t0;
  const cpu = cpuMs(pids) - cpu0;
  const s: SweepLog = summary;
  const kubeCalls = (await Promise.all(tenants.map((t) => t.calls()))).flat().filter((k) => k.auth === "serviceaccount");
  const clusterByVerb: Record<string, number> = {};
  for (const k of kubeCalls) {
    const verb = k.method === "GET" ? (k.path.endsWith("/ephemeralrunners") ? "list" : "get") : k.method.toLowerCase();
    clusterByVerb[verb] = (clusterByVerb[verb] ?? 0) + 1;
  }
  return {
    checked: s.checked,
    deleted: s.deleted,
    rowsRead: s.rowsRead,
    rowsWritten: s.rowsWritten,
    clusterCalls: kubeCalls.length,
    clusterByVerb,
    githubCalls: (await stack.github.calls()).length,
    // Lines past the log budget of the invocation are counted in the sweep line, not written (src/log.ts).
    decisionLines: decisions.length + (s.logSummarized?.["decision"] ?? 0),
    wallMs,
    cpuMs: cpu,
    deferred: s.deferred ?? 0,
  };
}

/**
 * The first namespace is the stack's own tenant, with arc-reaper's token; each other gets a tenant of its
 * own with the same RBAC (the stand-in holds 5,000 objects a tenant), and the router sends its token.
 * Answers the new tenants, also pushed to `others` as they are made (so a failure still stops them).
 */
export async function routeTenants(router: KubeRouter, stack: LocalStack, namespaces: readonly string[], others: KubeTenant[]): Promise<KubeTenant[]> {
  router.routes.set(namespaces[0]!, { baseUrl: stack.kube.baseUrl });
  for (const namespace of namespaces.slice(1)) {
    const tenant = await createKubeTenant(new URL(stack.kube.baseUrl).origin, { namespaces: [namespace] });
    others.push(tenant);
    const token = `bench-kube-${randomBytes(18).toString("base64url")}`;
    await tenant.addServiceAccount({ name: "arc-reaper", namespace: "arc-reaper", token, bindings: roleBindings([namespace]) });
    router.routes.set(namespace, { baseUrl: tenant.baseUrl, token });
  }
  return others;
}

export async function measureSweep(c: SweepCase, log: (line: string) => void): Promise<SweepCost> {
  const router = await startKubeRouter();
  let stack: LocalStack | undefined;
  const namespaces = namespacesFor(c.runners);
  const others: KubeTenant[] = [];
  try {
    stack = await startLocalStack({
      repositories: [REPO],
      installationId: INSTALLATION,
      namespace: NAMESPACES[0],
      settings: { ...PRODUCTION_SETTINGS, KUBE_API_URL: router.url, REAPER_NAMESPACES: namespaces.join(","), ...BENCH_LOGS },
      startTimeoutMs: 120_000,
      onLog: c.onLog,
    });
    const tenants = [stack.kube, ...(await routeTenants(router, stack, namespaces, others))];
    if (c.tables === false) for (const t of tenants) await t.setTables({ refuse: true });

    const seedStart = performance.now();
    const history = c.history ?? 0;
    if (history > 0) await seedHistory(stack, history);
    const webhooks = await seedLive(stack, tenants, mixFor(c.runners, Date.now(), c.mix), namespaces, c.bulk);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    log(`  seeded ${c.runners} live runners (${webhooks} webhooks) and ${history} closed rows in ${seedSeconds.toFixed(1)} s`);
    // The mix's "waiting" jobs completed as seeding began: past the grace (300 s), they are due, and the
    // cap holds most of them back in every sweep, so the figures measure another workload (a loaded machine).
    if (seedSeconds > Number(PRODUCTION_SETTINGS.REAPER_GRACE_SECONDS) - 30)
      log(
        `  WARNING: seeding took ${seedSeconds.toFixed(0)} s, near or past the grace: "waiting" runners are due and held by the cap; these figures are not the steady mix`,
      );

    const pids = workerdPidsFor(Number(new URL(stack.url).port));
    if (pids.length === 0) throw new Error("sweep cost: found no workerd process under wrangler dev");
    // The alarm works through the mix's due rows first (a batch of 100 a run, each read in every namespace):
    // at 50,000 runners that takes minutes, and a sweep queued behind it would outlast the trigger's 300 s.
    const first = await measureOne(stack, tenants, pids, log, Math.max(15_000, c.runners * 12));
    // Runners beyond one sweep's first looks wait for the next sweeps: measured until none waits.
    const firstMore: OneSweep[] = [];
    for (let last = first; last.deferred > 0 && firstMore.length < 20; ) firstMore.push((last = await measureOne(stack, tenants, pids, log)));
    const steady: OneSweep[] = [];
    for (let i = 0; i < (c.steadySweeps ?? 3); i++) steady.push(await measureOne(stack, tenants, pids, log));
    let profile: SweepCost["profile"];
    if (c.profile) {
      const port = Number(wranglerFlag(Number(new URL(stack.url).port), "--inspector-port"));
      await waitIdle(pids);
      log(`  profiling one more sweep over the inspector on port ${port}`);
      try {
        const session = await startCpuProfile(port);
        await stack.sweep({ timeoutMs: 900_000 });
        profile = await session.stop();
      } catch (e) {
        log(`  no profile: ${(e as Error).message}`);
      }
    }
    const open = first.checked;
    log(
      `  first sweep: ${open} checked, ${first.rowsRead} rows read, ${first.rowsWritten} written, ${first.cpuMs} ms CPU; steady: ${steady.map((s) => `${s.rowsRead} read / ${s.cpuMs} ms`).join(", ")}`,
    );
    return { runners: c.runners, history, seedSeconds, webhooks, first, firstMore, steady, profile };
  } finally {
    await stack?.stop();
    await Promise.all(others.map((t) => t.dispose().catch(() => undefined)));
    await router.close();
  }
}
