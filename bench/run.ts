// npm run bench: the tables below, printed and written to BENCHMARKS.md.
//   1. webhook intake under load, beside a signature-only baseline, with a CPU profile (measured)
//   2. sweep cost against history: 300 live runners, 0 / 10,000 / 100,000 closed rows (measured)
//   3. one sweep over 10,000 live runners, first and steady state, with a CPU profile (measured)
//   4. the alarm's latency on a sample (measured), then one synthetic day through
//      arc-reaper and a polling reaper (simulated, with those latencies)
//   5. recorded deliveries one ledger sustains, the ledger alone (measured)
//   6. a direct-mode sweep over 50,000 live runners, first and steady (measured); the agent's heap
//      with 50,000 runners, its snapshot of them applied by the ledger, and one alarm run over a full batch (measured)
//   7. a sweep with 500 runners ARC marked Failed and 10,000 Failed rows of history (measured; printed only)
// Everything runs on 127.0.0.1 and ends by itself; a guard stops it after 90 minutes.
//   npm run bench -- --only=intake,history,sweep,day,ledger,fleet,failed   run some tables; BENCHMARKS.md is written only when all ran
//   (each table's figures also go to .bench/bench-<table>.json, with its load average)
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "../scripts/lib/local-stack.ts";
import { agentMemoryLine, measureAgentMemory } from "./agent-memory.ts";
import { ALARM_BATCH, measureAlarmBatch } from "./alarm-batch.ts";
import { measureAlarmLatency } from "./alarm-latency.ts";
import { FAILED_HISTORY, FAILED_SLOTS, failedSweepLine, measureFailedSweep } from "./failed-sweep.ts";
import { runDay } from "./day-table.ts";
import { measureIntake } from "./intake.ts";
import { measureListShapes } from "./list-shape-bytes.ts";
import { ledgerRateTable, measureLedgerRate } from "./ledger-rate.ts";
import { describeMachine, loadAverage } from "./machine.ts";
import { PROFILE_RUNNERS } from "./profile-size.ts";
import { renderReport, type Report } from "./report.ts";
import { agentSteadyLine } from "./report-fleet.ts";
import { measureSnapshotApply } from "./snapshot-apply.ts";
import { measureSnapshot, type SnapshotSize } from "./snapshot-size.ts";
import { measureSweep, type SweepCost } from "./sweep-cost.ts";
import { ALL_RUNNING } from "./sweep-mix.ts";
import {
  alarmBatchTable,
  bigSweepTable,
  durableHeadline,
  FLEET_GOALS,
  fleetHeadline,
  historyTable,
  intakeDurableTable,
  intakeSplitTable,
  intakeTable,
  listShapesTable,
  profileTable,
  snapshotApplyTable,
} from "./tables.ts";

const GUARD_MS = 90 * 60_000;
export const HISTORY_SIZES = [0, 10_000, 100_000];
export const HISTORY_LIVE = 300;
export const BIG_SWEEP = 10_000;
export const FLEET_SWEEP = 50_000;
export const ALARM_SAMPLES = 20;
/** In-progress rows in the ledger beside the alarm's batch (a large fleet's ledger). */
export const ALARM_BACKGROUND = 10_000;

const only = process.argv
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",") ?? ["intake", "history", "sweep", "day", "ledger", "fleet", "failed"];
const log = (line: string) => process.stdout.write(`${line}\n`);

// The stacks kill their process groups on exit, so exiting here leaves nothing behind.
const guard = setTimeout(() => {
  process.stderr.write(`bench: still running after ${GUARD_MS / 60_000} minutes: giving up\n`);
  process.exit(1);
}, GUARD_MS);
guard.unref();

const started = performance.now();
const machine = describeMachine();
const loads: Report["loads"] = {};
const section = async <T>(name: keyof Report["loads"], run: () => Promise<T>): Promise<T> => {
  const before = loadAverage();
  const result = await run();
  loads[name] = [before, loadAverage()];
  // Each table's figures on their own, so a table run alone (--only=) can be checked and rendered later.
  await mkdir(join(ROOT, ".bench"), { recursive: true });
  await writeFile(join(ROOT, ".bench", `bench-${name}.json`), `${JSON.stringify({ load: loads[name], result }, null, 1)}\n`);
  return result;
};
const loadBefore = loadAverage();
log(`arc-reaper bench on ${machine.cores} × ${machine.cpuModel}, Node ${machine.node}, wrangler ${machine.wrangler}; load average ${loadBefore}`);

let intake: Report["intake"] | undefined;
if (only.includes("intake")) {
  log("\n1. Webhook intake (wrangler dev, load from a second process)");
  intake = await section("intake", () => measureIntake(log));
  log(
    `\n${intakeTable(intake.rows)}\n\n${intakeDurableTable(intake.rows)}\n\n${durableHeadline(intake.rows)}\n\n${intakeSplitTable(intake.split)}\n\n${intake.profile ? profileTable(intake.profile.top) : "(no intake profile)"}`,
  );
}

let history: SweepCost[] | undefined;
if (only.includes("history")) {
  log(`\n2. Sweep cost against history (${HISTORY_LIVE} live runners)`);
  history = await section("history", async () => {
    const rows: SweepCost[] = [];
    for (const h of HISTORY_SIZES) rows.push(await measureSweep({ runners: HISTORY_LIVE, history: h, steadySweeps: 5 }, log));
    return rows;
  });
  log(`\n${historyTable(history)}`);
}

let big: SweepCost | undefined;
if (only.includes("sweep")) {
  log(`\n3. One sweep over ${BIG_SWEEP.toLocaleString("en-US")} live runners`);
  big = await section("sweep", async () => {
    const measured = await measureSweep({ runners: BIG_SWEEP, steadySweeps: 3 }, log);
    log(`  profiling a steady sweep over ${PROFILE_RUNNERS.toLocaleString("en-US")} live runners`);
    const profiled = await measureSweep({ runners: PROFILE_RUNNERS, steadySweeps: 1, profile: true }, log);
    return { ...measured, profile: profiled.profile, shapes: measureListShapes() };
  });
  log(`\n${bigSweepTable(big)}\n\n${profileTable(big.profile?.top ?? [])}\n\n${listShapesTable(big.shapes ?? [])}`);
}

let fleet: SweepCost | undefined;
let snapshot: SnapshotSize | undefined;
let agentMemory: Report["agentMemory"];
let snapshotApply: Report["snapshotApply"];
let alarmBatch: Report["alarmBatch"];
if (only.includes("fleet")) {
  snapshot = measureSnapshot(FLEET_SWEEP);
  log(
    `\n6. The agent's snapshot of ${FLEET_SWEEP.toLocaleString("en-US")} runners: ${snapshot.messages} messages, the largest ${(snapshot.largestBytes / 1024).toFixed(1)} KiB (limit 32 MiB)`,
  );
  log(`\n6. The agent's heap with ${FLEET_SWEEP.toLocaleString("en-US")} runners (a child node under --expose-gc)`);
  agentMemory = await section("memory", () => measureAgentMemory(FLEET_SWEEP));
  log(agentMemoryLine(agentMemory));
  log(`\n6. A direct-mode sweep over ${FLEET_SWEEP.toLocaleString("en-US")} live runners (first and steady)`);
  fleet = await section("fleet", () => measureSweep({ runners: FLEET_SWEEP, steadySweeps: 3, mix: ALL_RUNNING }, log));
  log(`\n${bigSweepTable(fleet, FLEET_GOALS)}\n\n${fleetHeadline(fleet)}`);
  log(`\n6. The agent's snapshot of ${FLEET_SWEEP.toLocaleString("en-US")} runners applied by the ledger (agent mode), then sweeps over the view`);
  // 50,000 first looks take 5 sweeps, then one steady sweep: the measurement stops there.
  snapshotApply = await section("snapshot", () => measureSnapshotApply(FLEET_SWEEP, log, { sweeps: 7 }));
  log(`\n${snapshotApplyTable(snapshotApply)}\n\n${agentSteadyLine(snapshotApply)}`);
  log(`\n6. One alarm run over a full batch of ${ALARM_BATCH} due runners (direct mode, 12 namespaces)`);
  alarmBatch = await section("alarm", () => measureAlarmBatch(ALARM_BATCH, ALARM_BACKGROUND, log));
  log(`\n${alarmBatchTable(alarmBatch)}`);
}

let day: Report["day"] | undefined;
if (only.includes("day")) {
  log(`\n4. The alarm's latency (${ALARM_SAMPLES} runners under wrangler dev), then one synthetic day (simulation with the real judge)`);
  day = await section("day", async () => {
    const alarm = await measureAlarmLatency(ALARM_SAMPLES, log);
    return { alarm, result: runDay(alarm.samplesMs) };
  });
  log(`\n${day.result.table}`);
  for (const f of day.result.facts) log(`- ${f}`);
}

let ledger: Report["ledger"];
if (only.includes("ledger")) {
  log("\n5. Recorded deliveries one ledger sustains (wrangler dev, the ledger alone)");
  ledger = await section("ledger", () => measureLedgerRate(log));
  log(`\n${ledgerRateTable(ledger)}`);
}

if (only.includes("failed")) {
  log(`\n7. A sweep with ${FAILED_SLOTS} Failed runners and ${FAILED_HISTORY.toLocaleString("en-US")} Failed rows of history (REAPER_FAILED_SECONDS set)`);
  log(failedSweepLine(await section("failed", () => measureFailedSweep(log))));
}

const seconds = (performance.now() - started) / 1000;
const loadAfter = loadAverage();
log(`\nbench took ${seconds.toFixed(0)} s; load average ${loadBefore} before, ${loadAfter} after`);
if (intake && history && big && day && fleet) {
  const path = join(ROOT, "BENCHMARKS.md");
  const report: Report = {
    machine,
    loadBefore,
    loadAfter,
    loads,
    seconds,
    intake,
    history,
    big,
    day,
    fleet,
    ...(snapshot ? { snapshot } : {}),
    ...(agentMemory ? { agentMemory } : {}),
    ...(snapshotApply ? { snapshotApply } : {}),
    ...(alarmBatch ? { alarmBatch } : {}),
    ...(ledger ? { ledger } : {}),
  };
  await writeFile(path, renderReport(report));
  // The raw figures, so the report's prose can be re-rendered from this run (bench/render-report.ts).
  await mkdir(join(ROOT, ".bench"), { recursive: true });
  await writeFile(join(ROOT, ".bench", "bench-results.json"), `${JSON.stringify(report, null, 1)}\n`);
  log(`wrote ${path}`);
}
clearTimeout(guard);
