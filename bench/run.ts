// npm run bench: three tables, printed and written to BENCHMARKS.md.
//   1. webhook intake under load, beside a signature-only baseline (measured)
//   2. the cost of one sweep at 100, 1,000 and 10,000 tracked runners (measured)
//   3. one synthetic day through arc-reaper and a polling reaper (simulated)
// Everything runs on 127.0.0.1 and ends by itself; a guard stops it after 15 minutes.
//   npm run bench -- --only=intake,sweep,day   run some tables; BENCHMARKS.md is written only when all ran
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "../scripts/lib/local-stack.ts";
import { runDay } from "./day-table.ts";
import { measureIntake } from "./intake.ts";
import { describeMachine, loadAverage } from "./machine.ts";
import { intakeTable, marginalCpu, sweepTable } from "./tables.ts";
import { measureSweep, type SweepCost } from "./sweep-cost.ts";
import { renderReport } from "./report.ts";

const GUARD_MS = 15 * 60_000;
const SWEEP_SIZES = [100, 1_000, 10_000];

const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",") ?? ["intake", "sweep", "day"];
const log = (line: string) => process.stdout.write(`${line}\n`);

// The stacks kill their process groups on exit, so exiting here leaves nothing behind.
const guard = setTimeout(() => {
  process.stderr.write(`bench: still running after ${GUARD_MS / 60_000} minutes: giving up\n`);
  process.exit(1);
}, GUARD_MS);
guard.unref();

const started = performance.now();
const machine = describeMachine();
const loadBefore = loadAverage();
log(`arc-reaper bench on ${machine.cores} × ${machine.cpuModel}, Node ${machine.node}, wrangler ${machine.wrangler}; load average ${loadBefore}`);

let intake: Awaited<ReturnType<typeof measureIntake>> | undefined;
if (only.includes("intake")) {
  log("\n1. Webhook intake (wrangler dev, load from a second process)");
  intake = await measureIntake(log);
  log(`\n${intakeTable(intake)}`);
}

let sweeps: SweepCost[] | undefined;
if (only.includes("sweep")) {
  log("\n2. Sweep cost (wrangler dev against the stand-ins)");
  sweeps = [];
  for (const runners of SWEEP_SIZES) sweeps.push(await measureSweep({ runners }, log));
  log(`\n${sweepTable(sweeps)}`);
  const marginal = marginalCpu(sweeps);
  if (marginal) log(marginal);
}

let day: ReturnType<typeof runDay> | undefined;
if (only.includes("day")) {
  log("\n3. One synthetic day (simulation with the real judge)");
  day = runDay();
  log(`\n${day.table}`);
  for (const f of day.facts) log(`- ${f}`);
}

const seconds = (performance.now() - started) / 1000;
const loadAfter = loadAverage();
log(`\nbench took ${seconds.toFixed(0)} s; load average ${loadBefore} before, ${loadAfter} after`);
if (intake && sweeps && day) {
  const path = join(ROOT, "BENCHMARKS.md");
  await writeFile(path, renderReport({ machine, loadBefore, loadAfter, seconds, intake, sweeps, day }));
  log(`wrote ${path}`);
}
clearTimeout(guard);
