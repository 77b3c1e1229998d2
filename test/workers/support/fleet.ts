// A randomized fleet of runner lifecycles driven through the real Worker: real
// payloads delivered duplicated, shuffled, or dropped (then recorded as failed
// deliveries on the stand-in GitHub, which the sweep asks to redeliver), API
// faults on both stand-ins, and many sweeps. It records what a correct reaper
// must and must not delete, and checks every deletion against it as it happens.
// Its teeth (issue 10): names that come back while their facts are open (the
// runner vanished between two sweeps and ARC made a new one of that name, idle
// or busy in the same or another run), Access-style answers (302 to a login
// page, 200 HTML, `{}`) on list, read and delete, completions lost beyond the
// look-back (only the recheck can find them), and 403 secondary rate limits.
// Besides each deletion it audits every runner closed as gone (was its object
// still in the cluster?), every GitHub call during a back-off, and whether any
// credential followed a redirect to another host.
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { accessFaults, type AccessAnswer } from "../../standins/kube/access-faults-client.ts";
import { makeEphemeralRunner, type EphemeralRunner } from "../../standins/kube/control.ts";
import { workflowJobPayload, workflowRunPayload } from "./payloads.ts";
import { INSTALLATION, NS, REPO, stack, type Stack } from "./stack.ts";

/** The second watched namespace: twins of a name live across the two. */
const OTHER_NS = "other-runners";
import { signedDelivery, call, evictLedger, ledgerOf, report } from "./worker.ts";
import { FLEET_AGENT_TOKEN, fleetAgent, type FleetAgent, type SyncMode } from "./fleet-agent.ts";

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
  /** REAPER_RECHECK_SECONDS: small, so that lost completions are found within the soak's simulated hour or so. */
  recheckSeconds?: number;
  /** Agent mode: an in-cluster agent whose view lags (stalled watches, relists, short outages); see fleet-agent.ts. */
  agent?: boolean;
  /**
   * Slots that do nothing (issue 24): Failed runners (REAPER_FAILED_SECONDS) and deletions ARC's finalizer holds
   * (REAPER_FINISH_STUCK): the stand-in holds the deletion of every hung runner (its job runs) and of every held one
   * (GitHub's REST answer says in_progress until a later sweep, then completed) until the reaper patches it.
   */
  slots?: boolean;
  /** With `slots`: hold the deletion of every n-th hung runner (default 1: all); each costs a GitHub read every REAPER_STUCK_SECONDS. */
  heldHungEvery?: number;
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
  /** New runners that took a name whose facts were still open. */
  nameReuses: number;
  /** Jobs whose completion was never delivered nor listed (beyond the look-back). */
  lostCompletions: number;
  accessFaults: number;
  /** DELETEs an Access page answered 200 (nothing deleted): must not count as reaped. */
  accessAnsweredDeletes: number;
  /** 403 secondary rate limits GitHub answered. */
  secondaryLimits: number;
  deletions: number;
  wrongfulDeletions: number;
  deletedTwice: number;
  /** Runners closed as gone while the object that took their job was still in the cluster. */
  goneWhileInCluster: number;
  /** Requests with an installation token while GitHub had asked to wait. */
  githubCallsDuringBackOff: number;
  /** Requests that reached another host with a credential (after a redirect). */
  credentialsToOtherHosts: number;
  leftBehind: number;
  mostGithubCallsInOneSweep: number;
  githubBudget: number;
  sweepsToConverge: number;
  /** Runners closed as gone while the object that took their job had really left (the positive side of goneWhileInCluster). */
  goneRightly: number;
  /** Names busy in one watched namespace with an idle twin of the same name in the other (planned). */
  twins: number;
  /** What happened to them: busy twins deleted, idle twins never deleted. */
  twinsReaped: number;
  idleTwinsKept: number;
  /** Busy runners no webhook told of (planned); those the ledger was seen to hold as unseen rows whose object then left, never deleted; and of those, the rows that ended. */
  unseenVanishPlanned: number;
  unseenVanished: number;
  unseenVanishedEnded: number;
  /** Busy runners seen before their in_progress webhook arrived (planned), and those seen as unseen rows that then became a tracked row of their run; GitHub calls about them (must be 0). */
  unseenExplainedPlanned: number;
  unseenExplained: number;
  githubCallsForExplained: number;
  /** The most alarm runs in any simulated minute (each alarm run until nothing is due at its time). */
  mostAlarmRunsInAMinute: number;
  /** Agent mode: steps whose watch stalled, relists, and outages of the agent's link. */
  agentStalls: number;
  agentRelists: number;
  agentOutages: number;
  /** Reads by name the ledger asked the agent for (a view older than a runner's facts). */
  agentReads: number;
  /** Issue 24 (slots): Failed runners planned, deleted, deleted before their failure time + REAPER_FAILED_SECONDS, deleted twice. */
  failedRunners: number;
  failedDeleted: number;
  failedDeletedEarly: number;
  failedDeletedTwice: number;
  /** Deletions of runners busy on a job that runs (status.workflowRunId set, never deletable). */
  busyDeleted: number;
  /** Held deletions planned (held kind), finished by the reaper's patch, and hung runners held while their job runs. */
  heldDeletions: number;
  heldFinished: number;
  heldWhileRunning: number;
  /** Finalizer patches (200) answered while GitHub said the job runs (must be 0), and every finalizer patch. */
  finalizersRemovedWhileRunning: number;
  patches: number;
}

type Kind =
  | "done"
  | "running"
  | "hung"
  | "idle"
  | "unknown-done"
  | "unknown-running"
  | "rerun"
  | "lost"
  | "twin"
  | "twin-idle"
  | "unseen-vanish"
  | "unseen-explained"
  | "failed"
  | "failed-busy"
  | "held"
  | ReuseKind;
type ReuseKind = "reuse-idle" | "reuse-same-run" | "reuse-other-run";

/** One EphemeralRunner object (names can come back: objects are told apart by uid). */
interface Runner {
  name: string;
  kind: Kind;
  /** Simulated time from which deleting it is right (ms); undefined: never. */
  deletableFrom?: number;
  object: EphemeralRunner;
  uid?: string;
  /** It left the cluster (replaced by a new object of its name). */
  removed?: boolean;
  /** Held kind: the sweep from which GitHub's REST answer says its job completed (before it: in_progress). */
  completesAtSweep?: number;
}

/** At sweep k, the object `old` vanishes and `fresh` takes its name, before that sweep's alarms. */
interface Swap {
  k: number;
  old: Runner;
  fresh: Runner;
  /** What GitHub learns and delivers at that moment. */
  afterwards: () => Promise<void>;
}

const SECONDARY_LIMIT = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
const ACCESS_ANSWERS: AccessAnswer[] = ["access-login", "access-login-local", "redirect-local", "html-200", "empty-object-200", "html-404"];

interface Event {
  event: "workflow_job" | "workflow_run";
  guid: string;
  payload: Record<string, unknown>;
  at: number; // GitHub's time of the event (ms)
}

/** A small seeded generator (mulberry32): the same seed, the same run. */
export function prng(seed: number): () => number {
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
/** The fleet's REAPER_FAILED_SECONDS (with `slots`). */
const FAILED_SECONDS = 120;

export async function runFleet(o: FleetOptions): Promise<FleetFigures> {
  const random = prng(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  // Simulated time of the first sweep: a day ahead of the clock, so that the runtime
  // never fires the ledger's alarm on its own; the fleet runs it at simulated times.
  const S = Date.now() + 86_400_000;
  const s: Stack = await stack({
    REAPER_GRACE_SECONDS: String(o.graceSeconds),
    REAPER_MAX_JOB_SECONDS: String(o.boundSeconds),
    REAPER_MAX_GITHUB_CALLS_PER_MINUTE: String(o.githubBudget),
    REAPER_MAX_DELETIONS_PER_MINUTE: "200",
    REAPER_REDELIVERY_LOOKBACK_SECONDS: "86400",
    REAPER_RECHECK_SECONDS: String(o.recheckSeconds ?? 600),
    REAPER_NAMESPACES: `${NS},${OTHER_NS}`,
    ...(o.slots ? { REAPER_FAILED_SECONDS: String(FAILED_SECONDS), REAPER_FINISH_STUCK: "true", REAPER_STUCK_SECONDS: "120" } : {}),
    ...(o.agent ? { CLUSTER_MODE: "agent", AGENT_TOKEN: FLEET_AGENT_TOKEN, KUBE_API_URL: undefined, KUBE_TOKEN: undefined } : {}),
  });
  const access = accessFaults(s.kube);
  const grace = o.graceSeconds * 1000;
  const bound = o.boundSeconds * 1000;

  const runners: Runner[] = [];
  const swaps: Swap[] = [];
  /** Which object took a job: `${name}#${jobId}`, and `${name}#run${runId}` for facts learned from a completed run (job 0). */
  const owners = new Map<string, Runner>();
  const events: Event[] = [];
  let guidCounter = 0;
  const guid = () => `00000000-0000-4000-8000-${String(++guidCounter).padStart(12, "0")}`;

  const jobEvent = (
    action: "in_progress" | "completed",
    j: { runner: string; runId: number; attempt: number; jobId: number; startedAt: number; completedAt?: number; conclusion?: string },
  ): Event => ({
    event: "workflow_job",
    guid: guid(),
    at: action === "completed" ? j.completedAt! : j.startedAt,
    payload: workflowJobPayload(action, {
      runner: j.runner,
      runId: j.runId,
      runAttempt: j.attempt,
      jobId: j.jobId,
      repo: REPO,
      installationId: INSTALLATION,
      startedAt: iso(j.startedAt),
      ...(action === "completed" ? { completedAt: iso(j.completedAt!), conclusion: j.conclusion! } : {}),
    }),
  });
  const runEvent = (runId: number, attempt: number, updatedAt: number, conclusion: string): Event => ({
    event: "workflow_run",
    guid: guid(),
    at: updatedAt,
    payload: workflowRunPayload({ repo: REPO, runId, runAttempt: attempt, updatedAt: iso(updatedAt), conclusion, installationId: INSTALLATION }),
  });

  const kinds: [Kind, number][] = [
    ["done", 0.34],
    ["running", 0.18],
    ["hung", 0.05],
    ["idle", 0.09],
    ["unknown-done", 0.07],
    ["unknown-running", 0.05],
    ["rerun", 0.08],
    ["lost", 0.03],
    ["reuse-idle", 0.01],
    ["reuse-same-run", 0.01],
    ["reuse-other-run", 0.01],
    ["twin", 0.04],
    ["unseen-vanish", 0.02],
    ["unseen-explained", 0.02],
  ];
  if (o.slots) {
    kinds[0] = ["done", 0.22];
    kinds.push(["failed", 0.05], ["failed-busy", 0.02], ["held", 0.05]);
  }
  /** Objects removed at sweep k (they vanish unseen), and webhooks held back until sweep k. */
  const vanishing: { k: number; r: Runner }[] = [];
  // The unseen teeth live after the fault sweeps: a sweep whose lists fail cannot see a runner, so one that came and
  // went within them would be planned, never observed. With faults they appear at the first sweep without (`calm`).
  const calm = o.faultSweeps;
  const appearing: Runner[] = [];
  const late: { k: number; e: Event }[] = [];
  /** Held kind: at sweep k, GitHub's REST answer turns completed. */
  const flips: { k: number; complete: () => Promise<unknown> }[] = [];
  const explainedRuns = new Set<number>();
  const explained: { r: Runner; runId: number }[] = [];
  /** Uids the ledger held as unseen rows at any audit (what the run observed, not what was planned). */
  const heldUnseen = new Set<string>();
  const add = (r: Omit<Runner, "object"> & { object: EphemeralRunner }, jobs: { jobId?: number; runId?: number }[] = []): Runner => {
    runners.push(r);
    for (const j of jobs) {
      if (j.jobId !== undefined) owners.set(`${r.name}#${j.jobId}`, r);
      if (j.runId !== undefined) owners.set(`${r.name}#run${j.runId}`, r);
    }
    return r;
  };
  const kindOf = (): Kind => {
    let r = random();
    for (const [k, p] of kinds) if ((r -= p) < 0) return k;
    return "done";
  };

  /**
   * A name that comes back while its facts are open: the first runner of the name takes job J1 of run R1
   * (its in_progress webhook delivered as usual); between two sweeps (sweep k) it finishes J1, vanishes,
   * and ARC creates a new runner of the same name: idle, busy on another job of R1 (its webhook lost,
   * still running), or busy on a job of another run R2 that completes (its webhooks lost: only the
   * reconcile can find it). J1's completion is delivered at that moment, or lost.
   */
  async function nameComesBack(kind: ReuseKind, name: string, runId: number, jobId: number): Promise<void> {
    const k = 1 + Math.floor(random() * 6);
    const swapAt = S + k * 60_000 - 45_000; // before that sweep's first alarm
    const startedAt = S - 600_000 - Math.floor(random() * 3000_000); // well before the new object (beyond the skew)
    const completedAt = swapAt - 20_000;
    const old = add(
      {
        name,
        kind,
        deletableFrom: completedAt + grace,
        object: makeEphemeralRunner({
          namespace: NS,
          scaleSet: "arc-runners",
          name,
          workflowRunId: runId,
          jobRepositoryName: REPO,
          creationTimestamp: iso(startedAt - 5000),
        }),
      },
      [{ jobId, runId }],
    );
    const j1 = { runner: name, runId, attempt: 1, jobId, startedAt, completedAt, conclusion: "success" };
    events.push(jobEvent("in_progress", j1));
    await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(startedAt) });
    const created = iso(swapAt).replace(/\.\d{3}Z$/, "Z");
    let fresh: Runner;
    let later = async () => {};
    if (kind === "reuse-idle") {
      fresh = { name, kind, object: makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name, creationTimestamp: created }) };
      runners.push(fresh);
    } else if (kind === "reuse-same-run") {
      fresh = add(
        {
          name,
          kind,
          object: makeEphemeralRunner({
            namespace: NS,
            scaleSet: "arc-runners",
            name,
            workflowRunId: runId,
            jobRepositoryName: REPO,
            creationTimestamp: created,
          }),
        },
        [{ jobId: jobId + 1 }],
      );
      later = async () => {
        await s.github.putJob({
          repo: REPO,
          id: jobId + 1,
          run_id: runId,
          run_attempt: 1,
          status: "in_progress",
          runner_name: name,
          started_at: iso(swapAt + 5000),
        });
      };
    } else {
      const r2 = runId + 500_000;
      fresh = add(
        {
          name,
          kind,
          deletableFrom: swapAt + 60_000 + grace,
          object: makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name, workflowRunId: r2, jobRepositoryName: REPO, creationTimestamp: created }),
        },
        [{ jobId: jobId + 1, runId: r2 }],
      );
      later = async () => {
        await s.github.putJob({
          repo: REPO,
          id: jobId + 1,
          run_id: r2,
          run_attempt: 1,
          status: "completed",
          conclusion: "success",
          runner_name: name,
          started_at: iso(swapAt + 5000),
          completed_at: iso(swapAt + 60_000),
        });
        await s.github.putRun({ repo: REPO, id: r2, status: "completed", conclusion: "success", updated_at: iso(swapAt + 70_000) });
      };
    }
    const deliverCompletion = random() < 0.5;
    swaps.push({
      k,
      old,
      fresh,
      afterwards: async () => {
        await s.github.putJob({
          repo: REPO,
          id: jobId,
          run_id: runId,
          run_attempt: 1,
          status: "completed",
          conclusion: "success",
          runner_name: name,
          started_at: iso(startedAt),
          completed_at: iso(completedAt),
        });
        await later();
        if (deliverCompletion) await deliver(jobEvent("completed", j1));
      },
    });
  }

  // The first three are always the one-reconcile teeth; the rest are drawn.
  const teeth: Kind[] = ["twin", "unseen-vanish", "unseen-explained", ...(o.slots ? (["failed", "held", "failed-busy"] as const) : [])];
  for (let i = 0; i < o.lifecycles; i++) {
    const kind = teeth[i] ?? kindOf();
    const runId = 100_000 + i;
    const jobId = 5_000_000 + i * 10;
    const name = `arc-runners-soak-runner-${i}`;
    const startedAt = S - Math.floor(random() * 3600_000);
    // ARC creates a runner a little before it takes its job.
    const busy = (n: string, attempt = 1, createdAt = startedAt - 5000) =>
      makeEphemeralRunner({
        namespace: NS,
        scaleSet: "arc-runners",
        name: n,
        workflowRunId: runId,
        jobRepositoryName: REPO,
        creationTimestamp: iso(createdAt),
        jobDisplayName: `attempt ${attempt}`,
      });
    switch (kind) {
      case "done": {
        const completedAt = S + Math.floor((random() - 0.7) * 1800_000);
        const conclusion = pick(["success", "failure", "cancelled", "cancelled"] as const);
        const job = { runner: name, runId, attempt: 1, jobId, startedAt: Math.min(startedAt, completedAt - 1000), completedAt, conclusion };
        add({ name, kind, deletableFrom: completedAt + grace, object: busy(name, 1, job.startedAt - 5000) }, [{ jobId, runId }]);
        events.push(jobEvent("in_progress", job), jobEvent("completed", job), runEvent(runId, 1, completedAt + 2000, conclusion));
        await s.github.putJob({
          repo: REPO,
          id: jobId,
          run_id: runId,
          run_attempt: 1,
          status: "completed",
          conclusion,
          runner_name: name,
          started_at: iso(job.startedAt),
          completed_at: iso(completedAt),
        });
        break;
      }
      case "running": {
        add({ name, kind, object: busy(name) }, [{ jobId, runId }]);
        events.push(jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt }));
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(startedAt) });
        break;
      }
      case "hung": {
        const hungSince = S - bound - Math.floor(random() * 3600_000) - 60_000;
        add({ name, kind, deletableFrom: hungSince + bound, object: busy(name, 1, hungSince - 5000) }, [{ jobId, runId }]);
        events.push(jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt: hungSince }));
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(hungSince) });
        break;
      }
      case "idle":
        add({ name, kind, object: makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name }) });
        break;
      case "unknown-done": {
        const updatedAt = S - 600_000 - Math.floor(random() * 3600_000);
        add({ name, kind, deletableFrom: updatedAt + grace, object: busy(name) }, [{ jobId, runId }]);
        await s.github.putJob({
          repo: REPO,
          id: jobId,
          run_id: runId,
          run_attempt: 1,
          status: "completed",
          conclusion: "cancelled",
          runner_name: name,
          started_at: iso(updatedAt - 60_000),
          completed_at: iso(updatedAt),
        });
        await s.github.putRun({ repo: REPO, id: runId, status: "completed", conclusion: "cancelled", updated_at: iso(updatedAt) });
        break;
      }
      case "unknown-running": {
        add({ name, kind, object: busy(name) }, [{ jobId, runId }]);
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(startedAt) });
        break;
      }
      case "rerun": {
        // Attempt 1 failed on runner A; the re-run's job runs on runner B of the same run.
        const a = `${name}-a`;
        const b = `${name}-b`;
        const failedAt = startedAt + 60_000;
        const rerunAt = failedAt + 120_000;
        add({ name: a, kind, deletableFrom: failedAt + grace, object: busy(a) }, [{ jobId, runId }]);
        add({ name: b, kind, object: busy(b, 2) }, [{ jobId: jobId + 1, runId }]);
        const jobA = { runner: a, runId, attempt: 1, jobId, startedAt, completedAt: failedAt, conclusion: "failure" };
        events.push(jobEvent("in_progress", jobA), jobEvent("completed", jobA), runEvent(runId, 1, failedAt + 1000, "failure"));
        events.push(jobEvent("in_progress", { runner: b, runId, attempt: 2, jobId: jobId + 1, startedAt: rerunAt }));
        await s.github.putJob({
          repo: REPO,
          id: jobId,
          run_id: runId,
          run_attempt: 1,
          status: "completed",
          conclusion: "failure",
          runner_name: a,
          started_at: iso(startedAt),
          completed_at: iso(failedAt),
        });
        await s.github.putJob({ repo: REPO, id: jobId + 1, run_id: runId, run_attempt: 2, status: "in_progress", runner_name: b, started_at: iso(rerunAt) });
        break;
      }
      case "lost": {
        // Its in_progress webhook came; its completed one was lost beyond the look-back (never listed, never redelivered).
        const completedAt = S + Math.floor((random() - 0.7) * 1800_000);
        const job = { runner: name, runId, attempt: 1, jobId, startedAt: Math.min(startedAt, completedAt - 1000), completedAt, conclusion: "cancelled" };
        add({ name, kind, deletableFrom: completedAt + grace, object: busy(name, 1, job.startedAt - 5000) }, [{ jobId, runId }]);
        events.push(jobEvent("in_progress", job));
        await s.github.putJob({
          repo: REPO,
          id: jobId,
          run_id: runId,
          run_attempt: 1,
          status: "completed",
          conclusion: "cancelled",
          runner_name: name,
          started_at: iso(job.startedAt),
          completed_at: iso(completedAt),
        });
        break;
      }
      case "reuse-idle":
      case "reuse-same-run":
      case "reuse-other-run":
        await nameComesBack(kind, name, runId, jobId);
        break;
      case "twin": {
        // The job's runner is busy in the second namespace; an idle object of its name sits in the first.
        const completedAt = S + Math.floor((random() - 0.7) * 1800_000);
        const job = { runner: name, runId, attempt: 1, jobId, startedAt: Math.min(startedAt, completedAt - 1000), completedAt, conclusion: "cancelled" };
        add(
          {
            name,
            kind,
            deletableFrom: completedAt + grace,
            object: makeEphemeralRunner({
              namespace: OTHER_NS,
              scaleSet: "arc-runners",
              name,
              workflowRunId: runId,
              jobRepositoryName: REPO,
              creationTimestamp: iso(job.startedAt - 5000),
            }),
          },
          [{ jobId, runId }],
        );
        add({ name, kind: "twin-idle", object: makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name }) });
        events.push(jobEvent("in_progress", job), jobEvent("completed", job));
        await s.github.putJob({
          repo: REPO,
          id: jobId,
          run_id: runId,
          run_attempt: 1,
          status: "completed",
          conclusion: "cancelled",
          runner_name: name,
          started_at: iso(job.startedAt),
          completed_at: iso(completedAt),
        });
        break;
      }
      case "failed":
      case "failed-busy": {
        // ARC could not make its pod: Failed, with a reason, a message and the failed pods' times (seconds).
        const failedAt = Math.floor((S - 30_000 - random() * 240_000) / 1000) * 1000;
        const status = {
          phase: "Failed",
          ready: false,
          reason: "PodCreateFailed",
          message: 'admission webhook "policy.example.com" denied the request',
          failures: { "pod-uid-1": iso(failedAt - 30_000).replace(/\.\d{3}Z$/, "Z"), "pod-uid-2": iso(failedAt).replace(/\.\d{3}Z$/, "Z") },
        };
        if (kind === "failed") {
          const object = makeEphemeralRunner({
            namespace: NS,
            scaleSet: "arc-runners",
            name,
            phase: "Failed",
            creationTimestamp: iso(failedAt - 60_000),
            status,
          });
          add({ name, kind, deletableFrom: failedAt + FAILED_SECONDS * 1000, object });
          break;
        }
        // Failed, yet busy on a run whose job GitHub says runs: never deleted.
        const object = busy(name);
        object.status = { ...object.status, ...status };
        add({ name, kind, object }, [{ jobId, runId }]);
        events.push(jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt }));
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(startedAt) });
        break;
      }
      case "held": {
        // Its completion was delivered, but GitHub's REST answer (what ARC's finalizer and the finish read) says
        // in_progress until a later sweep: ARC holds the deletion; the reaper may finish it only after that sweep.
        const completedAt = S - 60_000 - Math.floor(random() * 600_000);
        const job = { runner: name, runId, attempt: 1, jobId, startedAt: Math.min(startedAt, completedAt - 1000), completedAt, conclusion: "cancelled" };
        const completesAtSweep = 2 + Math.floor(random() * 8);
        add({ name, kind, deletableFrom: completedAt + grace, completesAtSweep, object: busy(name, 1, job.startedAt - 5000) }, [{ jobId, runId }]);
        flips.push({
          k: completesAtSweep,
          complete: () =>
            s.github.putJob({
              repo: REPO,
              id: jobId,
              run_id: runId,
              run_attempt: 1,
              status: "completed",
              conclusion: "cancelled",
              runner_name: name,
              started_at: iso(job.startedAt),
              completed_at: iso(completedAt),
            }),
        });
        events.push(jobEvent("in_progress", job), jobEvent("completed", job));
        await s.github.putJob({
          repo: REPO,
          id: jobId,
          run_id: runId,
          run_attempt: 1,
          status: "in_progress",
          runner_name: name,
          started_at: iso(job.startedAt),
        });
        break;
      }
      case "unseen-vanish": {
        // Busy, no webhook; it leaves the cluster before its wait for one is over.
        const r = add({ name, kind, object: busy(name) });
        vanishing.push({ k: calm + 1 + Math.floor(random() * 2), r });
        if (calm > 0) appearing.push(r);
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(startedAt) });
        break;
      }
      case "unseen-explained": {
        // Seen busy by the first sweep; its in_progress webhook comes a minute or two later: GitHub is never asked.
        const r = add({ name, kind, object: busy(name) }, [{ jobId, runId }]);
        explained.push({ r, runId });
        late.push({ k: calm + 1 + Math.floor(random() * 2), e: jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt }) });
        if (calm > 0) appearing.push(r);
        explainedRuns.add(runId);
        await s.github.putJob({ repo: REPO, id: jobId, run_id: runId, run_attempt: 1, status: "in_progress", runner_name: name, started_at: iso(startedAt) });
        break;
      }
    }
  }
  for (let i = 0; i < runners.length; i += 200) {
    const batch = runners.slice(i, i + 200).filter((r) => r.uid === undefined && !swaps.some((w) => w.fresh === r) && !appearing.includes(r));
    const stored = await s.kube.seedAll(batch.map((r) => r.object));
    batch.forEach((r, j) => (r.uid = stored[j]!.metadata.uid));
  }

  // Agent mode: the agent connects once the cluster is seeded, and lags before every alarm and sweep.
  const agent: FleetAgent | undefined = o.agent ? await fleetAgent(s.env, s.kube, [NS, OTHER_NS]) : undefined;
  const agentStep = async () => {
    if (!agent) return;
    const r = random();
    const mode: SyncMode = r < 0.7 ? "watch" : r < 0.85 ? "stalled" : r < 0.95 ? "relist" : "outage";
    await agent.sync(mode);
  };

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

  const deletedAt = new Map<string, number>(); // by uid
  const wrongful: string[] = [];
  const goneWrongly: string[] = [];
  let goneRightly = 0;
  let deletedTwice = 0;
  let faultsInjected = 0;
  let accessInjected = 0;
  let accessAnsweredDeletes = 0;
  let secondaryLimits = 0;
  let callsDuringBackOff = 0;
  let mostGithubCalls = 0;
  let githubCallsForExplained = 0;
  let mostAlarmRunsInAMinute = 0;
  let busyDeleted = 0;
  let failedDeletedEarly = 0;
  let failedDeletedTwice = 0;
  let finalizersRemovedWhileRunning = 0;
  let patches = 0;
  const finished = new Set<string>(); // uids whose held deletion the reaper finished
  const whileRunning: string[] = [];
  /** ARC's controller (finalize()) lets every deletion go but the held kinds'. */
  const holds = (r: Runner) => o.slots === true && (r.kind === "held" || (r.kind === "hung" && Number(r.name.split("-").pop()) % (o.heldHungEvery ?? 1) === 0));
  const releasable = [...new Set(runners.filter((r) => !holds(r)).map((r) => r.name))];
  let redelivered = 0;
  let sweeps = 0;
  let alarms = 0;
  let convergedAt = -1;
  const byUid = () => new Map(runners.filter((r) => r.uid).map((r) => [r.uid!, r]));
  const mustDelete = () => runners.filter((r) => r.deletableFrom !== undefined && !r.removed && r.uid !== undefined);
  // GitHub's back-off is kept on the ledger's clock (the real one); the fleet's time runs a minute a sweep.
  // Before each run the fleet moves the back-off by the simulated time that passed beyond the real time,
  // so a 403 asks for its minute of simulated time, and audits that no installation call comes within it.
  let blockedUntil = 0; // simulated
  let backOffSeen = false;
  let lastRun: { sim: number; real: number } | undefined;
  const passTime = async (at: number) => {
    const real = Date.now();
    if (lastRun && backOffSeen) {
      const shift = at - lastRun.sim - (real - lastRun.real);
      await runInDurableObject(ledgerOf(s.env), (_i, state) => {
        const rows = state.storage.sql.exec<{ key: string; value: string }>("SELECT key, value FROM memory WHERE key LIKE 'backoff/%'").toArray();
        for (const r of rows) state.storage.sql.exec("UPDATE memory SET value = ? WHERE key = ?", JSON.stringify(Number(JSON.parse(r.value)) - shift), r.key);
      });
    }
    lastRun = { sim: at, real };
  };

  for (let k = 0; k < o.maxSweeps; k++) {
    const now = S + k * 60_000;
    // This sweep's share of the deliveries, arriving before it.
    const share =
      k < o.deliverySweeps ? plan.slice(Math.floor((plan.length * k) / o.deliverySweeps), Math.floor((plan.length * (k + 1)) / o.deliverySweeps)) : [];
    for (const { e, drop } of share) {
      // GitHub attempts a delivery right after the event; here, within the minute before this sweep.
      await s.github.addDelivery({
        guid: e.guid,
        event: e.event,
        action: String(e.payload.action),
        statusCode: drop ? 502 : 202,
        deliveredAt: iso(now - Math.floor(random() * 60_000)),
      });
      if (!drop) await deliver(e);
    }
    if (k === calm && appearing.length > 0) {
      const stored = await s.kube.seedAll(appearing.map((r) => r.object));
      appearing.forEach((r, j) => (r.uid = stored[j]!.metadata.uid));
    }
    for (const l of late.filter((x) => x.k === k)) await deliver(l.e);
    for (const f of flips.filter((x) => x.k === k)) await f.complete();
    for (const v of vanishing.filter((x) => x.k === k)) {
      await s.kube.remove(v.r.object.metadata.namespace, v.r.name);
      v.r.removed = true;
    }
    // Names that come back: the old object vanishes unseen, a new one of its name appears.
    for (const w of swaps.filter((x) => x.k === k)) {
      await s.kube.remove(NS, w.old.name);
      w.old.removed = true;
      w.fresh.uid = (await s.kube.seed(w.fresh.object)).metadata.uid;
      await w.afterwards();
    }
    if (k < o.faultSweeps) {
      const faults = [
        () => s.kube.addFault({ match: { method: "GET" }, status: pick([500, 503, 429]), times: 1 }),
        // Not 409: on a DELETE with a uid precondition it means that uid is gone (sweep.test.ts), which a fault cannot fake.
        () => s.kube.addFault({ match: { method: "DELETE" }, status: pick([500, 503, 429]), times: 1 + Math.floor(random() * 3) }),
        () => s.kube.addFault({ match: { method: "DELETE" }, delayMs: 50, times: 2 }),
        () => s.github.addFault({ match: { pathIncludes: "/actions/" }, status: pick([500, 502, 503]), times: 1 + Math.floor(random() * 3) }),
        () => s.github.addFault({ match: { pathIncludes: "/actions/" }, status: 429, retryAfterSeconds: 1, times: 1 }),
        () => s.github.addFault({ match: { pathIncludes: "/app/hook/deliveries" }, status: 500, times: 1 }),
        () => s.github.addFault({ match: { pathIncludes: "access_tokens" }, status: 500, times: 1 }),
      ];
      const n = 1 + Math.floor(random() * 3);
      for (let i = 0; i < n; i++) await pick(faults)();
      faultsInjected += n;
      // Cloudflare Access in front of the API server (an expired service token): on list, read and delete,
      // every kind of answer on every verb over the fault sweeps (direct mode: the agent talks to the API server itself).
      for (const [v, verb] of (o.agent ? [] : ["list", "get", "delete"]).entries()) {
        await access.add({ answer: ACCESS_ANSWERS[(k + v) % ACCESS_ANSWERS.length]!, match: { verb }, times: 1 + Math.floor(random() * 3) });
        accessInjected++;
      }
      // A secondary rate limit: 403, no Retry-After (every other fault sweep).
      if (k % 2 === 0) {
        await s.github.addFault({ match: { pathIncludes: "/actions/" }, status: 403, message: SECONDARY_LIMIT, times: 1 });
        faultsInjected++;
      }
    } else if (k === o.faultSweeps) {
      await s.kube.clearFaults();
      await s.github.clearFaults();
      await access.clear();
    }

    const audit = async (at: number, what: string) => {
      const githubCalls = await s.github.calls();
      mostGithubCalls = Math.max(mostGithubCalls, githubCalls.length);
      for (const c of githubCalls) {
        if ([...explainedRuns].some((run) => c.path.includes(`/runs/${run}`))) githubCallsForExplained++;
        if (c.status === 403 || c.status === 429) backOffSeen = true;
        if (c.auth !== "installation") continue;
        if (at < blockedUntil) callsDuringBackOff++;
        if (c.status === 403) {
          secondaryLimits++;
          blockedUntil = Math.max(blockedUntil, at + 60_000);
        }
      }
      const objects = byUid();
      for (const c of await s.kube.calls()) {
        if (c.method !== "DELETE" || c.status !== 200) continue;
        const name = c.path.split("/").pop()!;
        const namespace = /\/namespaces\/([^/]+)\//.exec(c.path)?.[1] ?? NS;
        const uid = (c.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
        // While Access faults may answer (up to the sweep that clears them), check that the API server deleted it.
        const now = k <= o.faultSweeps ? await s.kube.get(namespace, name) : undefined;
        if (now && now.metadata.uid === uid && !now.metadata.deletionTimestamp) {
          accessAnsweredDeletes++; // a 200 from Access, not the API server: nothing was deleted
          continue;
        }
        const r = uid ? objects.get(uid) : undefined;
        if (uid && deletedAt.has(uid)) {
          deletedTwice++;
          if (r?.kind === "failed") failedDeletedTwice++;
        }
        if (uid) deletedAt.set(uid, at);
        if (r && r.deletableFrom === undefined && r.object.status?.workflowRunId !== undefined) busyDeleted++;
        if (r?.kind === "failed" && at < r.deletableFrom!) failedDeletedEarly++;
        if (!r || r.deletableFrom === undefined || at < r.deletableFrom) wrongful.push(`${name} (${r?.kind ?? "unknown"}, uid ${uid}) at ${what} ${k}`);
      }
      // Every finalizer patch, against what GitHub's REST answer said of the job at that moment.
      for (const c of await s.kube.calls()) {
        if (c.method !== "PATCH" || c.path.endsWith("/status")) continue;
        patches++;
        if (c.status !== 200) continue;
        const name = c.path.split("/").pop()!;
        const r = runners.find((x) => x.name === name && holds(x));
        const jobRuns = !r || r.kind === "hung" || k < r.completesAtSweep!;
        if (jobRuns) {
          finalizersRemovedWhileRunning++;
          whileRunning.push(`${name} (${r?.kind ?? "unknown"}) at ${what} ${k}`);
        } else finished.add(r.uid!);
      }
      // Every runner closed as gone now: was the object that took its job still in the cluster?
      const gone = await runInDurableObject(ledgerOf(s.env), (_i, state) =>
        state.storage.sql
          .exec<{ runner: string; job_id: number; run_id: number; uid: string | null; reason: string }>(
            "SELECT runner, job_id, run_id, uid, reason FROM runners WHERE state = 'gone' AND decided_at = ?",
            at,
          )
          .toArray(),
      );
      for (const g of gone) {
        const owner = g.uid ?? (g.job_id === 0 ? owners.get(`${g.runner}#run${g.run_id}`) : owners.get(`${g.runner}#${g.job_id}`))?.uid;
        const inCluster = [await s.kube.get(NS, g.runner), await s.kube.get(OTHER_NS, g.runner)];
        if (owner !== undefined && inCluster.some((o) => o?.metadata.uid === owner))
          goneWrongly.push(`${g.runner} job ${g.job_id} at ${what} ${k}: ${g.reason}`);
        else goneRightly++;
      }
      const unseenNow = await runInDurableObject(ledgerOf(s.env), (_i, state) => state.storage.sql.exec<{ uid: string }>("SELECT uid FROM unseen").toArray());
      for (const u of unseenNow) heldUnseen.add(u.uid);
      await s.github.clearCalls();
      await s.kube.clearCalls();
    };
    await s.github.clearCalls();
    await s.kube.clearCalls();
    // Each alarm and each sweep meets a fresh ledger instance, as a new isolate would.
    let alarmRuns = 0;
    for (const at of [now - 40_000, now - 20_000]) {
      await passTime(at);
      // An alarm runs again at once while something is still due at its time: count every run.
      await agentStep();
      for (let run = 0; run < 50; run++) {
        await evictLedger(s.env);
        await ledgerOf(s.env).alarmAt(at);
        alarms++;
        alarmRuns++;
        const next = await runInDurableObject(ledgerOf(s.env), (_i, state) => state.storage.getAlarm());
        if (next === null || next > at) break;
      }
      await audit(at, "alarm");
    }
    mostAlarmRunsInAMinute = Math.max(mostAlarmRunsInAMinute, alarmRuns);
    await passTime(now);
    await agentStep();
    await evictLedger(s.env);
    await s.sweep(now);
    sweeps++;
    await audit(now, "sweep");
    // ARC: deregister, then the object goes (with `slots`, not the held kinds': their finalizer waits for GitHub).
    await s.kube.finalize(o.slots ? { names: releasable } : {});
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
    if (
      // ...and the unseen teeth played out: vanished, or their late webhook delivered and a sweep after it.
      k >= Math.max(o.faultSweeps, o.deliverySweeps, ...swaps.map((w) => w.k), ...vanishing.map((v) => v.k + 1), ...late.map((l) => l.k + 1)) &&
      redelivered >= drops &&
      mustDelete().every((r) => deletedAt.has(r.uid!)) &&
      runners.every((r) => r.kind !== "held" || finished.has(r.uid!))
    ) {
      convergedAt = k;
      break;
    }
  }
  const finalNow = S + (sweeps - 1) * 60_000;
  const asks = new Map<string, number>();
  for (const r of await s.github.redeliveries()) asks.set(r.guid, (asks.get(r.guid) ?? 0) + 1);
  const askedTwice = [...asks].filter(([, n]) => n > 1).map(([guid]) => guid);
  if (askedTwice.length > 0) await report(`redelivery asked more than once for: ${askedTwice.slice(0, 5).join(", ")}`);
  // What happened to the unseen runners, from the ledger's own tables at the end.
  const { unseenLeft, tracked } = await runInDurableObject(ledgerOf(s.env), (_i, state) => ({
    unseenLeft: new Set(
      state.storage.sql
        .exec<{ uid: string }>("SELECT uid FROM unseen")
        .toArray()
        .map((u) => u.uid),
    ),
    tracked: new Set(
      state.storage.sql
        .exec<{ runner: string; run_id: number }>("SELECT runner, run_id FROM runners")
        .toArray()
        .map((t) => `${t.runner}#${t.run_id}`),
    ),
  }));
  const endedUnseen = (r: Runner): boolean => r.uid !== undefined && heldUnseen.has(r.uid) && !unseenLeft.has(r.uid);
  const heldThenVanished = vanishing.filter(({ r }) => r.uid !== undefined && heldUnseen.has(r.uid) && r.removed === true && !deletedAt.has(r.uid));
  const unseenVanished = heldThenVanished.length;
  // The simulated clock runs a day ahead of the real one that stamps a view's as-of, so no view is ever newer than
  // first_seen: the row stays ("not newer than its last fact") instead of ending gone. Counted, not asserted.
  const unseenVanishedEnded = heldThenVanished.filter(({ r }) => endedUnseen(r)).length;
  const unseenExplained = explained.filter(({ r, runId }) => endedUnseen(r) && tracked.has(`${r.name}#${runId}`)).length;
  const leftBehind = mustDelete().filter((r) => !deletedAt.has(r.uid!) && r.deletableFrom! <= finalNow - 60_000);
  const sink = await access.sink();
  const credentialsToOtherHosts = sink.calls.filter((c) => c.credentials).length;
  if (wrongful.length > 0) console.error("wrongful deletions:", wrongful.slice(0, 10));
  if (whileRunning.length > 0) console.error("finalizers removed while GitHub said the job runs:", whileRunning.slice(0, 10));
  if (goneWrongly.length > 0) await report(`closed as gone while in the cluster: ${goneWrongly.slice(0, 10).join("; ")}`);
  if (leftBehind.length > 0)
    console.error(
      "left behind:",
      leftBehind.slice(0, 10).map((r) => `${r.name} (${r.kind}) due ${iso(r.deletableFrom!)}`),
    );

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
    nameReuses: swaps.length,
    lostCompletions: runners.filter((r) => r.kind === "lost").length,
    accessFaults: accessInjected,
    accessAnsweredDeletes,
    secondaryLimits,
    deletions: deletedAt.size,
    wrongfulDeletions: wrongful.length,
    deletedTwice,
    goneWhileInCluster: goneWrongly.length,
    goneRightly,
    githubCallsDuringBackOff: callsDuringBackOff,
    credentialsToOtherHosts,
    leftBehind: leftBehind.length,
    mostGithubCallsInOneSweep: mostGithubCalls,
    githubBudget: o.githubBudget,
    sweepsToConverge: convergedAt + 1,
    twins: runners.filter((r) => r.kind === "twin").length,
    twinsReaped: runners.filter((r) => r.kind === "twin" && r.uid !== undefined && deletedAt.has(r.uid)).length,
    idleTwinsKept: runners.filter((r) => r.kind === "twin-idle" && r.uid !== undefined && !deletedAt.has(r.uid)).length,
    unseenVanishPlanned: vanishing.length,
    unseenVanished,
    unseenVanishedEnded,
    unseenExplainedPlanned: explained.length,
    unseenExplained,
    githubCallsForExplained,
    mostAlarmRunsInAMinute,
    agentStalls: agent?.figures.stalls ?? 0,
    agentRelists: agent?.figures.relists ?? 0,
    agentOutages: agent?.figures.outages ?? 0,
    agentReads: agent?.figures.reads ?? 0,
    failedRunners: runners.filter((r) => r.kind === "failed").length,
    failedDeleted: runners.filter((r) => r.kind === "failed" && deletedAt.has(r.uid!)).length,
    failedDeletedEarly,
    failedDeletedTwice,
    busyDeleted,
    heldDeletions: runners.filter((r) => r.kind === "held").length,
    heldFinished: finished.size,
    heldWhileRunning: runners.filter((r) => r.kind === "hung" && holds(r) && deletedAt.has(r.uid!)).length,
    finalizersRemovedWhileRunning,
    patches,
  };
}
