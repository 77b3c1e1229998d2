// A name that comes back while its facts are open (issue 10's teeth), planned for the fleet (fleet-plan.ts).
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import type { FleetPlan } from "./fleet-plan.ts";
import { iso, type FleetContext, type ReuseKind, type Runner } from "./fleet-types.ts";
import { NS, REPO } from "./stack.ts";

/**
 * A name that comes back while its facts are open: the first runner of the name takes job J1 of run R1
 * (its in_progress webhook delivered as usual); between two sweeps (sweep k) it finishes J1, vanishes,
 * and ARC creates a new runner of the same name: idle, busy on another job of R1 (its webhook lost,
 * still running), or busy on a job of another run R2 that completes (its webhooks lost: only the
 * reconcile can find it). J1's completion is delivered at that moment, or lost.
 */
export async function nameComesBack(c: FleetContext, p: FleetPlan, kind: ReuseKind, name: string, runId: number, jobId: number): Promise<void> {
  const { s, random, S, grace } = c;
  const { add, jobEvent, events, swaps, putJob } = p;
  const k = 1 + Math.floor(random() * 6);
  const swapAt = S + k * 60_000 - 45_000; // before that sweep's first alarm
  const startedAt = S - 600_000 - Math.floor(random() * 3000_000); // well before the new object (beyond the skew)
  const completedAt = swapAt - 20_000;
  /** An object of the name busy on `run` (none: idle), created at `created`. */
  const object = (run: number | undefined, created: string) =>
    makeEphemeralRunner({
      namespace: NS,
      scaleSet: "arc-runners",
      name,
      ...(run === undefined ? {} : { workflowRunId: run, jobRepositoryName: REPO }),
      creationTimestamp: created,
    });
  const old = add({ name, kind, deletableFrom: completedAt + grace, object: object(runId, iso(startedAt - 5000)) }, [{ jobId, runId }]);
  const j1 = { runner: name, runId, attempt: 1, jobId, startedAt, completedAt, conclusion: "success" };
  events.push(jobEvent("in_progress", j1));
  await putJob({ id: jobId, runId, runner: name, startedAt });
  const created = iso(swapAt).replace(/\.\d{3}Z$/, "Z");
  let fresh: Runner;
  let later = async () => {};
  if (kind === "reuse-idle") {
    fresh = add({ name, kind, object: object(undefined, created) });
  } else if (kind === "reuse-same-run") {
    fresh = add({ name, kind, object: object(runId, created) }, [{ jobId: jobId + 1 }]);
    later = async () => {
      await putJob({ id: jobId + 1, runId, runner: name, startedAt: swapAt + 5000 });
    };
  } else {
    const r2 = runId + 500_000;
    fresh = add(
      {
        name,
        kind,
        deletableFrom: swapAt + 60_000 + grace,
        object: object(r2, created),
      },
      [{ jobId: jobId + 1, runId: r2 }],
    );
    later = async () => {
      await putJob({ id: jobId + 1, runId: r2, runner: name, startedAt: swapAt + 5000, completedAt: swapAt + 60_000, conclusion: "success" });
      await s.github.putRun({ repo: REPO, id: r2, status: "completed", conclusion: "success", updated_at: iso(swapAt + 70_000) });
    };
  }
  const deliverCompletion = random() < 0.5;
  swaps.push({
    k,
    old,
    fresh,
    afterwards: async (deliver) => {
      await putJob({ id: jobId, runId, runner: name, startedAt, completedAt, conclusion: "success" });
      await later();
      if (deliverCompletion) await deliver(jobEvent("completed", j1));
    },
  });
}
