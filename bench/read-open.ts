// The sweep's read of the open rows alone, whole (every column, the story parsed)
// beside the read to judge (no story, no names): workerd CPU per read over N
// live rows seeded in bulk, the two alternated on one stack.
//   node bench/read-open.ts [rows] [rounds]
import { startLocalStack } from "../scripts/lib/local-stack.ts";
import { cpuMs, waitIdle, workerdPidsFor } from "./proc.ts";
import { BENCH_LOGS, PRODUCTION_SETTINGS, seedLive } from "./sweep-cost.ts";
import { ALL_RUNNING, mixFor } from "./sweep-mix.ts";

const rows = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 8);
const TIMES = 5;
const stack = await startLocalStack({ settings: { ...PRODUCTION_SETTINGS, ...BENCH_LOGS }, startTimeoutMs: 120_000 });
try {
  await seedLive(stack, [], mixFor(rows, Date.now(), ALL_RUNNING), [], true);
  const pids = workerdPidsFor(Number(new URL(stack.url).port));
  const perRead: Record<"whole" | "judged", number[]> = { whole: [], judged: [] };
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 === 0 ? (["whole", "judged"] as const) : (["judged", "whole"] as const)) {
      await waitIdle(pids, { quietMsPerSecond: 20, timeoutMs: 15_000 });
      const cpu0 = cpuMs(pids);
      const res = await fetch(`${stack.url}/test/read-open?whole=${kind === "whole" ? 1 : 0}&times=${TIMES}`, { method: "POST" });
      const body = (await res.json()) as { rows?: number };
      if (body.rows !== rows) throw new Error(`read-open answered ${res.status}: ${JSON.stringify(body)}`);
      perRead[kind].push((cpuMs(pids) - cpu0) / TIMES);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const kind of ["whole", "judged"] as const)
    process.stdout.write(
      `${kind}: ${perRead[kind].map((x) => x.toFixed(0)).join(", ")} ms per read of ${rows} rows; median ${median(perRead[kind]).toFixed(0)}\n`,
    );
} finally {
  await stack.stop();
}
