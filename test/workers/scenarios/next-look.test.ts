// One owner for the next look (issue 22): late sweeps share one cap in wall
// time and run once, a failed ask backs off per row, and a ledger written by
// the previous release (schema 8) is read and worked on after migration 9.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { before, NS, REPO, stack } from "../support/stack.ts";
import { adminRunners, configureLedger, evictLedger, ledgerOf, ran, runAlarm, settleAlarms, testEnv } from "../support/worker.ts";

type S = Awaited<ReturnType<typeof stack>>;
const deletes = async (s: S) => (await s.kube.calls()).filter((c) => c.method === "DELETE");

/** `n` runners whose jobs completed an hour ago, their facts written as a webhook would (no alarm set: only the sweep acts). */
async function completedAnHourAgo(s: S, n: number, first: number): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < n; i++) await s.runner({ name: `arc-runners-late${i}-runner-lt`, workflowRunId: first + i });
  await configureLedger(s.env);
  await runInDurableObject(ledgerOf(s.env), (_i, state) => {
    for (let i = 0; i < n; i++) {
      state.storage.sql.exec(
        `INSERT INTO runners (runner, job_id, repo, run_id, run_attempt, started_at, job_completed_at, job_conclusion, state, reason, due_at, story, fact_at)
         VALUES (?, ?, ?, ?, 1, ?, ?, 'success', 'finished', '', ?, '[]', ?)`,
        `arc-runners-late${i}-runner-lt`,
        first * 10 + i,
        REPO,
        first + i,
        before(now, 7200),
        before(now, 3600),
        now - 3300_000,
        now - 3600_000,
      );
    }
  });
}

describe("an upgrading user's cap under its old name", () => {
  it("REAPER_MAX_DELETIONS_PER_SWEEP=2 beside the new name at its old shipped default (50): a sweep deletes 2 of 5", async () => {
    const s = await stack({ REAPER_MAX_DELETIONS_PER_MINUTE: "50", REAPER_MAX_DELETIONS_PER_SWEEP: "2" });
    await completedAnHourAgo(s, 5, 1700);
    await ledgerOf(s.env).sweep(Date.now());
    await settleAlarms(s.env);
    expect(await deletes(s)).toHaveLength(2);
    const held = (await adminRunners(s.env, "?state=finished")).runners;
    expect(held).toHaveLength(3);
    for (const r of held) expect(r).toMatchObject({ code: "Cap" }); // the cap of 2: the 2 deletes above
  });
});

describe("one clock per pass, windows on the real clock", () => {
  it("three late sweeps (scheduled 180, 120 and 60 s ago) back to back delete at most the cap of 2; the queued ones run once", async () => {
    const s = await stack({ REAPER_MAX_DELETIONS_PER_MINUTE: "2" });
    const now = Date.now();
    for (let i = 0; i < 6; i++) await s.runner({ name: `arc-runners-late${i}-runner-lt`, workflowRunId: 1600 + i });
    // Completed an hour ago, their facts written as a webhook would (no alarm set: only the sweeps act).
    await configureLedger(s.env);
    await runInDurableObject(ledgerOf(s.env), (_i, state) => {
      for (let i = 0; i < 6; i++) {
        state.storage.sql.exec(
          `INSERT INTO runners (runner, job_id, repo, run_id, run_attempt, started_at, job_completed_at, job_conclusion, state, reason, due_at, story, fact_at)
           VALUES (?, ?, ?, ?, 1, ?, ?, 'success', 'finished', '', ?, '[]', ?)`,
          `arc-runners-late${i}-runner-lt`,
          16000 + i,
          REPO,
          1600 + i,
          before(now, 7200),
          before(now, 3600),
          now - 3300_000,
          now - 3600_000,
        );
      }
    });
    const started = Date.now();
    const outcomes = [];
    for (const ago of [180_000, 120_000, 60_000]) outcomes.push(await ledgerOf(s.env).sweep(started - ago));
    await settleAlarms(s.env);
    expect(await deletes(s)).toHaveLength(2);
    expect(ran(outcomes[0]!).deleted).toBeLessThanOrEqual(2);
    expect(outcomes.slice(1)).toEqual([
      { skipped: expect.stringContaining("a sweep already ran at") },
      { skipped: expect.stringContaining("a sweep already ran at") },
    ]);
    const held = (await adminRunners(s.env, "?state=finished")).runners;
    expect(held).toHaveLength(4);
    for (const r of held) expect(r).toMatchObject({ code: "Cap" }); // the cap of 2: the 2 deletes above
  });
});

describe("one pass", () => {
  it("a misconfiguration is handled the same way by the sweep and the alarm: logged and skipped, never thrown", async () => {
    const env = testEnv({ REAPER_MAX_DELETIONS_PER_MINUTE: "many" });
    await configureLedger(env);
    expect(await ledgerOf(env).sweep(Date.now())).toEqual({
      skipped: expect.stringMatching(/^arc-reaper is misconfigured: .*REAPER_MAX_DELETIONS_PER_MINUTE/),
    });
    await runInDurableObject(ledgerOf(env), (_i, state) => state.storage.setAlarm(Date.now()));
    expect(await runAlarm(env)).toBe(true); // ran, skipped, did not throw
  });
});

describe("a failed ask backs off per row", () => {
  it("a job past the bound that GitHub answers 404 is asked at most log2(T/60 s)+1 times in T, not at every sweep", async () => {
    const s = await stack({ REAPER_MAX_JOB_SECONDS: "3600" });
    const NOW = Date.now() + 86_400_000; // the sweeps run a day ahead: no alarm fires meanwhile
    const name = "arc-runners-abcde-runner-404";
    await s.runner({ name, workflowRunId: 1700 });
    // Its run was deleted: GitHub answers 404 for the job.
    await s.jobStarted({ runner: name, runId: 1700, jobId: 17000, startedAt: before(NOW, 7200) });
    const T = 30 * 60_000;
    for (let t = 0; t <= T; t += 60_000) await s.sweep(NOW + t);
    const asks = (await s.github.calls()).filter((c) => c.path === `/repos/${REPO}/actions/jobs/17000`);
    expect(asks.length).toBeGreaterThanOrEqual(2);
    expect(asks.length).toBeLessThanOrEqual(Math.floor(Math.log2(T / 60_000)) + 1);
    expect(await deletes(s)).toEqual([]);
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "running", code: "GithubError" });
  });
});

describe("migration 9", () => {
  it("a ledger written by the previous release (schema 8), rows open and closed, is read and worked on after it", async () => {
    const s = await stack({ REAPER_HISTORY_DAYS: "1" });
    const now = Date.now();
    const open = "arc-runners-abcde-runner-m8o";
    await s.runner({ name: open, workflowRunId: 1800 });
    await runInDurableObject(ledgerOf(s.env), (_i, state) => {
      const sql = state.storage.sql;
      // Back to schema 8: migrations 9 and 11's columns undone (10 and 11's tables are IF NOT EXISTS), rows as
      // release 8 wrote them (a closed row's due_at is its prune time).
      for (const statement of [
        "ALTER TABLE agent_view DROP COLUMN arc",
        "ALTER TABLE agent_snapshot DROP COLUMN arc",
        "DROP INDEX runners_by_prune",
        "ALTER TABLE runners DROP COLUMN prune_at",
        "ALTER TABLE runners DROP COLUMN failures",
        "ALTER TABLE unseen DROP COLUMN failures",
        // Migration 12 (runner ids).
        "ALTER TABLE runners DROP COLUMN runner_id",
        "ALTER TABLE agent_view DROP COLUMN runner_id",
        "ALTER TABLE agent_snapshot DROP COLUMN runner_id",
        // Migration 14 (unseen rows' verdict keys) and 15 (deletion checks' codes).
        "ALTER TABLE unseen DROP COLUMN verdict_key",
        "ALTER TABLE runners DROP COLUMN check_code",
      ])
        sql.exec(statement);
      const row = (runner: string, jobId: number, state: string, dueAt: number | null, completed: boolean) =>
        sql.exec(
          `INSERT INTO runners (runner, job_id, repo, run_id, run_attempt, started_at, job_completed_at, job_conclusion, state, reason, due_at, story, fact_at, decided_at)
           VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, 'release 8', ?, '[]', ?, ?)`,
          runner,
          jobId,
          REPO,
          jobId,
          new Date(now - 7200_000).toISOString(),
          completed ? new Date(now - 3600_000).toISOString() : null,
          completed ? "success" : null,
          state,
          dueAt,
          now - 3600_000,
          now - 3600_000,
        );
      row(open, 1800, "finished", now - 1000, true); // open: due, to be reaped
      row("arc-runners-abcde-runner-m8r", 1801, "reaped", now + 3_600_000, true); // closed: pruned an hour from now
      row("arc-runners-abcde-runner-m8g", 1802, "gone", now - 1000, true); // closed: past its prune time
      sql.exec("UPDATE schema_version SET version = 8");
    });
    await evictLedger(s.env);
    await s.sweep(Date.now());
    const after = await runInDurableObject(ledgerOf(s.env), (_i, state) => ({
      version: state.storage.sql.exec<{ version: number }>("SELECT version FROM schema_version").one().version,
      rows: state.storage.sql
        .exec<{ runner: string; state: string; due_at: number | null; prune_at: number | null; failures: number }>(
          "SELECT runner, state, due_at, prune_at, failures FROM runners ORDER BY job_id",
        )
        .toArray(),
    }));
    expect(after.version).toBe(SCHEMA_VERSION);
    // The open row was judged and reaped; the closed rows keep their prune time in prune_at, not due_at; the one past it is pruned.
    expect(after.rows).toEqual([
      { runner: open, state: "reaped", due_at: null, prune_at: expect.any(Number), failures: 0 },
      { runner: "arc-runners-abcde-runner-m8r", state: "reaped", due_at: null, prune_at: now + 3_600_000, failures: 0 },
    ]);
    expect((await s.kube.calls()).filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual([
      `/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/${open}`,
    ]);
  });
});
