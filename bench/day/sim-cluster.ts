// The cluster as both reaper models see it: a runner is busy (its
// status.workflowRunId set by ARC's listener) from its job's start until ARC
// removes it (a runner that exited normally) or a reaper deletes it (a stuck one).
import type { ClusterRunner } from "../../src/model/runner.ts";
import type { Trace, TraceJob } from "./trace.ts";

export class SimCluster {
  private readonly byStart: TraceJob[];
  private next = 0;
  private readonly busy = new Set<TraceJob>();
  /** Job index → when a reaper deleted its runner (ms since the day's start). */
  readonly deletedAt = new Map<number, number>();
  private readonly trace: Trace;

  constructor(trace: Trace) {
    this.trace = trace;
    this.byStart = [...trace.jobs].sort((a, b) => a.startedAt - b.startedAt);
  }

  /** Busy runners at t, in name order as a list returns them. Call with t never decreasing. */
  busyAt(t: number): TraceJob[] {
    while (this.next < this.byStart.length && this.byStart[this.next]!.startedAt <= t) this.busy.add(this.byStart[this.next++]!);
    for (const job of this.busy) if (!this.exists(job, t)) this.busy.delete(job);
    return [...this.busy].sort((a, b) => (a.runner < b.runner ? -1 : 1));
  }

  exists(job: TraceJob, t: number): boolean {
    if (job.startedAt > t) return false;
    if (job.arcRemovesAt !== null && job.arcRemovesAt <= t) return false;
    const deleted = this.deletedAt.get(job.index);
    return deleted === undefined || deleted > t;
  }

  delete(job: TraceJob, t: number): void {
    if (!this.deletedAt.has(job.index)) this.deletedAt.set(job.index, t);
  }

  /** The EphemeralRunner as the judge sees it (ClusterRunner of src/reaper/judge.ts). */
  runner(job: TraceJob): ClusterRunner {
    const run = this.trace.runs[job.run]!;
    return {
      namespace: "arc-runners",
      name: job.runner,
      uid: `uid-${job.index}`,
      workflowRunId: run.id,
      jobRepositoryName: run.repo,
      createdAt: new Date(this.trace.epoch + job.startedAt - 5_000).toISOString(),
    };
  }
}
