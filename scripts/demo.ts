// npm run demo: arc-reaper's whole loop in under a minute, without a cluster.
// The real Worker runs under `wrangler dev` against stand-in GitHub and
// Kubernetes APIs on 127.0.0.1. Four EphemeralRunners are seeded as ARC would
// create them, real webhook payloads are replayed, the ledger's alarm reaps at
// the exact end of the grace, two cron sweeps run, and the demo tells what was
// reaped and what was kept, and why. It ends by itself and cleans up
// (wrangler's process group, the stand-ins, the temp ledger state).
//
//   npm run demo                       the story on stdout
//   npm run demo -- --agent            the same through the in-cluster agent (CLUSTER_MODE=agent):
//                                      the Worker never calls the API server; the agent streams
//                                      its view and deletes by order
//   npm run demo -- --agents 2         two clusters (eu-west, us-east), an agent and a token each, one
//                                      Worker: ARC's HA layout (the same scale set in both); a job in
//                                      us-east is reaped there, with no order to eu-west, whose idle
//                                      twin of the same name is never touched
//   npm run demo -- --result out.json  also the outcome as JSON (for the test)
import { writeFile } from "node:fs/promises";
import { standinRunnerId } from "../test/standins/github/runner-id.ts";
import { makeEphemeralRunner } from "../test/standins/kube/control.ts";
import type { StoredEphemeralRunner } from "../test/standins/kube/types.ts";
import { startLocalStack, workflowJobPayload, workflowRunPayload, type DecisionLog, type LocalStack, type SweepLog } from "./lib/local-stack.ts";

const GRACE_SECONDS = 5;
const BOUND_SECONDS = 3600;
const OVERALL_TIMEOUT_MS = 100_000;
const REPO = "octo-org/octo-repo";
const INSTALLATION = 4242;

interface Cast {
  role: string;
  name: string;
  runId?: number;
  jobId?: number;
}

// Names as ARC makes them: <scale set>-<set suffix>-runner-<suffix>.
const CAST = {
  cancelled: { role: "its run gets cancelled", name: "arc-runners-x7k2p-runner-c4ncl", runId: 9001, jobId: 90010 },
  idle: { role: "idle, no job yet", name: "arc-runners-x7k2p-runner-1d7e5" },
  busy: { role: "running a job", name: "arc-runners-x7k2p-runner-b5sy2", runId: 9003, jobId: 90030 },
  hung: { role: "job hangs past the bound", name: "arc-runners-x7k2p-runner-h8ng4", runId: 9004, jobId: 90040 },
} satisfies Record<string, Cast>;

export interface DemoOutcome {
  runners: {
    name: string;
    role: string;
    /** As the cluster showed it right after the last sweep (before ARC's controller finalized anything). */
    deletionTimestamp: string | null;
    /** arc-reaper's own listing, or null when it tracks nothing for the runner. */
    state: string | null;
    reason: string;
    /** Still in the cluster at the end, after ARC's controller removed the finalizers of deleted runners. */
    existsAtEnd: boolean;
  }[];
  sweeps: SweepLog[];
  seconds: number;
  /** wrangler's process group, killed at the end. */
  wranglerPid: number;
  /** --agent: from the cancelled runner's grace end to the agent's DELETE at the API server, in ms. */
  graceEndToDeleteMs?: number;
  /** --agents 2: what each cluster's agent was ordered, and what each cluster's API server was asked to delete. */
  clusters?: { name: string; orders: string[]; deletes: string[] }[];
}

/** --agents N (N >= 2): that many clusters, each with an agent of its own. */
function agentCount(): number {
  const i = process.argv.indexOf("--agents");
  if (i < 0) return 0;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 1 || n > 2) throw new Error(`--agents takes 1 or 2, got ${JSON.stringify(process.argv[i + 1])}`);
  return n;
}
const AGENTS = agentCount();
const CLUSTER_NAMES = ["eu-west", "us-east"];
const AGENT_MODE = process.argv.includes("--agent") || AGENTS > 0;

const t0 = Date.now();
let running: LocalStack | undefined;
const clock = () => {
  const now = new Date();
  return `${now.toISOString().slice(11, 23)} +${((now.getTime() - t0) / 1000).toFixed(1).padStart(4)}s`;
};
const say = (text: string) => console.log(`[${clock()}] ${text}`);
const detail = (text: string) => console.log(`${" ".repeat(22)}${text}`);
const iso = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().replace(/\.\d{3}Z$/, "Z");
const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every 100 ms until it returns a value; throws naming `what` after `timeoutMs`. */
async function waitUntil<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

function resultPath(): string | undefined {
  const i = process.argv.indexOf("--result");
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function deliver(stack: LocalStack, event: string, what: string, payload: unknown): Promise<void> {
  const { status, body } = await stack.postWebhook(event, payload);
  const answer = typeof body === "object" && body !== null ? (body as { outcome?: string; error?: string }) : {};
  say(`GitHub → ${pad(what, 44)} ${status} ${answer.outcome ?? answer.error ?? ""}`);
  if (status >= 300) throw new Error(`the Worker refused a delivery: ${status} ${JSON.stringify(body)}`);
}

function printSweep(n: number, summary: SweepLog, decisions: DecisionLog[]): void {
  say(
    `sweep ${n}: checked ${summary.checked}, deleted ${summary.deleted}, kept ${summary.kept}, waiting ${summary.waiting}, ` +
      `errors ${summary.errors}, GitHub requests ${summary.githubCalls}`,
  );
  const order = Object.values(CAST).map((c) => c.name);
  for (const d of [...decisions].sort((a, b) => order.indexOf(a.runner) - order.indexOf(b.runner))) {
    detail(`${pad(d.verdict, 7)} ${pad(d.runner, 31)} ${d.reason}`);
  }
}

async function main(): Promise<DemoOutcome> {
  console.log("arc-reaper demo: the real Worker (wrangler dev) against stand-in GitHub and Kubernetes APIs on 127.0.0.1");
  console.log(`settings: grace ${GRACE_SECONDS}s, bound ${BOUND_SECONDS}s, deleting (not a dry run), namespace arc-runners\n`);
  if (AGENT_MODE) {
    console.log("agent mode: the Worker runs CLUSTER_MODE=agent and never calls the API server; the agent (src/agent) watches the");
    console.log("cluster under infra/agent's Role, streams its view over one outbound WebSocket to GET /agent, and deletes by order.\n");
  }
  say("starting the stand-ins and wrangler dev (fresh, empty ledger) ...");
  const stack = await startLocalStack({
    agent: AGENT_MODE ? { onLog: agentLine, ...(AGENTS > 1 ? { clusters: CLUSTER_NAMES.slice(0, AGENTS) } : {}) } : undefined,
    repositories: [REPO],
    installationId: INSTALLATION,
    settings: { REAPER_GRACE_SECONDS: String(GRACE_SECONDS), REAPER_MAX_JOB_SECONDS: String(BOUND_SECONDS), REAPER_DRY_RUN: "false" },
  });
  running = stack;
  const stopOnSignal = (signal: NodeJS.Signals) => {
    void stack.stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);
  try {
    return await story(stack);
  } finally {
    say("stopping wrangler dev and the stand-ins ...");
    await stack.stop();
  }
}

/** The agent's own log lines worth showing. */
function agentLine(l: { msg: string; fields: Record<string, unknown> }): void {
  const who = typeof l.fields.cluster === "string" && AGENTS > 1 ? `agent of ${l.fields.cluster}` : "agent";
  if (l.msg === "connected to the ledger") say(`${who}: dialed out to ${String(l.fields.url)}, connected`);
  else if (l.msg === "snapshot sent") say(`${who}: sent its whole view (${String(l.fields.runners)} runners) as a snapshot`);
  else if (l.msg === "order")
    say(`${who}: order for ${String(l.fields.name)} (run ${String(l.fields.runId)}): checked against its watch, ${String(l.fields.outcome)}`);
}

// --agents 2: a job in the second cluster, reaped there by its own agent. ARC's HA layout
// runs the same scale set in both clusters; the second also holds an idle twin of a name
// the first cluster has, which nothing may touch.
const SECOND = { name: "arc-runners-x7k2p-runner-us4ea", runId: 9101, jobId: 91010 };

async function secondCluster(stack: LocalStack): Promise<NonNullable<DemoOutcome["clusters"]>> {
  const [first, second] = stack.clusters!;
  const ns = stack.namespace;
  console.log(`\nA second cluster, ${second!.name}: the same scale set, its own agent and token, the same Worker.`);
  await second!.kube.seed(
    makeEphemeralRunner({
      namespace: ns,
      scaleSet: "arc-runners",
      name: SECOND.name,
      workflowRunId: SECOND.runId,
      jobRepositoryName: REPO,
      creationTimestamp: iso(3 * 3600_000),
    }),
  );
  await second!.kube.seed(makeEphemeralRunner({ namespace: ns, scaleSet: "arc-runners", name: CAST.idle.name, creationTimestamp: iso(3 * 3600_000) }));
  say(`cluster ${second!.name}: ARC created ${SECOND.name} (run ${SECOND.runId}) and an idle twin named ${CAST.idle.name}`);
  const job = {
    runner: SECOND.name,
    repo: REPO,
    runId: SECOND.runId,
    runAttempt: 1,
    jobId: SECOND.jobId,
    installationId: INSTALLATION,
    startedAt: iso(120_000),
  };
  await deliver(stack, "workflow_job", `workflow_job.in_progress job ${SECOND.jobId}`, workflowJobPayload("in_progress", job));
  const completedAt = iso(0);
  await deliver(
    stack,
    "workflow_job",
    `workflow_job.completed job ${SECOND.jobId} (cancelled)`,
    workflowJobPayload("completed", { ...job, completedAt, conclusion: "cancelled" }),
  );
  const deletedAt = await waitUntil(
    `the alarm to reap ${SECOND.name} in ${second!.name}`,
    async () => (await second!.kube.get(ns, SECOND.name))?.metadata.deletionTimestamp,
    (GRACE_SECONDS + 10) * 1000,
  );
  say(
    `the ledger's alarm ordered ${second!.name}'s agent to delete ${SECOND.name}, ${((Date.parse(deletedAt) - Date.parse(completedAt)) / 1000).toFixed(0)}s after completed_at`,
  );
  const result = [];
  for (const c of [first!, second!]) {
    const orders = c.agent.logs.filter((l) => l.msg === "order").map((l) => String(l.fields.name));
    const deletes = (await c.kube.calls()).filter((call) => call.method === "DELETE").map((call) => call.path.split("/").pop() ?? "");
    detail(`${pad(c.name, 8)} orders to its agent: ${orders.join(", ") || "none"}; DELETEs at its API server: ${deletes.join(", ") || "none"}`);
    result.push({ name: c.name, orders, deletes });
  }
  const twins = await Promise.all(
    [first!, second!].map(async (c) => `${c.name}: ${(await c.kube.get(ns, CAST.idle.name))?.metadata.deletionTimestamp ? "deleted" : "untouched"}`),
  );
  detail(`the idle twins named ${CAST.idle.name}: ${twins.join(", ")}`);
  const connected = (await stack.metrics())
    .split("\n")
    .filter((l) => l.startsWith("arc_reaper_agent_connected{") || l.startsWith("arc_reaper_cluster_deletions_total{"));
  for (const line of connected) detail(line);
  return result;
}

async function story(stack: LocalStack): Promise<DemoOutcome> {
  const ns = stack.namespace;
  say(`Worker ready at ${stack.url}`);

  // 1. ARC created four runners; the listener wrote the job fields of the busy ones.
  for (const c of Object.values(CAST) as Cast[]) {
    await stack.kube.seed(
      makeEphemeralRunner({
        namespace: ns,
        scaleSet: "arc-runners",
        name: c.name,
        workflowRunId: c.runId,
        jobRepositoryName: c.runId === undefined ? undefined : REPO,
        // Created before any of their jobs started, as ARC's runners are (a newer object is another runner).
        creationTimestamp: iso(3 * 3600_000),
      }),
    );
  }
  say(`cluster: ARC created 4 EphemeralRunners in ${ns}`);
  for (const c of Object.values(CAST) as Cast[]) {
    detail(`${pad(c.name, 31)} ${pad(c.role, 26)} ${c.runId ? `status.workflowRunId ${c.runId}` : "no status.workflowRunId"}`);
  }

  // 2. GitHub tells arc-reaper which runner took which job (real payloads, fields set).
  const job = (c: Cast, startedMsAgo: number) => ({
    runner: c.name,
    repo: REPO,
    runId: c.runId ?? 0,
    runAttempt: 1,
    jobId: c.jobId ?? 0,
    // The registration that took the job, as GitHub's job reads name it too (a job naming another is not believed).
    runnerId: standinRunnerId(c.jobId ?? 0),
    installationId: INSTALLATION,
    startedAt: iso(startedMsAgo),
  });
  // GitHub says the hung job is still in progress (what the alarm will ask once it is past the bound).
  await stack.github.putJob({
    repo: REPO,
    id: CAST.hung.jobId,
    run_id: CAST.hung.runId,
    run_attempt: 1,
    status: "in_progress",
    started_at: iso(2 * 3600_000),
    runner_name: CAST.hung.name,
    labels: ["arc-runners"],
  });
  await deliver(stack, "workflow_job", `workflow_job.in_progress job ${CAST.cancelled.jobId}`, workflowJobPayload("in_progress", job(CAST.cancelled, 120_000)));
  await deliver(stack, "workflow_job", `workflow_job.in_progress job ${CAST.busy.jobId}`, workflowJobPayload("in_progress", job(CAST.busy, 60_000)));
  await deliver(stack, "workflow_job", `workflow_job.in_progress job ${CAST.hung.jobId}`, workflowJobPayload("in_progress", job(CAST.hung, 2 * 3600_000)));

  // 3. The hung job is due at once: the ledger's alarm asks GitHub and reaps it, no cron needed.
  await waitUntil(`the alarm to reap ${CAST.hung.name}`, async () => (await stack.kube.get(ns, CAST.hung.name))?.metadata.deletionTimestamp, 10_000);
  say(`the ledger's alarm asked GitHub about ${CAST.hung.name} (in progress for 2 h, bound ${BOUND_SECONDS}s) and deleted it`);

  // 4. Someone cancels run 9001: its job completes as cancelled, then the run does.
  say(`someone cancels run ${CAST.cancelled.runId}; ARC does nothing, the runner's pod stays Running`);
  const completedAt = iso(0);
  await deliver(
    stack,
    "workflow_job",
    `workflow_job.completed job ${CAST.cancelled.jobId} (cancelled)`,
    workflowJobPayload("completed", { ...job(CAST.cancelled, 120_000), completedAt, conclusion: "cancelled" }),
  );
  await deliver(
    stack,
    "workflow_run",
    `workflow_run.completed run ${CAST.cancelled.runId} (cancelled)`,
    workflowRunPayload({
      repo: REPO,
      runId: CAST.cancelled.runId,
      runAttempt: 1,
      installationId: INSTALLATION,
      updatedAt: completedAt,
      conclusion: "cancelled",
    }),
  );

  // 5. The cron fires: the cancelled runner is inside its grace, the busy one within its bound.
  const sweeps: SweepLog[] = [];
  const first = await stack.sweep();
  sweeps.push(first.summary);
  printSweep(1, first.summary, first.decisions);

  // 6. No cron needed: the alarm fires at GitHub's completed_at + grace and deletes at once.
  say(`waiting for the grace (${GRACE_SECONDS}s after completed_at ${completedAt}) ...`);
  const deletedAt = await waitUntil(
    `the alarm to reap ${CAST.cancelled.name}`,
    async () => (await stack.kube.get(ns, CAST.cancelled.name))?.metadata.deletionTimestamp,
    (GRACE_SECONDS + 10) * 1000,
  );
  const delay = (Date.parse(deletedAt) - Date.parse(completedAt)) / 1000;
  say(`the ledger's alarm deleted ${CAST.cancelled.name} ${delay.toFixed(0)}s after completed_at (grace ${GRACE_SECONDS}s), on the webhook's word alone`);
  const second = await stack.sweep();
  sweeps.push(second.summary);
  printSweep(2, second.summary, second.decisions);

  // 7. What the cluster and arc-reaper show now.
  const cluster = new Map<string, StoredEphemeralRunner>((await stack.kube.list()).map((r) => [r.metadata.name ?? "", r]));
  const rows = await stack.adminRunners();
  say("ARC's controller (played by the stand-in) removes the finalizers of runners being deleted; their pods go");
  const finalized = await stack.kube.finalize({ namespace: ns });
  detail(finalized.length === 0 ? "none" : finalized.map((f) => f.name).join(", "));
  const remaining = new Set((await stack.kube.list()).map((r) => r.metadata.name ?? ""));

  const outcome: DemoOutcome = { runners: [], sweeps, seconds: 0, wranglerPid: stack.pid };
  if (AGENT_MODE) {
    const due = new Date(Date.parse(completedAt) + GRACE_SECONDS * 1000).toISOString(); // GitHub's completed_at + the grace
    const del = (await stack.kube.calls()).find((c) => c.method === "DELETE" && c.path.endsWith(`/${CAST.cancelled.name}`));
    if (due && del) outcome.graceEndToDeleteMs = Date.parse(del.time) - Date.parse(due);
  }
  console.log("\nWhat happened:");
  console.log(`  ${pad("runner", 31)} ${pad("role", 26)} ${pad("cluster", 36)} arc-reaper`);
  for (const c of Object.values(CAST) as Cast[]) {
    const deletionTimestamp = cluster.get(c.name)?.metadata.deletionTimestamp ?? null;
    const row = rows.find((r) => r.name === c.name);
    const idleDecision = second.decisions.find((d) => d.runner === c.name);
    // A runner with no job is never judged, so no decision is logged for it: say what the judge's table says.
    const reason = row?.reason ?? idleDecision?.reason ?? (c.runId === undefined ? "idle: no job recorded for this runner" : "");
    const where = deletionTimestamp ? `deleted at ${deletionTimestamp.slice(11, 19)}, now gone` : "untouched, still Running";
    console.log(`  ${pad(c.name, 31)} ${pad(c.role, 26)} ${pad(where, 36)} ${row ? `${row.state}: ${reason}` : `not tracked: ${reason}`}`);
    outcome.runners.push({ name: c.name, role: c.role, deletionTimestamp, state: row?.state ?? null, reason, existsAtEnd: remaining.has(c.name) });
  }
  const deletes = outcome.runners.filter((r) => r.deletionTimestamp).length;
  console.log(`\n${deletes} reaped, ${outcome.runners.length - deletes} kept. Nothing idle or still within its bound was touched.`);
  console.log(
    `GitHub requests: the alarm spent a token and a job read on the runner past the bound; sweep 1 made ${first.summary.githubCalls} ` +
      `and sweep 2 made ${second.summary.githubCalls} (failed webhook deliveries are listed every 5 minutes), and the cancelled run's ` +
      `runner was reaped on the webhook's word alone, ${delay.toFixed(0)}s after completed_at with a ${GRACE_SECONDS}s grace.`,
  );
  if (AGENT_MODE) {
    const calls = await stack.kube.calls();
    const users = [...new Set(calls.map((c) => c.user))].join(", ");
    console.log(
      `Through the agent: every API call came from ${users}; the ledger's alarm ordered the cancelled run's runner deleted at its grace end ` +
        `and the agent's DELETE reached the API server ${outcome.graceEndToDeleteMs ?? "?"} ms after it.`,
    );
  }
  if (AGENTS > 1) outcome.clusters = await secondCluster(stack);
  console.log("Try it yourself: npm start (a busy runner on the stand-ins; Enter sends its webhooks; it prints the admin page and its token).");
  return outcome;
}

const timer = setTimeout(() => {
  console.error(`demo: gave up after ${OVERALL_TIMEOUT_MS / 1000}s`);
  const stopped = running ? running.stop() : Promise.resolve();
  void Promise.race([stopped, sleep(10_000)]).finally(() => process.exit(1));
}, OVERALL_TIMEOUT_MS);
timer.unref();

try {
  const outcome = await main();
  outcome.seconds = Math.round((Date.now() - t0) / 100) / 10;
  say(`done in ${outcome.seconds}s`);
  const out = resultPath();
  if (out) await writeFile(out, `${JSON.stringify(outcome, null, 2)}\n`);
  process.exitCode = 0;
} catch (e) {
  console.error(`demo failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
