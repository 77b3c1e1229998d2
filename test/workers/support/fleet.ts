// A randomized fleet of runner lifecycles driven through the real Worker: real
// payloads delivered duplicated, shuffled, or dropped (then recorded as failed
// deliveries on the stand-in GitHub, which the sweep asks to redeliver), API
// faults on both stand-ins, and many sweeps. It records what a correct reaper
// must and must not delete, and checks every deletion against it as it happens.
import { expect } from "vitest";
import { makeEphemeralRunner, type EphemeralRunner } from "../../standins/kube/control.ts";
import { workflowJobPayload, workflowRunPayload } from "./payloads.ts";
import { INSTALLATION, NS, REPO, stack, type Stack } from "./stack.ts";
import { signedDelivery, call, evictLedger, ledgerOf, report } from "./worker.ts";

export interface FleetOptions {
  seed: number;
  lifecycles: number;
  duplicateRate: number;
  dropRate: number;
  /** Sweeps during which the stand-ins inject faults (5xx, 429, slow answers). */
  faultSweeps: number;
  graceSeconds: number;
  boundSeconds: number;
  githubBudget: number;
  /** Sweeps over which deliveries are spread. */
  deliverySweeps: number;
  maxSweeps: number;
}

export interface FleetFigures {
  seed: number;
  lifecycles: number;
  runners: number;
  events: number;
  deliveries: number;
  duplicates: number;
  drops: number;
  redelivered: number;
  faultsInjected: number;
  sweeps: number;
  alarms: number;
  deletions: number;
  wrongfulDeletions: number;
  deletedTwice: number;
  leftBehind: number;
  mostGithubCallsInOneSweep: number;
  githubBudget: number;
  sweepsToConverge: number;
}

type Kind = "done" | "running" | "hung" | "idle" | "unknown-done" | "unknown-running" | "rerun";

interface Runner {
  name: string;
  kind: Kind;
  /** Simulated time from which deleting it is right (ms); undefined: never. */
  deletableFrom?: number;
}

interface Event {
  event: "workflow_job" | "workflow_run";
  guid: string;
  payload: Record<string, unknown>;
  at: number; // GitHub's time of the event (ms)
}

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

export async function runFleet(o: FleetOptions): Promise<FleetFigures> {
  const random = prng(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  // Simulated time of the first sweep: a day ahead of the clock, so that the runtime
  // never fires the ledger's alarm on its own; the fleet runs it at simulated times.
  const S = Date.now() + 86_400_000;
  const s: Stack = await stack({
    REAPER_GRACE_SECONDS: String(o.graceSeconds),
    REAPER_MAX_JOB_SECONDS: String(o.boundSeconds),
    REAPER_MAX_GITHUB_CALLS_PER_SWEEP: String(o.githubBudget),
    REAPER_MAX_DELETIONS_PER_SWEEP: "200",
    REAPER_REDELIVERY_LOOKBACK_SECONDS: "86400",
  });
  const grace = o.graceSeconds * 1000;
  const bound = o.boundSeconds * 1000;

  const runners: Runner[] = [];
  const cluster: EphemeralRunner[] = [];
  const events: Event[] = [];
  let guidCounter = 0;
  const guid = () => `00000000-0000-4000-8000-${String(++guidCounter).padStart(12, "0")}`;

  const jobEvent = (action: "in_progress" | "completed", j: { runner: string; runId: number; attempt: number; jobId: number; startedAt: number; completedAt?: number; conclusion?: string }): Event => ({
    event: "workflow_job",
    guid: guid(),
    at: action === "completed" ? j.completedAt! : j.startedAt,
    payload: workflowJobPayload(action, {
      runner: j.runner, runId: j.runId, runAttempt: j.attempt, jobId: j.jobId, repo: REPO, installationId: INSTALLATION,
      startedAt: iso(j.startedAt), ...(action === "completed" ? { completedAt: iso(j.completedAt!), conclusion: j.conclusion! } : {}),
    }),
  });
  const runEvent = (runId: number, attempt: number, updatedAt: number, conclusion: string): Event => ({
    event: "workflow_run", guid: guid(), at: updatedAt,
    payload: workflowRunPayload({ repo: REPO, runId, runAttempt: attempt, updatedAt: iso(updatedAt), conclusion, installationId: INSTALLATION }),
  });

  const kinds: [Kind, number][] = [["done", 0.45], ["running", 0.2], ["hung", 0.05], ["idle", 0.1], ["unknown-done", 0.07], ["unknown-running", 0.05], ["rerun", 0.08]];
  const kindOf = (): Kind => {
    let r = random();
    for (const [k, p] of kinds) if ((r -= p) < 0) return k;
    return "done";
  };

  for (let i = 0; i < o.lifecycles; i++) {
    const kind = kindOf();
    const runId = 100_000 + i;
    const jobId = 5_000_000 + i * 10;
    const name = `arc-runners-soak-runner-${i}`;
    const startedAt = S - Math.floor(random() * 3600_000);
    // ARC creates a runner a little before it takes its job.
    const busy = (n: string, attempt = 1, createdAt = startedAt - 5000) =>
      makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: n, workflowRunId: runId, jobRepositoryName: REPO, creationTimestamp: iso(createdAt), jobDisplayName: `attempt ${attempt}` });
    switch (kind) {
      case "done": {
        const completedAt = S + Math.floor((random() - 0.7) * 1800_000);
        const conclusion = pick(["success", "failure", "cancelled", "cancelled"] as const);
        cluster.push(busy(name));
        runners.push({ name, kind, deletableFrom: completedAt + grace });
        const job = { runner: name, runId, attempt: 1, jobId, startedAt: Math.min(startedAt, completedAt - 1000), completedAt, conclusion };
        events.push(jobEvent("in_progress", job), jobEvent("completed", job), runEvent(runId, 1, completedAt + 2000, conclusion));
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "completed", conclusion, runner_name: name, started_at: iso(job.startedAt), completed_at: iso(completedAt) });
        break;
      }
      case "running": {
        cluster.push(busy(name));
        runners.push({ name, kind });
        events.push(jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt }));
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(startedAt) });
        break;
      }
      case "hung": {
        const hungSince = S - bound - Math.floor(random() * 3600_000) - 60_000;
        cluster.push(busy(name, 1, hungSince - 5000));
        runners.push({ name, kind, deletableFrom: hungSince + bound });
        events.push(jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt: hungSince }));
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(hungSince) });
        break;
      }
      case "idle":
        cluster.push(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name }));
        runners.push({ name, kind });
        break;
      case "unknown-done": {
        const updatedAt = S - 600_000 - Math.floor(random() * 3600_000);
        cluster.push(busy(name));
        runners.push({ name, kind, deletableFrom: updatedAt + grace });
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "completed", conclusion: "cancelled", runner_name: name, started_at: iso(updatedAt - 60_000), completed_at: iso(updatedAt) });
        await s.github.putRun({ repo: REPO, id: runId, status: "completed", conclusion: "cancelled", updated_at: iso(updatedAt) });
        break;
      }
      case "unknown-running": {
        cluster.push(busy(name));
        runners.push({ name, kind });
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(startedAt) });
        break;
      }
      case "rerun": {
        // Attempt 1 failed on runner A; the re-run's job runs on runner B of the same run.
        const a = `${name}-a`;
        const b = `${name}-b`;
        const failedAt = startedAt + 60_000;
        const rerunAt = failedAt + 120_000;
        cluster.push(busy(a), busy(b, 2));
        runners.push({ name: a, kind, deletableFrom: failedAt + grace }, { name: b, kind });
        const jobA = { runner: a, runId, attempt: 1, jobId, startedAt, completedAt: failedAt, conclusion: "failure" };
        events.push(jobEvent("in_progress", jobA), jobEvent("completed", jobA), runEvent(runId, 1, failedAt + 1000, "failure"));
        events.push(jobEvent("in_progress", { runner: b, runId, attempt: 2, jobId: jobId + 1, startedAt: rerunAt }));
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "completed", conclusion: "failure", runner_name: a, started_at: iso(startedAt), completed_at: iso(failedAt) });
        await s.github.putJob({ repo: REPO, id: jobId + 1, run_id: runId, run_attempt: 2, status: "in_progress", runner_name: b, started_at: iso(rerunAt) });
        break;
      }
    }
  }
  for (let i = 0; i < cluster.length; i += 200) await s.kube.seedAll(cluster.slice(i, i + 200));

  // Deliveries: each event once, some twice, some dropped (GitHub records the failure).
  const byGuid = new Map(events.map((e) => [e.guid, e]));
  const plan: { e: Event; drop: boolean }[] = [];
  let duplicates = 0;
  let drops = 0;
  for (const e of events) {
    const drop = random() < o.dropRate;
    if (drop) drops++;
    plan.push({ e, drop });
    if (!drop && random() < o.duplicateRate) {
      duplicates++;
      plan.push({ e, drop: false });
    }
  }
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  const deliver = async (e: Event) => {
    const res = await call(s.env, await signedDelivery(e.event, e.payload, { delivery: e.guid }));
    expect(res.status, `delivery ${e.guid}`).toBe(202);
  };

  const deletedAt = new Map<string, number>();
  const wrongful: string[] = [];
  let deletedTwice = 0;
  let faultsInjected = 0;
  let mostGithubCalls = 0;
  let redelivered = 0;
  let sweeps = 0;
  let alarms = 0;
  let convergedAt = -1;
  const mustDelete = runners.filter((r) => r.deletableFrom !== undefined);
  const byName = new Map(runners.map((r) => [r.name, r]));

  for (let k = 0; k < o.maxSweeps; k++) {
    const now = S + k * 60_000;
    // This sweep's share of the deliveries, arriving before it.
    const share = k < o.deliverySweeps ? plan.slice(Math.floor((plan.length * k) / o.deliverySweeps), Math.floor((plan.length * (k + 1)) / o.deliverySweeps)) : [];
    for (const { e, drop } of share) {
      // GitHub attempts a delivery right after the event; here, within the minute before this sweep.
      await s.github.addDelivery({ guid: e.guid, event: e.event, action: String(e.payload.action), statusCode: drop ? 502 : 202, deliveredAt: iso(now - Math.floor(random() * 60_000)) });
      if (!drop) await deliver(e);
    }
    if (k < o.faultSweeps) {
      const faults = [
        () => s.kube.addFault({ match: { method: "GET" }, status: pick([500, 503, 429]), times: 1 }),
        () => s.kube.addFault({ match: { method: "DELETE" }, status: pick([500, 409, 429]), times: 1 + Math.floor(random() * 3) }),
        () => s.kube.addFault({ match: { method: "DELETE" }, delayMs: 50, times: 2 }),
        () => s.github.addFault({ match: { pathIncludes: "/actions/" }, status: pick([500, 502, 503]), times: 1 + Math.floor(random() * 3) }),
        () => s.github.addFault({ match: { pathIncludes: "/actions/" }, status: 429, retryAfterSeconds: 1, times: 1 }),
        () => s.github.addFault({ match: { pathIncludes: "/app/hook/deliveries" }, status: 500, times: 1 }),
        () => s.github.addFault({ match: { pathIncludes: "access_tokens" }, status: 500, times: 1 }),
      ];
      const n = 1 + Math.floor(random() * 3);
      for (let i = 0; i < n; i++) await pick(faults)();
      faultsInjected += n;
    } else if (k === o.faultSweeps) {
      await s.kube.clearFaults();
      await s.github.clearFaults();
    }

    // Each alarm and each sweep meets a fresh ledger instance, as a new isolate would.
    const audit = async (at: number, what: string) => {
      mostGithubCalls = Math.max(mostGithubCalls, (await s.github.calls()).length);
      for (const c of await s.kube.calls()) {
        if (c.method !== "DELETE" || c.status !== 200) continue;
        const name = c.path.split("/").pop()!;
        const r = byName.get(name);
        if (deletedAt.has(name)) deletedTwice++;
        deletedAt.set(name, at);
        if (!r || r.deletableFrom === undefined || at < r.deletableFrom) wrongful.push(`${name} (${r?.kind ?? "unknown"}) at ${what} ${k}`);
      }
      await s.github.clearCalls();
      await s.kube.clearCalls();
    };
    await s.github.clearCalls();
    await s.kube.clearCalls();
    for (const at of [now - 40_000, now - 20_000]) {
      await evictLedger(s.env);
      await ledgerOf(s.env).alarmAt(at);
      alarms++;
      await audit(at, "alarm");
    }
    await evictLedger(s.env);
    await s.sweep(now);
    sweeps++;
    await audit(now, "sweep");
    await s.kube.finalize(); // ARC: deregister, then the object goes
    // GitHub redelivers what the sweep asked for (replayed here, with the same GUID).
    const asked = await s.github.redeliveries();
    for (const r of asked.slice(redelivered)) {
      const e = byGuid.get(r.guid);
      if (!e) continue;
      await deliver(e);
      // GitHub lists the new attempt as it delivered it: at this (simulated) time, answered 202.
      await s.github.addDelivery({ guid: e.guid, event: e.event, action: String(e.payload.action), statusCode: 202, deliveredAt: iso(now), redelivery: true });
    }
    redelivered = asked.length;
    // Converged: faults over, every delivery made, every dropped one redelivered, every finished runner deleted.
    if (k >= Math.max(o.faultSweeps, o.deliverySweeps) && redelivered >= drops && mustDelete.every((r) => deletedAt.has(r.name))) {
      convergedAt = k;
      break;
    }
  }
  const finalNow = S + (sweeps - 1) * 60_000;
  const asks = new Map<string, number>();
  for (const r of await s.github.redeliveries()) asks.set(r.guid, (asks.get(r.guid) ?? 0) + 1);
  const askedTwice = [...asks].filter(([, n]) => n > 1).map(([guid]) => guid);
  if (askedTwice.length > 0) await report(`redelivery asked more than once for: ${askedTwice.slice(0, 5).join(", ")}`);
  const leftBehind = mustDelete.filter((r) => !deletedAt.has(r.name) && r.deletableFrom! <= finalNow - 60_000);
  if (wrongful.length > 0) console.error("wrongful deletions:", wrongful.slice(0, 10));
  if (leftBehind.length > 0) console.error("left behind:", leftBehind.slice(0, 10).map((r) => `${r.name} (${r.kind}) due ${iso(r.deletableFrom!)}`));

  return {
    seed: o.seed,
    lifecycles: o.lifecycles,
    runners: runners.length,
    events: events.length,
    deliveries: plan.length,
    duplicates,
    drops,
    redelivered,
    faultsInjected,
    sweeps,
    alarms,
    deletions: deletedAt.size,
    wrongfulDeletions: wrongful.length,
    deletedTwice,
    leftBehind: leftBehind.length,
    mostGithubCallsInOneSweep: mostGithubCalls,
    githubBudget: o.githubBudget,
    sweepsToConverge: convergedAt + 1,
  };
}
