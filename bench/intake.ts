// Table 1: POST /webhook in workerd under load from a second process, beside
// a baseline Worker that only verifies the signature, both under `wrangler dev`
// in the same run, at a few concurrency levels.
import { randomBytes } from "node:crypto";
import { startLocalStack } from "../scripts/lib/local-stack.ts";
import { startBaselineStack } from "./baseline-stack.ts";
import { loadFromSecondProcess } from "./load-client.ts";
import type { LoadResult } from "./load.ts";
import { startCpuProfile, type ProfileLine } from "./cpu-profile.ts";
import { cpuMs, wranglerFlag, workerdPidsFor } from "./proc.ts";
import { percentile } from "./stats.ts";
import { BENCH_LOGS, PRODUCTION_SETTINGS } from "./sweep-cost.ts";

// Short rounds, alternating the two targets, pooled: the machine's other load
// drifts, and alternating spreads the drift over both sides.
export const INTAKE = { concurrency: [1, 8, 32], rounds: 3, warmupMs: 1_000, durationMs: 4_000 };

export interface IntakeSide {
  requests: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number;
}

export interface IntakeRow {
  concurrency: number;
  product: IntakeSide;
  baseline: IntakeSide;
  /** The durable minimum: the signature, one INSERT in a SQLite Durable Object, then the answer (bench/durable-baseline-worker.ts). */
  durable?: IntakeSide;
}

export const DURABLE_BASELINE_CONFIG = "bench/durable-baseline.wrangler.toml";

function pooled(rounds: readonly (LoadResult & { cpuMs: number })[]): IntakeSide {
  const latencies = rounds.flatMap((r) => r.latenciesMs);
  const requests = rounds.reduce((s, r) => s + r.requests, 0);
  const seconds = rounds.reduce((s, r) => s + r.seconds, 0);
  return {
    requests,
    errors: rounds.reduce((s, r) => s + r.errors, 0),
    perSecond: requests / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    // CPU over warm-up and window alike, so divide by every request sent.
    cpuMsPerRequest:
      rounds.reduce((s, r) => s + r.cpuMs, 0) /
      Math.max(
        1,
        rounds.reduce((s, r) => s + r.sent, 0),
      ),
  };
}

/** Where arc-reaper's intake CPU goes: a profile of one more round (not counted above). */
export interface IntakeProfile {
  concurrency: number;
  requests: number;
  totalMs: number;
  top: ProfileLine[];
}

/** arc-reaper at one level with the same body sent as another event: verified, parsed and counted over RPC, not recorded. */
export interface IntakeSplit {
  concurrency: number;
  recorded: IntakeSide;
  ignored: IntakeSide;
  baseline: IntakeSide;
}

export const PROFILE_CONCURRENCY = 8;

export async function measureIntake(log: (line: string) => void): Promise<{ rows: IntakeRow[]; split: IntakeSplit; profile?: IntakeProfile }> {
  const secret = `bench-${randomBytes(18).toString("base64url")}`;
  const [product, baseline, durable] = await Promise.all([
    startLocalStack({ settings: { ...PRODUCTION_SETTINGS, GITHUB_WEBHOOK_SECRET: secret, ...BENCH_LOGS }, startTimeoutMs: 120_000 }),
    startBaselineStack(secret, 120_000),
    startBaselineStack(secret, 120_000, DURABLE_BASELINE_CONFIG),
  ]);
  try {
    const targets = {
      product: { url: `${product.url}/webhook`, pids: workerdPidsFor(Number(new URL(product.url).port)) },
      baseline: { url: `${baseline.url}/webhook`, pids: workerdPidsFor(Number(new URL(baseline.url).port)) },
      durable: { url: `${durable.url}/webhook`, pids: workerdPidsFor(Number(new URL(durable.url).port)) },
    };
    let firstJobId = 1;
    const rows: IntakeRow[] = [];
    for (const concurrency of INTAKE.concurrency) {
      const rounds: Record<keyof typeof targets, (LoadResult & { cpuMs: number })[]> = { product: [], baseline: [], durable: [] };
      for (let round = 0; round < INTAKE.rounds; round++) {
        // Each target goes first in turn: the machine's drift is spread over all three.
        const names: (keyof typeof targets)[] = ["product", "durable", "baseline"];
        const order = [...names.slice(round % 3), ...names.slice(0, round % 3)];
        for (const name of order) {
          const target = targets[name];
          const cpu0 = cpuMs(target.pids);
          const r = await loadFromSecondProcess({ url: target.url, secret, concurrency, warmupMs: INTAKE.warmupMs, durationMs: INTAKE.durationMs, firstJobId });
          firstJobId += r.sent + 1;
          rounds[name].push({ ...r, cpuMs: cpuMs(target.pids) - cpu0 });
        }
      }
      const row = { concurrency, product: pooled(rounds.product), baseline: pooled(rounds.baseline), durable: pooled(rounds.durable) };
      for (const name of ["product", "durable", "baseline"] as const) {
        const r = row[name];
        log(`  ${name} at ${concurrency}: ${r.perSecond.toFixed(1)} req/s, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, ${r.errors} errors`);
      }
      rows.push(row);
    }
    // The split: the same three kinds of request, alternated, at one level.
    const kinds = {
      recorded: { target: targets.product, event: "workflow_job" },
      ignored: { target: targets.product, event: "push" },
      baseline: { target: targets.baseline, event: "workflow_job" },
    };
    const splitRounds: Record<keyof typeof kinds, (LoadResult & { cpuMs: number })[]> = { recorded: [], ignored: [], baseline: [] };
    for (let round = 0; round < INTAKE.rounds; round++) {
      for (const name of Object.keys(kinds) as (keyof typeof kinds)[]) {
        const { target, event } = kinds[name];
        const cpu0 = cpuMs(target.pids);
        const r = await loadFromSecondProcess({
          url: target.url,
          secret,
          event,
          concurrency: PROFILE_CONCURRENCY,
          warmupMs: INTAKE.warmupMs,
          durationMs: INTAKE.durationMs,
          firstJobId,
        });
        firstJobId += r.sent + 1;
        splitRounds[name].push({ ...r, cpuMs: cpuMs(target.pids) - cpu0 });
      }
    }
    const split = {
      concurrency: PROFILE_CONCURRENCY,
      recorded: pooled(splitRounds.recorded),
      ignored: pooled(splitRounds.ignored),
      baseline: pooled(splitRounds.baseline),
    };
    log(
      `  split at ${PROFILE_CONCURRENCY}: recorded ${split.recorded.cpuMsPerRequest.toFixed(1)}, ignored ${split.ignored.cpuMsPerRequest.toFixed(1)}, baseline ${split.baseline.cpuMsPerRequest.toFixed(1)} ms CPU/req`,
    );
    // Best effort: wrangler's inspector proxy, busy forwarding a log line per delivery, may not answer.
    let profile: IntakeProfile | undefined;
    try {
      const port = Number(wranglerFlag(Number(new URL(product.url).port), "--inspector-port"));
      const session = await startCpuProfile(port);
      const r = await loadFromSecondProcess({
        url: targets.product.url,
        secret,
        concurrency: PROFILE_CONCURRENCY,
        warmupMs: 0,
        durationMs: INTAKE.durationMs,
        firstJobId,
      });
      const p = await session.stop();
      log(`  profiled ${r.sent} requests at ${PROFILE_CONCURRENCY} connections: ${p.totalMs.toFixed(0)} ms sampled`);
      profile = { concurrency: PROFILE_CONCURRENCY, requests: r.sent, totalMs: p.totalMs, top: p.top };
    } catch (e) {
      log(`  no intake profile: ${(e as Error).message}`);
    }
    return { rows, split, profile };
  } finally {
    await Promise.all([product.stop(), baseline.stop(), durable.stop()]);
  }
}
