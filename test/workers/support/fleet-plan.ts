// The fleet's plan (fleet.ts): every runner lifecycle drawn from the seed, the events GitHub would
// deliver, the GitHub stand-in's answers, and what happens at which sweep (swaps, vanishing
// runners, late webhooks, held jobs that complete). The draws keep their order: same seed, same run.
import type { Conclusion } from "../../standins/github/types.ts";
import { makeEphemeralRunner, type EphemeralRunner } from "../../standins/kube/control.ts";
import { nameComesBack } from "./fleet-reuse.ts";
import { failedRunner, heldDeletion } from "./fleet-slots.ts";
import { patchLostOrLate } from "./fleet-patches.ts";
import { iso, OTHER_NS, type Event, type FleetContext, type Kind, type Runner, type Swap } from "./fleet-types.ts";
import { workflowJobPayload, workflowRunPayload } from "./payloads.ts";
import { INSTALLATION, NS, REPO } from "./stack.ts";

type JobOf = { runner: string; runId: number; attempt: number; jobId: number; startedAt: number; completedAt?: number; conclusion?: string };

export interface FleetPlan {
  runners: Runner[];
  swaps: Swap[];
  /** Which object took a job: `${name}#${jobId}`, and `${name}#run${runId}` for facts learned from a completed run (job 0). */
  owners: Map<string, Runner>;
  events: Event[];
  /** Objects removed at sweep k (they vanish unseen), and webhooks held back until sweep k. */
  vanishing: { k: number; r: Runner }[];
  late: { k: number; e: Event }[];
  /** Unseen teeth seeded at the first sweep without faults (none without faults: seeded with the rest). */
  appearing: Runner[];
  /** Held kind: at sweep k, GitHub's REST answer turns completed. */
  flips: { k: number; complete: () => Promise<unknown> }[];
  /** The listener's job fields written late: at sweep k, before its alarms. */
  latePatches: { k: number; r: Runner; runId: number }[];
  explainedRuns: Set<number>;
  explained: { r: Runner; runId: number }[];
  add: (r: Omit<Runner, "object"> & { object: EphemeralRunner }, jobs?: { jobId?: number; runId?: number }[]) => Runner;
  jobEvent: (action: "in_progress" | "completed", j: JobOf) => Event;
  runEvent: (runId: number, attempt: number, updatedAt: number, conclusion: string) => Event;
  /** GitHub's REST answer for a job of REPO (attempt 1 unless said): in progress, or completed when `completedAt` is given. */
  putJob: (j: {
    id: number;
    runId: number;
    runner: string;
    startedAt: number;
    completedAt?: number;
    conclusion?: Conclusion;
    attempt?: number;
  }) => Promise<unknown>;
}

export async function planFleet(c: FleetContext): Promise<FleetPlan> {
  const { o, s, random, pick, S, grace, bound, calm } = c;
  const runners: Runner[] = [];
  const swaps: Swap[] = [];
  /** Which object took a job: `${name}#${jobId}`, and `${name}#run${runId}` for facts learned from a completed run (job 0). */
  const owners = new Map<string, Runner>();
  const events: Event[] = [];
  let guidCounter = 0;
  const guid = () => `00000000-0000-4000-8000-${String(++guidCounter).padStart(12, "0")}`;

  /** The registration (status.runnerId) of the object that took a job, as GitHub's runner_id names it. */
  const runnerIdOf = (runner: string, jobId: number): number | null => owners.get(`${runner}#${jobId}`)?.object.status?.runnerId ?? null;
  const jobEvent = (action: "in_progress" | "completed", j: JobOf): Event => ({
    event: "workflow_job",
    guid: guid(),
    at: action === "completed" ? j.completedAt! : j.startedAt,
    payload: workflowJobPayload(action, {
      runner: j.runner,
      runnerId: runnerIdOf(j.runner, j.jobId),
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
    ["done", 0.24],
    ["patch-lost", 0.03],
    ["patch-lost-running", 0.02],
    ["patch-late", 0.03],
    ["twin-lost", 0.02],
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
    kinds[0] = ["done", 0.12];
    kinds.push(["failed", 0.05], ["failed-busy", 0.02], ["held", 0.05]);
  }
  /** Objects removed at sweep k (they vanish unseen), and webhooks held back until sweep k. */
  const vanishing: { k: number; r: Runner }[] = [];
  // The unseen teeth live after the fault sweeps: a sweep whose lists fail cannot see a runner, so one that came and
  // went within them would be planned, never observed. With faults they appear at the first sweep without (`calm`).
  const appearing: Runner[] = [];
  const late: { k: number; e: Event }[] = [];
  /** Held kind: at sweep k, GitHub's REST answer turns completed. */
  const flips: { k: number; complete: () => Promise<unknown> }[] = [];
  const latePatches: { k: number; r: Runner; runId: number }[] = [];
  const explainedRuns = new Set<number>();
  const explained: { r: Runner; runId: number }[] = [];
  // Every object ARC makes gets its registration before any job (status.runnerId), one id per object:
  // a name that comes back, and a twin, carry ids of their own.
  let lastRunnerId = 900_000;
  const add = (r: Omit<Runner, "object"> & { object: EphemeralRunner }, jobs: { jobId?: number; runId?: number }[] = []): Runner => {
    r.object.status = { ...r.object.status, runnerId: ++lastRunnerId };
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
  const putJob: FleetPlan["putJob"] = (j) =>
    s.github.putJob({
      repo: REPO,
      id: j.id,
      run_id: j.runId,
      run_attempt: j.attempt ?? 1,
      status: j.completedAt === undefined ? "in_progress" : "completed",
      ...(j.completedAt === undefined ? {} : { conclusion: j.conclusion, completed_at: iso(j.completedAt) }),
      runner_name: j.runner,
      runner_id: runnerIdOf(j.runner, j.id),
      started_at: iso(j.startedAt),
    });
  const p: FleetPlan = {
    runners,
    swaps,
    owners,
    events,
    vanishing,
    late,
    appearing,
    flips,
    latePatches,
    explainedRuns,
    explained,
    add,
    jobEvent,
    runEvent,
    putJob,
  };

  // The first three are always the one-reconcile teeth; the rest are drawn.
  const teeth: Kind[] = [
    "twin",
    "unseen-vanish",
    "unseen-explained",
    "patch-lost",
    "patch-lost-running",
    "patch-late",
    "twin-lost",
    // A name that comes back with a new runner id (and the old facts closed as gone: the audit's positive side).
    "reuse-idle",
    ...(o.slots ? (["failed", "held", "failed-busy"] as const) : []),
  ];
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
        await putJob({ id: jobId, runId, runner: name, startedAt: job.startedAt, completedAt, conclusion });
        break;
      }
      case "running": {
        add({ name, kind, object: busy(name) }, [{ jobId, runId }]);
        events.push(jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt }));
        await putJob({ id: jobId, runId, runner: name, startedAt });
        break;
      }
      case "hung": {
        const hungSince = S - bound - Math.floor(random() * 3600_000) - 60_000;
        add({ name, kind, deletableFrom: hungSince + bound, object: busy(name, 1, hungSince - 5000) }, [{ jobId, runId }]);
        events.push(jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt: hungSince }));
        await putJob({ id: jobId, runId, runner: name, startedAt: hungSince });
        break;
      }
      case "idle":
        add({ name, kind, object: makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name }) });
        break;
      case "unknown-done": {
        const updatedAt = S - 600_000 - Math.floor(random() * 3600_000);
        add({ name, kind, deletableFrom: updatedAt + grace, object: busy(name) }, [{ jobId, runId }]);
        await putJob({ id: jobId, runId, runner: name, startedAt: updatedAt - 60_000, completedAt: updatedAt, conclusion: "cancelled" });
        await s.github.putRun({ repo: REPO, id: runId, status: "completed", conclusion: "cancelled", updated_at: iso(updatedAt) });
        break;
      }
      case "unknown-running": {
        add({ name, kind, object: busy(name) }, [{ jobId, runId }]);
        await putJob({ id: jobId, runId, runner: name, startedAt });
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
        await putJob({ id: jobId, runId, runner: a, startedAt, completedAt: failedAt, conclusion: "failure" });
        await putJob({ id: jobId + 1, runId, runner: b, startedAt: rerunAt, attempt: 2 });
        break;
      }
      case "lost": {
        // Its in_progress webhook came; its completed one was lost beyond the look-back (never listed, never redelivered).
        const completedAt = S + Math.floor((random() - 0.7) * 1800_000);
        const job = { runner: name, runId, attempt: 1, jobId, startedAt: Math.min(startedAt, completedAt - 1000), completedAt, conclusion: "cancelled" };
        add({ name, kind, deletableFrom: completedAt + grace, object: busy(name, 1, job.startedAt - 5000) }, [{ jobId, runId }]);
        events.push(jobEvent("in_progress", job));
        await putJob({ id: jobId, runId, runner: name, startedAt: job.startedAt, completedAt, conclusion: "cancelled" });
        break;
      }
      case "reuse-idle":
      case "reuse-same-run":
      case "reuse-other-run":
        await nameComesBack(c, p, kind, name, runId, jobId);
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
        await putJob({ id: jobId, runId, runner: name, startedAt: job.startedAt, completedAt, conclusion: "cancelled" });
        break;
      }
      case "failed":
      case "failed-busy":
        await failedRunner(c, p, kind, { name, runId, jobId, startedAt, busy });
        break;
      case "held":
        await heldDeletion(c, p, { name, runId, jobId, startedAt, busy });
        break;
      case "patch-lost":
      case "patch-lost-running":
      case "patch-late":
      case "twin-lost":
        await patchLostOrLate(c, p, kind, { name, runId, jobId, startedAt });
        break;
      case "unseen-vanish": {
        // Busy, no webhook; it leaves the cluster before its wait for one is over.
        const r = add({ name, kind, object: busy(name) });
        vanishing.push({ k: calm + 1 + Math.floor(random() * 2), r });
        if (calm > 0) appearing.push(r);
        await putJob({ id: jobId, runId, runner: name, startedAt });
        break;
      }
      case "unseen-explained": {
        // Seen busy by the first sweep; its in_progress webhook comes a minute or two later: GitHub is never asked.
        const r = add({ name, kind, object: busy(name) }, [{ jobId, runId }]);
        explained.push({ r, runId });
        late.push({ k: calm + 1 + Math.floor(random() * 2), e: jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt }) });
        if (calm > 0) appearing.push(r);
        explainedRuns.add(runId);
        await putJob({ id: jobId, runId, runner: name, startedAt });
        break;
      }
    }
  }
  return p;
}
