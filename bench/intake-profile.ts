// CPU profiles of the intake under `wrangler dev`: recorded deliveries
// (workflow_job.in_progress) and ignored ones (push), each profiled on its own
// while a second process sends them at 8 connections, summed by module.
//   node bench/intake-profile.ts
import { randomBytes } from "node:crypto";
import { startLocalStack } from "../scripts/lib/local-stack.ts";
import { startCpuProfile, type ProfileLine } from "./cpu-profile.ts";
import { loadFromSecondProcess } from "./load-client.ts";
import { loadAverage } from "./machine.ts";
import { wranglerFlag } from "./proc.ts";
import { profileTable } from "./tables.ts";
import { BENCH_LOGS, PRODUCTION_SETTINGS } from "./sweep-cost.ts";

const CONCURRENCY = 8;
const secret = `bench-${randomBytes(18).toString("base64url")}`;
const stack = await startLocalStack({ settings: { ...PRODUCTION_SETTINGS, GITHUB_WEBHOOK_SECRET: secret, ...BENCH_LOGS }, startTimeoutMs: 120_000 });
const byModule = (top: readonly ProfileLine[]): string =>
  [...top.reduce((m, l) => m.set(group(l), (m.get(group(l)) ?? 0) + l.share), new Map<string, number>())]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${(v * 100).toFixed(1)}%`)
    .join(", ");
function group(l: ProfileLine): string {
  const m = l.module || l.where;
  if (m.startsWith("src/")) return m.split("/").slice(0, 2).join("/");
  if (m.includes("@octokit") || m.includes("webhooks")) return "@octokit/webhooks";
  if (m.includes("hono")) return "hono";
  return m === "" ? "(runtime: builtins, GC)" : m.split("/")[0]!;
}
try {
  const port = Number(wranglerFlag(Number(new URL(stack.url).port), "--inspector-port"));
  let first = 1;
  for (const event of ["workflow_job", "push"]) {
    // Warm up first, outside the profile.
    const warm = await loadFromSecondProcess({
      url: `${stack.url}/webhook`,
      secret,
      event,
      concurrency: CONCURRENCY,
      warmupMs: 0,
      durationMs: 1500,
      firstJobId: first,
    });
    first += warm.sent + 1;
    const session = await startCpuProfile(port);
    const r = await loadFromSecondProcess({
      url: `${stack.url}/webhook`,
      secret,
      event,
      concurrency: CONCURRENCY,
      warmupMs: 0,
      durationMs: 4000,
      firstJobId: first,
    });
    first += r.sent + 1;
    const p = await session.stop();
    process.stdout.write(
      `\n${event}: ${r.sent} requests at ${CONCURRENCY} connections (${r.perSecond.toFixed(0)}/s), ${p.totalMs.toFixed(0)} ms of CPU sampled (${(p.totalMs / Math.max(1, r.sent)).toFixed(2)} ms/request); load average ${loadAverage()}\n`,
    );
    process.stdout.write(`by module (top 25 functions): ${byModule(p.top)}\n\n${profileTable(p.top)}\n`);
  }
} finally {
  await stack.stop();
}
