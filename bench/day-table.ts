// Table 3: one synthetic day replayed through arc-reaper and through a
// polling reaper. A simulation in Node: decisions by the real judge, I/O modelled.
import type { Policy } from "../src/model/policy.ts";
import { runArcReaper } from "./day/arc-reaper-model.ts";
import { GITHUB_REQUESTS_PER_HOUR } from "./day/hourly-limit.ts";
import type { ReaperOutcome } from "./day/outcome.ts";
import { runPollingReaper } from "./day/polling-model.ts";
import { DEFAULT_DAY, generateDay, type Trace } from "./day/trace.ts";
import { duration, fixed, int, markdownTable } from "./markdown.ts";
import { percentile } from "./stats.ts";

export const DAY_POLICY: Policy = { graceSeconds: 300, maxJobSeconds: 432_000 };
// Long enough after the day for its last jobs (up to 6 h) to end and be reaped.
const HORIZON_MS = 31 * 3_600_000;

export interface DayResult {
  trace: Trace;
  outcomes: ReaperOutcome[];
  table: string;
  facts: string[];
  seconds: number;
}

/** `alarmLatencyMs`: the alarm's delays after a due time, as measured (bench/alarm-latency.ts). */
export function runDay(alarmLatencyMs: readonly number[]): DayResult {
  const started = performance.now();
  const trace = generateDay(DEFAULT_DAY);
  const outcomes = [runArcReaper(trace, DAY_POLICY, HORIZON_MS, alarmLatencyMs), runPollingReaper(trace, DAY_POLICY, HORIZON_MS)];
  const graceMs = DAY_POLICY.graceSeconds * 1000;
  const rows = outcomes.map((o) => {
    const day = Array.from({ length: 24 }, (_, h) => o.calls.byHour[h] ?? 0);
    const delays = o.delays.flatMap((d) => (d.delayMs === null ? [] : [d.delayMs]));
    const never = o.delays.filter((d) => d.delayMs === null).length;
    const heldHours = delays.reduce((s, d) => s + d, 0) / 3_600_000;
    return [
      o.name,
      int(day.reduce((s, n) => s + n, 0) / 24),
      int(Math.max(...day)),
      String(day.filter((n) => n >= GITHUB_REQUESTS_PER_HOUR).length),
      `${delays.length}${never ? ` (+${never} never)` : ""}`,
      duration(percentile(delays, 50)),
      duration(percentile(delays, 99)),
      afterGrace(percentile(delays, 50) - graceMs),
      afterGrace(percentile(delays, 99) - graceMs),
      fixed(heldHours, 1),
      String(o.wrongDeletions),
    ];
  });
  const table = markdownTable(
    ["reaper", "GitHub calls/h (mean)", "peak hour", "hours at 5,000/h", "stuck runners reaped", "reap delay p50", "p99", "after the grace p50", "p99", "stuck runner-hours", "wrong deletes"],
    rows,
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  const [arc, polling] = outcomes.map((o) => o.calls.byHour.slice(0, 24).reduce((sum, n) => sum + n, 0) / 24);
  const stuck = trace.jobs.filter((j) => j.stuck !== null);
  const facts = [
    `${int(trace.jobs.length)} jobs in ${int(trace.runs.length)} runs, ${int(trace.deliveries.length)} webhook deliveries; ` +
      `${stuck.filter((j) => j.stuck === "cancelled").length} runners stuck after a cancelled run, ${stuck.filter((j) => j.stuck === "hung").length} hung after their job; ` +
      `at most ${trace.peakRunning} jobs running at once (maxRunners ${trace.spec.maxRunners}).`,
    `arc-reaper's GitHub calls per hour are ${fixed((100 * arc!) / polling!, 2)}% of the polling reaper's (goal: at most 1%); the alarm judged ${int(outcomes[0]!.alarmFirings ?? 0)} runners.`,
    ...outcomes.map((o) => `${o.name}: GitHub calls by kind over ${HORIZON_MS / 3_600_000} h: ${Object.entries(o.calls.byKind).map(([k, n]) => `${k} ${int(n)}`).join(", ")}${o.skippedChecks ? `; ${int(o.skippedChecks)} busy-runner checks skipped because the hour's ${int(GITHUB_REQUESTS_PER_HOUR)} requests were spent` : ""}.`),
  ];
  return { trace, outcomes, table, facts, seconds: (performance.now() - started) / 1000 };
}

/** Time after the grace: to the hundredth of a second under 10 s, to the tenth under a minute. */
function afterGrace(ms: number): string {
  if (Number.isNaN(ms)) return "n/a";
  if (Math.abs(ms) < 10_000) return `${fixed(ms / 1000, 2)} s`;
  return Math.abs(ms) < 60_000 ? `${fixed(ms / 1000, 1)} s` : duration(ms);
}

if (import.meta.main) {
  // Alone, without a measurement: the latencies given on the command line (ms), else 1 s.
  const given = process.argv.slice(2).map(Number).filter((n) => Number.isFinite(n));
  const r = runDay(given.length > 0 ? given : [1_000]);
  console.log(r.table);
  for (const f of r.facts) console.log(`- ${f}`);
  console.log(`(${r.seconds.toFixed(1)} s)`);
}
