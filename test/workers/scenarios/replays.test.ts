// Replays: the ledger remembers delivery GUIDs for REAPER_HISTORY_DAYS. A GUID
// received before is a duplicate (202, counted, nothing written), so a signed
// delivery replayed after its runner was pruned cannot bring the runner back;
// facts about a job that started before the history are ignored and counted.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { configureLedger, deliver, ledgerOf, ledgerRows, testEnv } from "../support/worker.ts";

const REPO = "octo-org/example-workflow";
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
const completed = (startedSecondsAgo: number) =>
  workflowJobPayload("completed", {
    runner: "arc-runners-abcde-replay-1",
    jobId: 4401,
    runId: 440,
    runAttempt: 1,
    repo: REPO,
    startedAt: ago(startedSecondsAgo),
    completedAt: ago(startedSecondsAgo - 60),
    conclusion: "success",
    installationId: 42,
  });

const counter = (env: WorkerEnv, outcome: string) =>
  runInDurableObject(
    ledgerOf(env),
    (_i, state) =>
      state.storage.sql
        .exec<{ n: number }>(
          "SELECT COALESCE(SUM(value), 0) AS n FROM counters WHERE name = 'arc_reaper_webhook_deliveries_total' AND labels LIKE ?",
          `%"outcome":"${outcome}"%`,
        )
        .one().n,
  );
const rowsWritten = (env: WorkerEnv) =>
  runInDurableObject(ledgerOf(env), (instance) => (instance as unknown as { sql: { cost: { rowsWritten: number } } }).sql.cost.rowsWritten);

describe("replays", () => {
  it("a GUID received before is a duplicate: 202, counted, nothing else written; a replay after the prune brings nothing back", async () => {
    const env = testEnv();
    await configureLedger(env);
    const guid = "a1b2c3d4-0000-11e3-81ab-000000000001";
    expect((await deliver(env, "workflow_job", completed(600), { delivery: guid })).status).toBe(202);
    expect(await ledgerRows(env)).toBe(1);
    // The runner's row is pruned (its history ended); the same signed delivery comes again.
    await runInDurableObject(ledgerOf(env), (_i, state) => void state.storage.sql.exec("DELETE FROM runners"));
    const before = await rowsWritten(env);
    const replay = await deliver(env, "workflow_job", completed(600), { delivery: guid });
    expect(replay.status).toBe(202);
    expect(await replay.json()).toMatchObject({ outcome: "duplicate" });
    expect(await ledgerRows(env)).toBe(0);
    expect((await rowsWritten(env)) - before).toBe(1); // the duplicate counter alone
    expect(await counter(env, "duplicate")).toBe(1);
  });

  it("facts about a job that started before REAPER_HISTORY_DAYS are ignored and counted", async () => {
    const env = testEnv({ REAPER_HISTORY_DAYS: "7" });
    const res = await deliver(env, "workflow_job", completed(8 * 86_400));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ outcome: "stale" });
    expect(await ledgerRows(env)).toBe(0);
    expect(await counter(env, "stale")).toBe(1);
    // Within the history: recorded.
    expect((await deliver(env, "workflow_job", completed(6 * 86_400))).status).toBe(202);
    expect(await ledgerRows(env)).toBe(1);
  });
});
