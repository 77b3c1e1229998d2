// What a sweep costs with runners ARC marked Failed (REAPER_FAILED_SECONDS set), on the real Worker
// under `wrangler dev` against the Kubernetes stand-in: FAILED_SLOTS Failed objects of one scale set
// in the cluster, FAILED_HISTORY closed Failed rows of that scale set in the ledger (deleted by
// arc-reaper over the last REAPER_HISTORY_DAYS, POST /test/seed-history?failed=, bench only); then a
// first sweep (it writes each Failed runner's row) and steady ones.
//   node bench/failed-sweep.ts        this table alone (`npm run bench -- --only=failed` runs it too)
import { startLocalStack, type LocalStack } from "../scripts/lib/local-stack.ts";
import { makeEphemeralRunner } from "../test/standins/kube/control.ts";
import { workerdPidsFor } from "./proc.ts";
import { BENCH_LOGS, measureOne, PRODUCTION_SETTINGS, type OneSweep } from "./sweep-cost.ts";

export const FAILED_SLOTS = 500;
export const FAILED_HISTORY = 10_000;
const NAMESPACE = "arc-runners";
const SCALE_SET = "arc-runners";
/** Failed runners are deleted an hour after they failed: the live ones failed a minute ago, so each sweep keeps and counts them. */
const FAILED_SECONDS = 3600;
const HISTORY_SPREAD_MS = 7 * 86_400_000;
const SEED_BATCH = 250;

export interface FailedSweepCost {
  slots: number;
  history: number;
  first: OneSweep;
  steady: OneSweep[];
}

async function seedFailedHistory(stack: LocalStack, count: number): Promise<void> {
  const res = await fetch(`${stack.url}/test/seed-history?from=0&count=${count}&failed=${SCALE_SET}&spreadMs=${HISTORY_SPREAD_MS}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.adminToken}` },
  });
  const body = (await res.json()) as { written?: number };
  if (res.status !== 200 || (body.written ?? 0) < count) throw new Error(`seeding Failed history: answered ${res.status}: ${JSON.stringify(body)}`);
}

export async function measureFailedSweep(
  log: (line: string) => void,
  o: { slots?: number; history?: number; steadySweeps?: number } = {},
): Promise<FailedSweepCost> {
  const slots = o.slots ?? FAILED_SLOTS;
  const history = o.history ?? FAILED_HISTORY;
  let stack: LocalStack | undefined;
  try {
    stack = await startLocalStack({
      namespace: NAMESPACE,
      settings: { ...PRODUCTION_SETTINGS, REAPER_FAILED_SECONDS: String(FAILED_SECONDS), ...BENCH_LOGS },
      startTimeoutMs: 120_000,
    });
    await seedFailedHistory(stack, history);
    const failedAt = new Date(Date.now() - 60_000).toISOString();
    const objects = Array.from({ length: slots }, (_, i) =>
      makeEphemeralRunner({
        namespace: NAMESPACE,
        scaleSet: SCALE_SET,
        name: `${SCALE_SET}-bench-runner-f${String(i).padStart(4, "0")}`,
        phase: "Failed",
        creationTimestamp: new Date(Date.now() - 120_000).toISOString(),
        status: { ready: false, reason: "PodCreateFailed", message: "admission webhook denied the request", failures: { [`pod-${i}`]: failedAt } },
      }),
    );
    for (let i = 0; i < objects.length; i += SEED_BATCH) await stack.kube.seedAll(objects.slice(i, i + SEED_BATCH));
    log(`  seeded ${slots} Failed runners and ${history} closed Failed rows of scale set ${SCALE_SET}`);
    const pids = workerdPidsFor(Number(new URL(stack.url).port));
    if (pids.length === 0) throw new Error("failed sweep: found no workerd process under wrangler dev");
    const first = await measureOne(stack, [stack.kube], pids, log);
    const steady: OneSweep[] = [];
    for (let i = 0; i < (o.steadySweeps ?? 3); i++) steady.push(await measureOne(stack, [stack.kube], pids, log));
    return { slots, history, first, steady };
  } finally {
    await stack?.stop();
  }
}

/** The table's line: the sweep's CPU and rows read at this many Failed slots and rows of history. */
export function failedSweepLine(c: FailedSweepCost): string {
  const median = [...c.steady].sort((a, b) => a.cpuMs - b.cpuMs)[Math.floor(c.steady.length / 2)];
  return `${c.slots} Failed slots, ${c.history.toLocaleString("en-US")} Failed rows of history: first sweep ${c.first.cpuMs} ms CPU (${c.first.rowsRead.toLocaleString("en-US")} rows read), steady ${median?.cpuMs ?? "?"} ms CPU (${(median?.rowsRead ?? 0).toLocaleString("en-US")} rows read; all: ${c.steady.map((s) => s.cpuMs).join(", ")} ms)`;
}

if (import.meta.main) {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(`Sweep with Failed runners (REAPER_FAILED_SECONDS=${FAILED_SECONDS})`);
  log(failedSweepLine(await measureFailedSweep(log)));
}
