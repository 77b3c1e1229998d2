// Seeding a ledger for the admin and metrics tests the way production fills it:
// open runners by deliveries, reaped and gone runners by a real sweep against
// the stand-ins, and only the last sweep's figures written straight into the
// ledger's memory (where the sweep itself keeps them).
import { runInDurableObject } from "cloudflare:test";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { MemoryTable } from "../../../src/ledger/memory-table.ts";
import type { LastSweep } from "../../../src/ledger/memory-table.ts";
import { Sql } from "../../../src/ledger/sql.ts";
import type { Fact, JobStarted } from "../../../src/model/facts.ts";
import { before, type Stack } from "./stack.ts";
import { configureLedger, ledgerOf } from "./worker.ts";

/**
 * Facts into the env's ledger as one recorded delivery brings them, past the
 * webhook's shape checks: a hostile value reaches the store as it is.
 */
export async function recordFacts(env: WorkerEnv, facts: Fact[], event = "workflow_job"): Promise<void> {
  await configureLedger(env);
  await ledgerOf(env).receive({ event, guid: crypto.randomUUID(), facts });
}

export function jobStartedFact(o: { runner: string; repo: string; runId: number; jobId: number; startedAt: string; source?: string }): JobStarted {
  return { type: "job-started", runAttempt: 1, source: "test", ...o };
}

/** How a runner is to be closed by the sweep: reaped on its job's or its run's completion, or gone from the cluster. */
export interface ToClose {
  name: string;
  runId: number;
  jobId: number;
  by: "job-completed" | "run-completed" | "gone";
}

/**
 * Delivers the facts of each runner relative to `now` (past the grace for the
 * reaped ones), puts the runners to be reaped into the stand-in cluster busy on
 * their run, and runs one sweep at `now`. Reasons then read, at `now`:
 * job-completed "job J in R is cancelled, completed 600s ago",
 * run-completed "run X in R is cancelled, completed 400s ago",
 * gone "runner N is no longer in the cluster".
 */
export async function closeBySweep(s: Stack, now: number, runners: ToClose[]): Promise<void> {
  for (const r of runners) {
    const startedAt = before(now, 1200);
    if (r.by !== "gone") await s.runner({ name: r.name, workflowRunId: r.runId });
    const answers =
      r.by === "job-completed"
        ? [await s.jobCompleted({ runner: r.name, runId: r.runId, jobId: r.jobId, startedAt, completedAt: before(now, 600), conclusion: "cancelled" })]
        : [await s.jobStarted({ runner: r.name, runId: r.runId, jobId: r.jobId, startedAt })];
    if (r.by === "run-completed") answers.push(await s.runCompleted({ runId: r.runId, updatedAt: before(now, 400), conclusion: "cancelled" }));
    for (const a of answers) if (a.status !== 202) throw new Error(`seeding ${r.name}: the webhook answered ${a.status}: ${await a.text()}`);
  }
  await s.sweep(now);
}

/** The last sweep's figures, written where the ledger's sweep keeps them (its memory, key "last-sweep"). */
export async function writeLastSweep(env: WorkerEnv, sweep: LastSweep): Promise<void> {
  await configureLedger(env);
  await runInDurableObject(ledgerOf(env), (_instance, state) => new MemoryTable(new Sql(state.storage.sql)).set("last-sweep", sweep));
}

/** A last sweep's figures with every field set; override what a test looks at. */
export function lastSweep(o: Partial<LastSweep> = {}): LastSweep {
  return {
    at: new Date().toISOString(),
    durationMs: 5,
    checked: 0,
    deleted: 0,
    kept: 0,
    waiting: 0,
    gone: 0,
    heldBack: 0,
    errors: { cluster: 0, github: 0, redelivery: 0 },
    githubCalls: 0,
    rateLimitRemaining: null,
    rateLimitLimit: null,
    dryRun: false,
    paused: false,
    ...o,
  };
}
