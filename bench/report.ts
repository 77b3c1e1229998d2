// BENCHMARKS.md: the three tables with what each one measured or modelled.
import { ARC_REAPER_MODEL } from "./day/arc-reaper-model.ts";
import { POLLING_MODEL } from "./day/polling-model.ts";
import { DEFAULT_DAY } from "./day/trace.ts";
import type { runDay } from "./day-table.ts";
import { DAY_POLICY } from "./day-table.ts";
import { INTAKE, type IntakeRow } from "./intake.ts";
import type { Machine } from "./machine.ts";
import { int } from "./markdown.ts";
import { NAMESPACES, PRODUCTION_SETTINGS, type SweepCost } from "./sweep-cost.ts";
import { MIX } from "./sweep-mix.ts";
import { intakeTable, marginalCpu, sweepTable, sweepVerdicts } from "./tables.ts";

export interface Report {
  machine: Machine;
  loadBefore: string;
  loadAfter: string;
  seconds: number;
  intake: IntakeRow[];
  sweeps: SweepCost[];
  day: ReturnType<typeof runDay>;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

export function renderReport(r: Report): string {
  const m = r.machine;
  const a = ARC_REAPER_MODEL;
  const biggest = r.sweeps[r.sweeps.length - 1];
  return `# Benchmarks

Written by \`npm run bench\` (bench/run.ts) on ${m.date}, commit ${m.commit}; the run took ${Math.round(r.seconds)} s.
Run it again after \`npm ci\`; nothing leaves 127.0.0.1.

| machine | |
|---|---|
| CPU | ${m.cores} × ${m.cpuModel} |
| memory | ${m.memoryGiB} GiB |
| Node | ${m.node} |
| wrangler / workerd | ${m.wrangler} / ${m.workerd} |
| 1-minute load average | ${r.loadBefore} when the run started, ${r.loadAfter} when it ended (its own processes included) |

Tables 1 and 2 are measured on the real Worker under \`wrangler dev\` (workerd with
local KV) on this machine, not on Cloudflare's edge: absolute times include
wrangler's dev proxy and its log forwarding, and any other work on the machine
(a load average well above 0 at the start means other work shared the 2 cores).
Ratios and counts carry over better than times. Table 3 is a simulation.

## 1. Webhook intake

\`POST /webhook\` with real \`workflow_job.in_progress\` payloads from
\`@octokit/webhooks-examples\` (an ARC runner name, a new job id on every request, so
each one verifies the signature, parses, and writes a new fact to KV), signed with
HMAC-SHA256 like GitHub does. Beside it, the baseline: a separate minimal Worker
(bench/baseline-worker.ts) that only verifies \`X-Hub-Signature-256\` with the same
\`@octokit/webhooks\` call and answers 202, under its own \`wrangler dev\`, in the same
run. The load comes from a second Node process (bench/load.ts: node:http, keep-alive,
N connections each sending one request at a time). At each level, ${INTAKE.rounds} rounds alternate the
two targets (arc-reaper first, then the baseline first, ...), each round ${INTAKE.warmupMs / 1000} s of warm-up, not
counted, then ${INTAKE.durationMs / 1000} s measured; a request counts when it starts and ends inside the
window; req/s, p50 and p99 pool the rounds. Ratio = arc-reaper req/s ÷ baseline req/s. workerd CPU is utime + stime of both workerd processes of that
\`wrangler dev\` (its dev proxy and the Worker) from /proc, over warm-up and window,
divided by the requests sent. arc-reaper also logs one JSON line per delivery, which
wrangler's Node process forwards; that cost is in neither column.

${intakeTable(r.intake)}

## 2. Sweep cost

One sweep (the cron handler, triggered through \`/cdn-cgi/local/scheduled\`) of the
real Worker under \`wrangler dev\`, against the stand-in Kubernetes API (EphemeralRunners
in the wire format, arc-reaper's least-privilege service account) and the stand-in
GitHub API, with the production settings of wrangler.toml
(${Object.entries(PRODUCTION_SETTINGS).map(([k, v]) => `${k}=${v}`).join(", ")}), on a fresh KV.
Facts are seeded through \`POST /webhook\` with real signed payloads (16 at a time), the
cluster through the stand-in's control API (500 objects a call). The runners are split
over two namespaces, as two scale sets (REAPER_NAMESPACES=${NAMESPACES.join(",")}): the
Kubernetes stand-in holds 5,000 objects per tenant, so each namespace is a tenant of its
own behind one API URL (bench/kube-router.ts), and arc-reaper lists each namespace. The mix: of the
tracked runners, ${pct(MIX.waiting)} completed less than the grace ago (wait), ${pct(MIX.finished)} completed 10 minutes
ago with the runner still there (delete), ${pct(MIX.cancelled)} whose run was cancelled 10 minutes ago
(\`workflow_run\` only; delete), ${pct(MIX.gone)} completed with the runner already gone (close the
facts), ${pct(MIX["over-bound"])} started 6 days ago and still \`in_progress\` on GitHub (ask GitHub, delete
over the bound), the rest running within the bound.

- **KV list / put** are the sweep's own counters from its JSON log line
  (\`kvLists\`, \`kvPuts\`). **KV get** is 0 by construction: the sweep's store type is
  \`Pick<KVNamespace, "put" | "list">\`, and the log line has no \`kvGets\`.
- **cluster calls** and **GitHub calls** are counted by the stand-ins (their call logs,
  cleared just before the sweep); the GitHub count equals the \`githubCalls\` of the log line.
- **subrequests** = KV operations + cluster calls + GitHub calls. Assumed: every KV
  operation counts toward the per-invocation subrequest limit, as calls to Cloudflare
  services do (the KV limits page: "Within a single invocation, a Worker can make up to
  1,000 operations to external services (for example, 500 Workers KV reads and 500 R2
  reads). A bulk request to Workers KV counts for 1 request",
  https://developers.cloudflare.com/kv/platform/limits/), against the paid plan's
  10,000 subrequests and 5 minutes of CPU per invocation
  (https://developers.cloudflare.com/workers/platform/limits/). Counting KV as free
  would only lower the figures. The KV page still lists 1,000 KV operations per
  invocation, the stricter figure: the largest sweep here makes ${biggest ? int(biggest.kvLists + biggest.kvGets + biggest.kvPuts) : "n/a"}.
- **wall** is measured from outside, from the trigger to the sweep's log line
  (workerd freezes the Worker's clock between I/O, so the Worker cannot time itself).
- **workerd CPU** is utime + stime of both workerd processes of that \`wrangler dev\`
  from /proc/<pid>/stat, read before the trigger (once workerd has gone idle after the
  seeding) and when the log line arrives: it
  includes the runtime's own work (HTTP to the stand-ins, KV in SQLite, writing one
  \`decision\` log line per runner), and wrangler's dev proxy, which is idle here. On the
  edge, CPU time excludes waiting on I/O, as here.
- The caps bound the work that does not scale with the runners: at most
  ${PRODUCTION_SETTINGS.REAPER_MAX_DELETIONS_PER_SWEEP} deletions (each 1 cluster delete + 1 KV put) and ${PRODUCTION_SETTINGS.REAPER_MAX_GITHUB_CALLS_PER_SWEEP} GitHub calls a sweep; what
  is over a cap waits for the next sweep. Lists and the \`gone\` closes (1 KV put each)
  grow with the runners.

${sweepTable(r.sweeps)}

${marginalCpu(r.sweeps) ?? ""}

What each sweep decided, and the seeding:

${sweepVerdicts(r.sweeps)}

## 3. One synthetic day: arc-reaper beside a polling reaper

A simulation in Node (bench/day/), not a measurement: both reapers replay the same
trace, and every decision is made by arc-reaper's real judge
(src/reaper/judge.ts, src/reaper/tracked-runners.ts, which are pure) with the same
policy (grace ${DAY_POLICY.graceSeconds} s, bound ${int(DAY_POLICY.maxJobSeconds)} s). What is modelled:

- **The day** (seed ${DEFAULT_DAY.seed}): ${int(DEFAULT_DAY.jobs)} jobs in runs of 1 to 8 jobs arriving over 24 h with an office-hours
  peak at 14:00 UTC; job durations log-normal (median ${DEFAULT_DAY.medianJobSeconds / 60} min, σ ${DEFAULT_DAY.jobSigma}, 20 s to 6 h); a
  runner starts 3 to 30 s after its run is queued. Whole runs are cancelled until
  ${pct(DEFAULT_DAY.cancelledShare)} of the jobs were cancelled while running: those runners stay Running. ${pct(DEFAULT_DAY.hungShare)} of
  the other jobs complete on GitHub but their runner hangs and stays. Every other
  runner is removed by ARC 3 to 15 s after its job. maxRunners is ${DEFAULT_DAY.maxRunners}; the trace
  never needs more, so neither reaper changes when jobs start. GitHub sends
  \`workflow_job\` queued / in_progress / completed and \`workflow_run\` requested /
  in_progress / completed for each.
- **arc-reaper** (bench/day/arc-reaper-model.ts), following src/reaper/sweep.ts: webhooks
  arrive ${a.webhookLatencyMs / 1000} s after GitHub sends them; ${pct(a.lossRate)} fail (no 2xx) and show as failed
  deliveries ${a.failedListedAfterMs / 1000} s later; a fact is visible to a KV list ${a.kvLagMs / 1000} s after it is written (KV's
  worst case). A sweep every ${a.sweepEveryMs / 1000} s judges every tracked runner against the cluster; lists
  the deliveries since the previous listing minus ${a.listingOverlapMs / 60_000} minutes, ${a.deliveriesPerPage} a page (a page per
  call, the last page reaching past the window); asks redelivery once per failed
  delivery (at most half the budget); asks GitHub only about runners past the bound
  (none in one day) or busy without facts for ${a.settleMs / 60_000} minutes (the run, then its jobs);
  deletes at most ${a.maxDeletionsPerSweep}, within ${a.maxCallsPerSweep} GitHub calls a sweep. Installation tokens are minted
  when needed and cached for an hour (refreshed ${a.tokenRefreshMarginMs / 60_000} minutes early), installation look-ups once
  per repository; the webhook payload carries the installation id.
- **polling reaper** (bench/day/polling-model.ts), like the CronJob reapers for ARC: every
  ${POLLING_MODEL.everyMs / 60_000} minutes a new pod mints an installation token (1 call), lists the EphemeralRunners, and
  for each busy one (status.workflowRunId set) reads its run and the run's jobs (2 calls),
  deleting it when the judge says so. It skips the rest of a poll when the
  installation's 5,000 requests of the clock hour are spent (GitHub answers 403 then).
- **Measured on the trace**: GitHub calls per hour of the day (mean over the 24 hours and
  the busiest hour; the 5,000/h limit is per installation, each reaper on its own);
  reap delay = from the job's \`completed_at\` on GitHub to the delete, over the stuck
  runners (it includes the ${DAY_POLICY.graceSeconds} s grace both apply); stuck runner-hours = the sum of those
  delays (capacity held by runners doing nothing); wrong deletes = runners deleted while
  GitHub still showed their job running (must be 0). Calls are counted for the 24 h of
  the day (which starts empty); reaping is followed for ${31 - 24} h more, until the last jobs end.
- **Not modelled**: time to make a call (each is instant), GitHub's secondary rate
  limits, a Worker isolate restarting (it would re-mint a token and re-list the last
  hour of deliveries once), runs re-run, self-hosted runner groups shared by other
  installations.

${r.day.table}

${r.day.facts.map((f) => `- ${f}`).join("\n")}
`;
}
