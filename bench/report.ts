// BENCHMARKS.md: the tables with what each one measured or modelled.
import { ledgerSection, type LedgerRateRow } from "./ledger-rate.ts";
import { ARC_REAPER_MODEL } from "./day/arc-reaper-model.ts";
import { POLLING_MODEL } from "./day/polling-model.ts";
import { DEFAULT_DAY, LONG_JOBS_DAY } from "./day/trace.ts";
import type { AlarmLatency } from "./alarm-latency.ts";
import type { runDay } from "./day-table.ts";
import { DAY_POLICY } from "./day-table.ts";
import { INTAKE, type IntakeProfile, type IntakeRow, type IntakeSplit } from "./intake.ts";
import type { Machine } from "./machine.ts";
import { fixed, int } from "./markdown.ts";
import { percentile } from "./stats.ts";
import { HISTORY_BATCH, NAMESPACES, PRODUCTION_SETTINGS, type SweepCost } from "./sweep-cost.ts";
import { MIX } from "./sweep-mix.ts";
import type { AlarmBatch } from "./alarm-batch.ts";
import type { AgentMemory } from "./agent-memory.ts";
import { agentMemoryParagraph, agentSteadyLine, alarmBatchSection, snapshotApplySection } from "./report-fleet.ts";
import type { SnapshotApply } from "./snapshot-apply.ts";
import type { SnapshotSize } from "./snapshot-size.ts";
import { PROFILE_RUNNERS } from "./profile-size.ts";
import {
  bigSweepTable,
  durableHeadline,
  FLEET_GOALS,
  fleetHeadline,
  historyTable,
  intakeDurableTable,
  intakeSplitTable,
  intakeTable,
  listShapesTable,
  mean,
  median,
  profileTable,
} from "./tables.ts";

export interface Report {
  machine: Machine;
  loadBefore: string;
  loadAfter: string;
  /** 1-minute load average before and after each table's measurement. */
  loads: Partial<Record<"intake" | "history" | "sweep" | "day" | "ledger" | "fleet" | "memory" | "snapshot" | "alarm" | "failed", [string, string]>>;
  seconds: number;
  intake: { rows: IntakeRow[]; split: IntakeSplit; profile?: IntakeProfile };
  history: SweepCost[];
  big: SweepCost;
  day: { alarm: AlarmLatency; result: ReturnType<typeof runDay> };
  /** Table 6: a direct-mode sweep over 50,000 live runners (issue 25). */
  fleet?: SweepCost;
  /** The agent's snapshot of the same fleet: its messages (bench/snapshot-size.ts). */
  snapshot?: SnapshotSize;
  /** The agent's heap with the same fleet in its view, beside the objects it lists (bench/agent-memory.ts). */
  agentMemory?: AgentMemory;
  /** The same snapshot applied by the ledger in agent mode, and two sweeps over the view (bench/snapshot-apply.ts). */
  snapshotApply?: SnapshotApply;
  /** One alarm run over a full batch of due runners, direct mode, 12 namespaces (bench/alarm-batch.ts). */
  alarmBatch?: AlarmBatch;
  /** Table 5: recorded deliveries one ledger sustains (bench/ledger-rate.ts). */
  ledger?: LedgerRateRow[];
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/** Share of sampled CPU whose function or module matches. */
function shareOf(top: IntakeProfile["top"], test: RegExp): number {
  return top.filter((l) => test.test(`${l.fn} ${l.module}`)).reduce((s, l) => s + l.share, 0);
}

export function renderReport(r: Report): string {
  const m = r.machine;
  const load = (k: keyof Report["loads"]) => {
    const l = r.loads[k];
    return l ? `Load average (1 min) on this shared 2-core machine: ${l[0]} when this table started, ${l[1]} when it ended.` : "";
  };
  const [h0, , hBig] = r.history;
  const h0cpu = h0 ? mean(h0.steady.map((s) => s.cpuMs)) : Number.NaN;
  const hBigCpu = hBig ? mean(hBig.steady.map((s) => s.cpuMs)) : Number.NaN;
  const big = r.big;
  const bigSteady = median(big.steady.map((s) => s.cpuMs));
  const it = r.intake.profile;
  return `# Benchmarks

Written by \`npm run bench\` (bench/run.ts) on ${m.date}, commit ${m.commit}; the run took ${Math.round(r.seconds)} s.
Run it again after \`npm ci\`; nothing leaves 127.0.0.1.

**Headlines** (issue 25), each from the tables below:

${[
  r.day.result.facts.find((f) => f.startsWith("GitHub calls per hour on the long-jobs day")) ?? "GitHub calls per hour on the long-jobs day: not measured",
  r.intake.rows.some((x) => x.durable) ? durableHeadline(r.intake.rows) : "Recorded deliveries against the durable minimum: not measured",
  r.fleet ? fleetHeadline(r.fleet) : "A steady sweep over 50,000 live runners: not measured",
  ...(r.snapshotApply ? [agentSteadyLine(r.snapshotApply)] : []),
].join("\n\n")}

| machine | |
|---|---|
| CPU | ${m.cores} × ${m.cpuModel} |
| memory | ${m.memoryGiB} GiB |
| Node | ${m.node} |
| wrangler / workerd | ${m.wrangler} / ${m.workerd} |
| 1-minute load average | ${r.loadBefore} when the run started, ${r.loadAfter} when it ended (its own processes included) |

**This machine is shared**: other sessions run their own tests and \`wrangler dev\`
on the same 2 cores, so a load average above 1 at the start of a table means other
work competed with it. Each table gives its own load average before and after.
Tables 1 to 3 are measured on the real Worker and its ledger (a SQLite-backed Durable
Object) under \`wrangler dev\` (workerd, local Durable Object storage) on this machine,
not on Cloudflare's edge: absolute times include wrangler's dev proxy and its log
forwarding. Ratios, counts and rows read carry over better than times. Table 4 is a
simulation with one input measured under \`wrangler dev\` (the alarm's latency).

**workerd CPU**, everywhere below, is utime + stime of the workerd processes of that
\`wrangler dev\` (its dev proxy and the Worker with its Durable Object) from
/proc/<pid>/stat, read just before and after (the clock ticks are 10 ms, so a figure
under 100 ms is coarse). workerd freezes the Worker's clock between I/O, so the Worker
cannot time its own CPU. It includes the runtime's own work: HTTP to the stand-ins,
SQLite, the RPC between the Worker and the ledger, and writing log lines.

**Log lines are written 200 to a \`console.log\`** in these stacks (\`ARC_REAPER_TEST_LOG_BATCH\`,
test/hooks/batch-console-logs.ts; the same JSON lines, one per line). \`wrangler dev\`'s
inspector proxy posts every console message to its Node controller on a loopback connection
of its own: about 1 ms of CPU and 2 file descriptors each, held some 45 s. A sweep's 10,000
decision lines then took 10 s of CPU, and two such sweeps within a minute exhausted this
machine's 20,000 descriptors, so the 50,000-runner sweep never answered (issue 25). A deployed
Worker pays nothing of the kind; the Worker's own code, \`src/log.ts\`, still makes one
\`console.log\` per line.

**Profiles** are V8 CPU profiles taken over the inspector wrangler exposes
(bench/cpu-profile.ts, Chrome DevTools Protocol, sampling every 100 µs) of one more
run that the figures do not count. Sampling this often slows the code down, so the
profile's milliseconds are larger than the /proc figures; read its shares. Function
names are those of the bundled Worker.

## 1. Webhook intake

\`POST /webhook\` with real \`workflow_job.in_progress\` payloads from
\`@octokit/webhooks-examples\` (an ARC runner name, a new job id on every request, so
each one verifies the signature, parses, and records a new row in the ledger over RPC),
signed with HMAC-SHA256 like GitHub does. Beside it, the baseline: a separate minimal Worker
(bench/baseline-worker.ts) that only verifies \`X-Hub-Signature-256\` with the same
\`@octokit/webhooks\` call and answers 202, under its own \`wrangler dev\`, in the same
run. The load comes from a second Node process (bench/load.ts: node:http, keep-alive,
N connections each sending one request at a time). At each level, ${INTAKE.rounds} rounds alternate the
two targets (arc-reaper first, then the baseline first, ...), each round ${INTAKE.warmupMs / 1000} s of warm-up, not
counted, then ${INTAKE.durationMs / 1000} s measured; a request counts when it starts and ends inside the
window; req/s, p50 and p99 pool the rounds. Ratio = arc-reaper req/s ÷ baseline req/s
(goal: at least 0.8). workerd CPU per request is over warm-up and window, divided by the
requests sent. arc-reaper also logs one JSON line per delivery, which wrangler's Node
process forwards; that cost is in neither column. ${load("intake")}

${intakeTable(r.intake.rows)}

**Against the durable minimum** (issue 25): a third Worker (bench/durable-baseline-worker.ts) verifies the
signature with the same call, stores the delivery (GUID, event, body) with one INSERT in a
SQLite-backed Durable Object over RPC and answers 202 once the write is stored: the least any
design that never loses a delivery does. Same load, same rounds, each target first in turn.

${intakeDurableTable(r.intake.rows)}

**Where the rest of the time goes.** By difference, at ${r.intake.split.concurrency} connections, the same
${INTAKE.rounds} rounds of warm-up and window, the three alternated: the baseline; arc-reaper
sent the same signed body as a \`push\` event (verified, parsed, logged, answered 200
"ignored", and counted by an RPC to the ledger after the answer); and arc-reaper
recording it (\`workflow_job.in_progress\`: the facts, then an awaited RPC in which the
ledger writes the runner row and the delivery counter and sets the alarm, then 202).
The first step is what arc-reaper's Worker does before the ledger (routing, settings,
JSON.parse, the log line) plus the count RPC; the second is the recording in the ledger
(the RPC round trip on the answer's path and the SQL writes).

${intakeSplitTable(r.intake.split)}

Of the ${fixed(r.intake.split.recorded.cpuMsPerRequest - r.intake.split.baseline.cpuMsPerRequest, 2)} ms of workerd CPU a recorded delivery costs over the baseline,
${fixed(r.intake.split.ignored.cpuMsPerRequest - r.intake.split.baseline.cpuMsPerRequest, 2)} ms is already spent on a delivery that is only parsed, logged and counted, and
${fixed(r.intake.split.recorded.cpuMsPerRequest - r.intake.split.ignored.cpuMsPerRequest, 2)} ms is the recording (the awaited RPC and the ledger's SQL writes of the runner row
and counter, and re-arming the alarm). So most of the gap is in the Worker's own path, not
in the ledger.${
    it
      ? ` In the profile below, look for the closure that logs and answers (\`answer\` in
src/http/webhook-route.ts, bundled as an anonymous arrow inside \`receiveWebhook\`) and the
runtime's \`Response\`: when they lead, the time is the per-delivery log line and the answer.`
      : ""
  }
Under \`wrangler dev\` each \`console.log\` is also forwarded to wrangler (and, while
profiling, over the inspector), which inflates that share here; on the edge the line goes
to Workers Logs. Not changed in this work: the log line per delivery is a behaviour of issue 9 ("logs an
operator can read"), and trimming it is a decision for the intake's owner.

${
  it
    ? `A CPU profile of one more ${INTAKE.durationMs / 1000} s round at ${it.concurrency} connections (${int(it.requests)} requests; ${fixed(it.totalMs, 0)} ms sampled):
${pct(shareOf(it.top, /exec|\ball\b|\brun\b|first|put|record|merge|sql/i))} of the sampled CPU is in the ledger's SQL (statements and their cursors),
${pct(shareOf(it.top, /parse|JSON/))} in JSON parsing, ${pct(shareOf(it.top, /verify|sign|hmac|digest|subtle|crypto/i))} in the signature check
and ${pct(shareOf(it.top, /garbage/))} in garbage collection (from the functions listed):

${profileTable(it.top)}`
    : "(No CPU profile of the intake in this run: wrangler's inspector proxy, busy forwarding a log line per delivery, did not answer.)"
}

## 2. Sweep cost against history

300 live runners (EphemeralRunners in the cluster with open rows in the ledger) and
0, 10,000 and 100,000 finished jobs (closed rows) in the ledger's history. The goal:
the 100,000 row within 1.2× of the 0 row. ${load("history")}

- **How the history is seeded**: not through webhooks (100,000 jobs would be 200,000
  deliveries, tens of minutes here). A bench-only route, \`POST /test/seed-history\`
  (test/hooks/entry.ts, the test entry the bench runs under \`wrangler dev\`; it needs
  the admin token), calls the test ledger's \`seedHistory\` RPC (test/hooks/seed-history.ts),
  which inserts ${int(HISTORY_BATCH)} closed rows per call in one SQL statement: rows
  as a week of finished jobs leaves them (half \`reaped\`, half \`gone\`, a verdict,
  a reason, a three-entry story, pruned in 7 days), in the same table and indexes as
  real rows. The live runners are seeded through \`POST /webhook\` (real signed
  payloads, 16 at a time) and the Kubernetes stand-in's control API, as in table 3.
- The live mix: of the runners, ${pct(MIX.waiting)} completed less than the grace ago
  (the alarm is due later), ${pct(MIX.finished)} completed 10 minutes ago with the runner still
  there (the alarm deletes them at once, before the sweeps), ${pct(MIX.gone)} completed with
  the runner already gone (the alarm closes them before the sweeps), the rest running,
  started 1 to 45 minutes ago: younger than the hourly recheck (REAPER_RECHECK_SECONDS=3600),
  which asks GitHub about a long job once an hour. (In a first full run the running
  runners were 1 to 60 minutes old, so a band of them crossed the hour during the
  measurement and each steady sweep over 10,000 asked GitHub about 30 of them:
  50 subrequests. Those rechecks are real work, due to the alarm; at 10,000 live
  runners all older than an hour they would be 10,000 calls an hour spread over the
  alarms, which no per-sweep budget of 40 can hold.) The sweeps wait until workerd is idle, so the alarm is done.
- Then sweeps run, triggered through \`/cdn-cgi/local/scheduled\`: the **first**
  writes every open row's verdict (the rows came from webhooks and were never judged)
  and logs a decision line for each; **steady** sweeps (${h0?.steady.length ?? 0} more, the median shown)
  write only what changed (their mean CPU is shown, each figure being a multiple of the 10 ms tick). **Rows read / written** are the ledger's own counts
  (\`cursor.rowsRead\` / \`rowsWritten\` summed over every statement, from the
  sweep's log line), as Durable Object SQL bills them. The first sweep also lists
  the webhook deliveries (the GitHub call).

${historyTable(r.history)}

With 100,000 closed rows the steady sweep read ${hBig ? int(hBig.steady[hBig.steady.length - 1]!.rowsRead) : "n/a"} rows, as with none
(${h0 ? int(h0.steady[h0.steady.length - 1]!.rowsRead) : "n/a"}): it reads the open rows by the index on (state, due_at), never the
history. CPU: ${fixed(hBigCpu / h0cpu, 2)}× the 0 row (goal ≤ 1.2×); a steady sweep of 300 runners
costs a few 10 ms ticks, so one tick more or less moves this ratio by 0.2 or more, and the
rows read, identical, are the sharper measure.

## 3. One sweep over ${int(big.runners)} live runners

The same setup as table 2 with ${int(big.runners)} live runners and no history, with the
production settings of wrangler.toml (${Object.entries(PRODUCTION_SETTINGS)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ")}).
The runners are split over two namespaces, as two scale sets (REAPER_NAMESPACES=${NAMESPACES.join(",")}):
the Kubernetes stand-in holds 5,000 objects per tenant, so each namespace is a tenant of
its own behind one API URL (bench/kube-router.ts). Goal: under 1 s of workerd CPU, at
most 40 subrequests. **Subrequests** = cluster calls + GitHub calls, counted by the
stand-ins (their call logs, cleared before each sweep); the ledger's SQL is not a
subrequest (it runs inside the Durable Object), and the cron handler's one RPC to the
ledger is not counted. Seeding took ${int(big.seedSeconds)} s (${int(big.webhooks)} webhooks). ${load("sweep")}

${bigSweepTable(big)}

The steady sweep's median: ${fixed(bigSteady / 1000, 2)} s of workerd CPU.
${
  big.shapes
    ? `
**What a list page costs, by shape** (bench/list-shape-bytes.ts, the stand-in's objects: ARC's default pod
template, managedFields as a server-side apply writes them). Direct mode lists Tables with the objects' metadata
(src/cluster/list-as-table.ts) and reads in full only the runners a decision needs more of; the agent lists and
watches full objects and keeps only what it sends (table 6).

${listShapesTable(big.shapes)}
`
    : ""
}
**Where the time went (profiled first).** Before any change, on main, the same
measurement over 10,000 live runners gave steady sweeps of 1.68 to 2.05 s of workerd CPU
(first sweep 9.8 s), over the goal. Profiles of steady sweeps over 300 and 2,000 live
runners (the inspector stopped answering at 10,000, busy forwarding the first sweep's
9,500 log lines) put about 60% of the sampled CPU in SQL: \`RunnersTable.get\` with the
statements and cursors under it. After judging, the ledger applied each verdict to the
row "as it is now", reading every open row again, one statement per row (10,000
statements), to see whether a webhook had changed it while the sweep waited on the
cluster. Next came JSON parsing of the cluster's list pages (client-node's
\`ObjectSerializer.parse\`), then the cluster client's answer checks, the judge and the
comparisons. The decision log lines matter only in the first sweep.

**What changed**, in two steps. First \`RunnersTable.unchanged\` read the open rows once
more, by the index, and compared every column with the judged record instead of one
statement per row: over 2,000 live runners the steady sweep went from 340 ms to 140 ms of
workerd CPU, over 10,000 from 1.7–2.0 s to about 0.6 s, with 2 rows read per open row.
Then (src/ledger/runners-table.ts \`update\`) the check moved into the write itself: a
verdict is written by one conditional UPDATE that refuses a row whose facts changed
meanwhile, and a steady sweep writes only what changed, so it reads each open row once
and nothing more. The decisions are the same either way (the ledger's tests hold them).
The list page size (500, 20 pages for 10,000) was left alone: the
subrequests are within the goal, and fewer, larger pages would not parse less JSON. Now
the largest share of a steady sweep is the JSON parsing of the cluster's objects. The
profile of a steady sweep over ${int(PROFILE_RUNNERS)} live runners (same mix), with the change:

${r.big.profile ? profileTable(r.big.profile.top) : "(no profile in this run: the inspector did not answer)"}

**The first sweep** costs more: it writes every open row's verdict (${int(big.first.rowsWritten)} rows
written with their index entries) and logs one decision line per runner, which
wrangler then forwards. That happens once, after the first deploy or after many new
runners arrive at once without being judged by an alarm; later sweeps write only changes.

${daySection(r.day, load("day"))}${r.ledger ? ledgerSection(r.ledger, load("ledger")) : ""}${r.fleet ? fleetSection(r.fleet, load("fleet"), r.snapshot, r.agentMemory) : ""}${r.snapshotApply ? snapshotApplySection(r.snapshotApply, load("snapshot")) : ""}${r.alarmBatch ? alarmBatchSection(r.alarmBatch, load("alarm")) : ""}`;
}

/** Table 4: the alarm's latency, then the synthetic day (issue 25; issue 47's two counts). */
export function daySection(day: Report["day"], dayLoad: string): string {
  const a = ARC_REAPER_MODEL;
  const samples = day.alarm.samplesMs;
  return `## 4. The alarm's latency, and one synthetic day: arc-reaper beside a polling reaper

**The alarm's latency, measured** (bench/alarm-latency.ts): under \`wrangler dev\`
with a ${day.alarm.graceSeconds} s grace and no sweep triggered, ${samples.length} runners in the cluster
each got \`in_progress\` and then \`completed\` (with \`completed_at\` the current second)
0.7 s apart, so each delete comes from its own alarm. From each runner's due time
(\`completed_at\` + grace) to its DELETE reaching the Kubernetes stand-in: p50
${fixed(percentile(samples, 50) / 1000, 2)} s, p99 ${fixed(percentile(samples, 99) / 1000, 2)} s, max ${fixed(Math.max(...samples) / 1000, 2)} s. It includes the alarm's
GET and DELETE to the stand-in on this machine. Locally workerd fires an alarm at its
time; on Cloudflare's edge the alarm's delivery and the round trips to a real API
server add to it, which this does not measure: in the day below the delay after the
grace *is* this latency, so the 5 s goal holds as long as the edge deletes within 5 s
of the due time. ${dayLoad}

**The day** is a simulation in Node (bench/day/), not a measurement: both reapers replay
the same trace, and every decision is made by arc-reaper's real code
(src/reaper/judge.ts, bench/day/fold-facts.ts, src/reaper/schedule-facts.ts, which are
pure) with the same policy (grace ${DAY_POLICY.graceSeconds} s, bound ${int(DAY_POLICY.maxJobSeconds)} s, recheck ${int(DAY_POLICY.recheckSeconds ?? 0)} s), on two fleets. What is modelled:

- **The day** (seed ${DEFAULT_DAY.seed}): ${int(DEFAULT_DAY.jobs)} jobs in runs of 1 to 8 jobs arriving over 24 h with an office-hours
  peak at 14:00 UTC; job durations log-normal (median ${DEFAULT_DAY.medianJobSeconds / 60} min, σ ${DEFAULT_DAY.jobSigma}, 20 s to 6 h); a
  runner starts 3 to 30 s after its run is queued. Whole runs are cancelled until
  ${pct(DEFAULT_DAY.cancelledShare)} of the jobs were cancelled while running: those runners stay Running. ${pct(DEFAULT_DAY.hungShare)} of
  the other jobs complete on GitHub but their runner hangs and stays. Every other
  runner is removed by ARC 3 to 15 s after its job. maxRunners is ${DEFAULT_DAY.maxRunners}; the trace
  never needs more, so neither reaper changes when jobs start. GitHub sends
  \`workflow_job\` queued / in_progress / completed and \`workflow_run\` requested /
  in_progress / completed for each.
- **The long-jobs day** (seed ${LONG_JOBS_DAY.seed}), the second fleet: the same shape and hazards, but
  ${pct(LONG_JOBS_DAY.longShare ?? 0)} of the runs are builds whose every job runs ${(LONG_JOBS_DAY.longSeconds?.[0] ?? 0) / 3600} to ${(LONG_JOBS_DAY.longSeconds?.[1] ?? 0) / 3600} hours (games, ML,
  mobile), so many jobs outlive the recheck interval; maxRunners ${int(LONG_JOBS_DAY.maxRunners)}.
- **arc-reaper** (bench/day/arc-reaper-model.ts), following src/ledger/ and src/reaper/:
  webhooks arrive ${a.webhookLatencyMs / 1000} s after GitHub sends them and are recorded at once (the ledger is
  strongly consistent); ${pct(a.lossRate)} fail (no 2xx) and show as failed deliveries ${a.failedListedAfterMs / 1000} s later.
  **The alarm**: each open runner is due when its facts say (\`scheduleFromFacts\`: the grace
  end of a completion or of its run's, else the bound); the alarm judges it at its due
  time plus a latency drawn from the ${samples.length} measured samples above (one per due time: runners due together are
  judged in one alarm run, as the ledger reads them), and deletes at once
  (a cluster GET and DELETE, no GitHub call). **The sweep**, every ${a.sweepEveryMs / 1000} s, is the net: it
  judges every open runner against the cluster; every ${a.deliveriesEveryMs / 1000} s (REAPER_DELIVERIES_EVERY_SECONDS) it
  lists the failed deliveries (\`status=failure\`) since the previous listing minus ${a.listingOverlapMs / 60_000} minutes, ${a.deliveriesPerPage} a page (a page per
  call, the last page reaching past the window) and asks redelivery once per failed
  delivery (at most half the budget); it asks GitHub only about runners past the bound
  (none in one day), busy without facts for ${a.settleMs / 60_000} minutes (the run, then its jobs), or running
  past the recheck (REAPER_RECHECK_SECONDS, ${int(DAY_POLICY.recheckSeconds ?? 0)} s) with no completion heard; a recheck, at the
  alarm or in a sweep, first lists the repository's runs in progress (once per repository and pass,
  100 a page, at most ${a.maxListedRunPages * 100}: src/reaper/running-runs.ts): a listed run with a job due has one page
  of its attempt's jobs read (REAPER_RECHECK_LISTED_RUNS=read, the default; with listing it answers "still running"),
  and its other open jobs, and those of every listed run, move their next recheck; a run not listed has its jobs read (100 a page;
  a job read when the job is its run's only open one), which answers for every open job of the run (src/reaper/recheck-runs.ts);
  at most ${a.maxDeletionsPerSweep} deletions and ${a.maxCallsPerSweep} GitHub calls a sweep. Installation tokens are minted
  when needed and cached for an hour (refreshed ${a.tokenRefreshMarginMs / 60_000} minutes early), installation look-ups once
  per repository; the webhook payload carries the installation id. **Conditional requests**
  (issue 47): every GET a recheck repeats sends the validator its last 200 left (kept ${a.validatorMaxAgeMs / 3_600_000} hours);
  GitHub as the facts have it: ETags are specific to the token (a new one each hour, as above),
  no \`Last-Modified\` on these Actions endpoints; a body changes when a job of it is queued,
  starts or completes, a run's (and so the listing's) when any of its jobs does. An unchanged
  answer asked with a validator that counts is a 304: a request, not counted against the limit.
- **polling reaper** (bench/day/polling-model.ts), like the CronJob reapers for ARC: every
  ${POLLING_MODEL.everyMs / 60_000} minutes a new pod mints an installation token (1 call), lists the EphemeralRunners, and
  for each busy one (status.workflowRunId set) reads its run and the run's jobs (2 calls),
  deleting it when the judge says so. It skips the rest of a poll when the
  installation's 5,000 requests of the clock hour are spent (GitHub answers 403 then).
- **Measured on the trace**: GitHub calls per hour of the day counted against the rate limit
  (all but 304s; mean over the 24 hours and the busiest hour; the 5,000/h limit is per
  installation, each reaper on its own), requests made, the share answered 304, and whether
  each completion no delivery brought was found at the first recheck after it;
  reap delay = from the job's \`completed_at\` on GitHub (or the run's \`updated_at\` for a
  cancelled run) to the delete, over the stuck runners, with and without the ${DAY_POLICY.graceSeconds} s grace both
  apply (goal: p99 after the grace ≤ 5 s); stuck runner-hours = the sum of those delays;
  wrong deletes = runners deleted while GitHub still showed their job running (must be 0).
  Calls are counted for the 24 h of the day (which starts empty); reaping is followed for
  ${31 - 24} h more, until the last jobs end.
- **Not modelled**: time to make a call (each is instant), the alarm's 50 deletions a
  minute shared with the sweep (never reached here), GitHub's secondary rate limits,
  runs re-run, self-hosted runner groups shared by other installations.

${day.result.table}

${day.result.facts.map((f) => `- ${f}`).join("\n")}
- **The listing reads failed deliveries only** (\`status=failure\`, status codes 400-599):
  ${fixed((day.result.outcomes[0]!.calls.byKind["deliveries listing"] ?? 0) / 31, 1)} listing calls an hour instead of one per ${a.deliveriesPerPage} deliveries of the day
  (${fixed(day.result.trace.deliveries.length / a.deliveriesPerPage / 24, 1)} an hour at the very least when every delivery was listed). The polling reaper's
  figure is itself held down by the 5,000/h limit in its busy hours (its skipped checks are listed above).
`;
}

/** Table 6: a direct-mode sweep over 50,000 live runners (issue 25). */
function fleetSection(f: SweepCost, load: string, snap?: SnapshotSize, mem?: AgentMemory): string {
  return `

## 6. A direct-mode sweep over ${int(f.runners)} live runners

The same measurement as table 3, seeded through \`POST /webhook\` (in bulk, each delivery through the
ledger's own receive) and the Kubernetes stand-in, but with every runner's job in progress (the mix's
completed jobs would leave the alarm thousands of deletions at 50 a minute beside the sweeps), ${int(f.runners)} live runners in ${int(Math.ceil(f.runners / 4_500))} namespaces (the stand-in holds
5,000 objects per tenant, so each namespace is its own tenant behind one API URL). Goals (issue 25):
a steady sweep under ${FLEET_GOALS.cpuMs / 1000} s of workerd CPU and at most ${FLEET_GOALS.subrequests} subrequests; the first, over
rows never judged, under ${FLEET_GOALS.firstCpuMs / 1000} s. ${load}

${bigSweepTable(f, FLEET_GOALS)}

${fleetHeadline(f)}
${
  snap
    ? `
**The agent's snapshot** of ${int(snap.runners)} runners (bench/snapshot-size.ts, the agent's own split,
src/agent/runner-view.ts): ${int(snap.messages)} messages of at most ${int(snap.perPart)} runners, the largest
${fixed(snap.largestBytes / 1024, 1)} KiB (${fixed((100 * snap.largestBytes) / (32 * 1024 * 1024), 2)}% of the 32 MiB a Durable Object receives in one message),
${fixed(snap.totalBytes / 1024 / 1024, 1)} MiB in all. The ledger applies each message as it comes (one INSERT per runner into
the snapshot table) and swaps the view in with three statements when the last part is in.
`
    : ""
}${mem ? agentMemoryParagraph(mem) : ""}`;
}
