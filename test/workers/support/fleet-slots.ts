// Slots that do nothing (issue 24), planned for the fleet (fleet-plan.ts): runners ARC marked
// Failed (one busy on a run that runs), and deletions ARC's finalizer holds while GitHub's REST
// answer says the job runs.
import { makeEphemeralRunner, type EphemeralRunner } from "../../standins/kube/control.ts";
import type { FleetPlan } from "./fleet-plan.ts";
import { FAILED_SECONDS, iso, type FleetContext } from "./fleet-types.ts";
import { NS } from "./stack.ts";

/** One lifecycle of the fleet: its runner's name, run, job, start, and its busy object (as ARC makes it). */
export interface Lifecycle {
  name: string;
  runId: number;
  jobId: number;
  startedAt: number;
  busy: (n: string, attempt?: number, createdAt?: number) => EphemeralRunner;
}

/** ARC could not make its pod: Failed; `failed-busy` is Failed yet busy on a run whose job GitHub says runs (never deleted). */
export async function failedRunner(c: FleetContext, p: FleetPlan, kind: "failed" | "failed-busy", l: Lifecycle): Promise<void> {
  const { random, S } = c;
  const { add, events, jobEvent, putJob } = p;
  const { name, runId, jobId, startedAt, busy } = l;
  // Failed, with a reason, a message and the failed pods' times (seconds).
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
    return;
  }
  // Failed, yet busy on a run whose job GitHub says runs: never deleted.
  const object = busy(name);
  object.status = { ...object.status, ...status };
  add({ name, kind, object }, [{ jobId, runId }]);
  events.push(jobEvent("in_progress", { runner: name, runId, attempt: 1, jobId, startedAt }));
  await putJob({ id: jobId, runId, runner: name, startedAt });
}

/**
 * Its completion was delivered, but GitHub's REST answer (what ARC's finalizer and the finish read) says
 * in_progress until a later sweep: ARC holds the deletion; the reaper may finish it only after that sweep.
 */
export async function heldDeletion(c: FleetContext, p: FleetPlan, l: Lifecycle): Promise<void> {
  const { random, S, grace } = c;
  const { add, events, jobEvent, flips, putJob } = p;
  const { name, runId, jobId, startedAt, busy } = l;
  const kind = "held";
  const completedAt = S - 60_000 - Math.floor(random() * 600_000);
  const job = { runner: name, runId, attempt: 1, jobId, startedAt: Math.min(startedAt, completedAt - 1000), completedAt, conclusion: "cancelled" };
  const completesAtSweep = 2 + Math.floor(random() * 8);
  add({ name, kind, deletableFrom: completedAt + grace, completesAtSweep, object: busy(name, 1, job.startedAt - 5000) }, [{ jobId, runId }]);
  flips.push({
    k: completesAtSweep,
    complete: () => putJob({ id: jobId, runId, runner: name, startedAt: job.startedAt, completedAt, conclusion: "cancelled" }),
  });
  events.push(jobEvent("in_progress", job), jobEvent("completed", job));
  await putJob({ id: jobId, runId, runner: name, startedAt: job.startedAt });
}
