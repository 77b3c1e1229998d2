// A quick look at POST /webhook under load (recorded deliveries), for comparing two commits on one machine.
//   node bench/quick-intake.ts [concurrency] [event]
import { randomBytes } from "node:crypto";
import { startLocalStack } from "../scripts/lib/local-stack.ts";
import { loadFromSecondProcess } from "./load-client.ts";
import { PRODUCTION_SETTINGS } from "./sweep-cost.ts";

const concurrency = Number(process.argv[2] ?? 8);
const event = process.argv[3] ?? "workflow_job";
const secret = `bench-${randomBytes(18).toString("base64url")}`;
const stack = await startLocalStack({ settings: { ...PRODUCTION_SETTINGS, GITHUB_WEBHOOK_SECRET: secret }, startTimeoutMs: 120_000 });
try {
  let first = 1;
  for (let round = 0; round < 3; round++) {
    const r = await loadFromSecondProcess({ url: `${stack.url}/webhook`, secret, event, concurrency, warmupMs: 1000, durationMs: 4000, firstJobId: first });
    first += r.sent + 1;
    process.stdout.write(`${event} at ${concurrency}: ${r.perSecond.toFixed(0)}/s p50 ${r.p50Ms.toFixed(1)} ms p99 ${r.p99Ms.toFixed(1)} ms ${JSON.stringify(r.statuses)}\n`);
  }
} finally {
  await stack.stop();
}
