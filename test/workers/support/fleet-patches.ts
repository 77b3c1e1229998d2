// Job fields the listener lost or wrote late, planned for the fleet (fleet-plan.ts). ARC's controller writes
// status.runnerId before any job; its listener writes the job's run when JobStarted arrives, possibly after the
// in_progress webhook, and a patch can be lost (a background pool in newer ARC). Then only the runner id that
// GitHub's workflow_job.runner_id names ties the job to its object.
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import type { FleetPlan } from "./fleet-plan.ts";
import { OTHER_NS, type FleetContext, type PatchKind, iso } from "./fleet-types.ts";
import { NS } from "./stack.ts";

/**
 * patch-lost: a job that completes, its object never carries its run: reaped by id after the grace.
 * patch-lost-running: the same, its job still running: never deleted.
 * patch-late: a job that completes, its object gets the run at a later sweep.
 * twin-lost: patch-lost in the second namespace, with an idle object of its name (another id) in the first.
 */
export async function patchLostOrLate(
  c: FleetContext,
  p: FleetPlan,
  kind: PatchKind,
  j: { name: string; runId: number; jobId: number; startedAt: number },
): Promise<void> {
  const { random, S, grace } = c;
  const { name, runId, jobId, startedAt } = j;
  const running = kind === "patch-lost-running";
  const completedAt = S + Math.floor((random() - 0.7) * 1800_000);
  const job = { runner: name, runId, attempt: 1, jobId, startedAt: Math.min(startedAt, completedAt - 1000), completedAt, conclusion: "cancelled" };
  const namespace = kind === "twin-lost" ? OTHER_NS : NS;
  // No job fields: what the object shows while the listener's patch is late or lost.
  const object = makeEphemeralRunner({ namespace, scaleSet: "arc-runners", name, creationTimestamp: iso(job.startedAt - 5000) });
  const r = p.add({ name, kind, ...(running ? {} : { deletableFrom: completedAt + grace }), object }, [{ jobId, runId }]);
  if (kind === "twin-lost") p.add({ name, kind: "twin-idle", object: makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name }) });
  if (kind === "patch-late") p.latePatches.push({ k: 1 + Math.floor(random() * 4), r, runId });
  if (running) {
    p.events.push(p.jobEvent("in_progress", job));
    await p.putJob({ id: jobId, runId, runner: name, startedAt: job.startedAt });
    return;
  }
  p.events.push(p.jobEvent("in_progress", job), p.jobEvent("completed", job));
  await p.putJob({ id: jobId, runId, runner: name, startedAt: job.startedAt, completedAt, conclusion: "cancelled" });
}
