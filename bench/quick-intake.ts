// A quick look at POST /webhook under load, alternating arc-reaper and the
// signature-only baseline Worker, for comparing two commits on one machine.
//   node bench/quick-intake.ts [concurrency] [event] [rounds]
import { randomBytes } from "node:crypto";
import { startLocalStack } from "../scripts/lib/local-stack.ts";
import { startBaselineStack } from "./baseline-stack.ts";
import { loadFromSecondProcess } from "./load-client.ts";
import { BENCH_LOGS, PRODUCTION_SETTINGS } from "./sweep-cost.ts";

const concurrency = Number(process.argv[2] ?? 8);
const event = process.argv[3] ?? "workflow_job";
const rounds = Number(process.argv[4] ?? 3);
const secret = `bench-${randomBytes(18).toString("base64url")}`;
const [product, baseline] = await Promise.all([
  startLocalStack({ settings: { ...PRODUCTION_SETTINGS, GITHUB_WEBHOOK_SECRET: secret, ...BENCH_LOGS }, startTimeoutMs: 120_000 }),
  startBaselineStack(secret, 120_000),
]);
try {
  let first = 1;
  const totals = { product: 0, baseline: 0 };
  for (let round = 0; round < rounds; round++) {
    for (const [name, url] of [
      ["product", product.url],
      ["baseline", baseline.url],
    ] as const) {
      const r = await loadFromSecondProcess({ url: `${url}/webhook`, secret, event, concurrency, warmupMs: 1000, durationMs: 4000, firstJobId: first });
      first += r.sent + 1;
      totals[name] += r.perSecond;
      process.stdout.write(
        `${name} ${event} at ${concurrency}: ${r.perSecond.toFixed(0)}/s p50 ${r.p50Ms?.toFixed(1)} ms p99 ${r.p99Ms?.toFixed(1)} ms ${JSON.stringify(r.statuses)}\n`,
      );
    }
  }
  process.stdout.write(
    `mean: arc-reaper ${(totals.product / rounds).toFixed(0)}/s, baseline ${(totals.baseline / rounds).toFixed(0)}/s: ${(totals.product / totals.baseline).toFixed(2)}x\n`,
  );
} finally {
  await Promise.all([product.stop(), baseline.stop()]);
}
