// The ledger backed up while it runs and restored into a new one: GET /admin/backup taken while
// deliveries arrive is one state (each delivery wholly in it or not at all), and the ledger
// restored from it by POST /admin/restore reaps the same runners and shows the same history.
// Each refusal names what is wrong and writes nothing.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { readDay } from "../../../src/ledger/day-at-glance.ts";
import { SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { Sql } from "../../../src/ledger/sql.ts";
import { NOW, deletes } from "../support/kube-calls.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { before, INSTALLATION, REPO, stack, type Stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, alarmAt, call, deliver, ledgerOf, report } from "../support/worker.ts";

const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
let restoredCounter = 0;

const backup = (env: WorkerEnv, headers: Record<string, string> = bearer) => call(env, new Request("https://arc-reaper.test/admin/backup", { headers }));
const restore = (env: WorkerEnv, body: string, query = "") =>
  call(env, new Request(`https://arc-reaper.test/admin/restore${query}`, { method: "POST", headers: bearer, body }));
/** The same settings and stand-ins, a new LEDGER_NAME: a new, empty ledger. */
const newLedger = (env: WorkerEnv, name = `restored-${Date.now().toString(36)}-${++restoredCounter}`): WorkerEnv => ({ ...env, LEDGER_NAME: name });

/** A body read as UTF-8 text (workerd warns on .text() of a type it does not know as text). */
const textOf = async (res: Response): Promise<string> => new TextDecoder().decode(await res.arrayBuffer());
const rows = (env: WorkerEnv, query: string) => runInDurableObject(ledgerOf(env), (_i, state) => state.storage.sql.exec(query).toArray());

/** The rows of each table in a backup's text, by table. */
function tablesOf(text: string): Map<string, unknown[][]> {
  const [header, ...lines] = text.split("\n").filter((l) => l !== "");
  const tables = new Map<string, unknown[][]>(Object.keys(JSON.parse(header!).tables).map((t) => [t, []]));
  for (const line of lines) {
    const [table, values] = JSON.parse(line) as [string, unknown[]];
    tables.get(table)!.push(values);
  }
  return tables;
}

async function started(s: Stack, name: string, runId: number, jobId: number, guid: string): Promise<Response> {
  const payload = workflowJobPayload("in_progress", {
    runner: name,
    runId,
    jobId,
    runAttempt: 1,
    repo: REPO,
    installationId: INSTALLATION,
    startedAt: before(NOW, 900),
  });
  return deliver(s.env, "workflow_job", payload, { delivery: guid });
}

async function completed(env: WorkerEnv, name: string, runId: number, jobId: number): Promise<Response> {
  const payload = workflowJobPayload("completed", {
    runner: name,
    runId,
    jobId,
    runAttempt: 1,
    repo: REPO,
    installationId: INSTALLATION,
    startedAt: before(NOW, 900),
    completedAt: before(NOW, 300),
    conclusion: "cancelled",
  });
  return deliver(env, "workflow_job", payload);
}

describe("a ledger backed up while it runs", () => {
  it("is one state mid-traffic, and the ledger restored from it reaps the same runners and keeps the history", async () => {
    const s = await stack();
    // History: a runner reaped before the backup.
    const done = await s.runner({ name: "arc-runners-bk-done", workflowRunId: 7100 });
    await started(s, done.metadata.name, 7100, 71000, "bk-done");
    await completed(s.env, done.metadata.name, 7100, 71000);
    await ledgerOf(s.env).alarmAt(NOW);
    expect((await deletes(s, { accepted: true })).map((d) => d.path)).toEqual([expect.stringMatching(/\/arc-runners-bk-done$/)]);
    // A runner whose job still runs when the backup is taken.
    const busy = await s.runner({ name: "arc-runners-bk-busy", workflowRunId: 7200 });
    await started(s, busy.metadata.name, 7200, 72000, "bk-busy");
    // Forty deliveries, one after another; the backup is asked for after the tenth, while the rest arrive.
    const traffic = Array.from({ length: 40 }, (_, i) => ({ name: `arc-runners-bk-t${i}`, guid: `bk-traffic-${i}` }));
    let asked: Promise<Response> | undefined;
    for (const [i, t] of traffic.entries()) {
      if (i === 10) asked = backup(s.env);
      expect((await started(s, t.name, 7300 + i, 73000 + i, t.guid)).status).toBe(202);
    }
    const taken = await asked!;
    expect(taken.status).toBe(200);
    expect(taken.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const text = await textOf(taken);
    const tables = tablesOf(text);
    // One state: each delivery's GUID is in the backup exactly when its runner's row is.
    const guids = new Set(tables.get("deliveries_received")!.map((r) => r[0]));
    const runnerNames = new Set(tables.get("runners")!.map((r) => r[1]));
    const inBackup = traffic.filter((t) => guids.has(t.guid));
    for (const t of traffic) expect(runnerNames.has(t.name), t.name).toBe(guids.has(t.guid));
    expect(inBackup.length).toBeGreaterThanOrEqual(10);
    expect(inBackup.length, "the backup was taken before the last delivery arrived").toBeLessThan(traffic.length);
    expect(runnerNames).toContain(busy.metadata.name);
    await report(`ledger backup mid-traffic: ${inBackup.length} of ${traffic.length} concurrent deliveries in it, ${text.length} bytes`);

    // Restored into a new ledger: same rows, the same history on /admin, and it reaps the runner the backup saw busy.
    const env2 = newLedger(s.env);
    const restored = await restore(env2, text);
    expect(restored.status).toBe(200);
    expect(await restored.json()).toMatchObject({ ledger: env2.LEDGER_NAME, live: true, schemaVersion: SCHEMA_VERSION, migratedTo: SCHEMA_VERSION });
    expect((await adminRunners(env2, "?state=reaped")).runners).toEqual((await adminRunners(s.env, "?state=reaped")).runners);
    expect((await adminRunners(env2, "?limit=500")).runners.map((r) => r.name).sort()).toEqual([...runnerNames].sort());
    const dayOf = (env: WorkerEnv) => runInDurableObject(ledgerOf(env), (_i, state) => readDay(new Sql(state.storage.sql), NOW));
    expect((await dayOf(env2)).hours.at(-1)).toMatchObject({ reaped: 1 });
    expect(await dayOf(env2)).toEqual(await dayOf(s.env));
    expect(await rows(env2, "SELECT name, uid, reason FROM deletions")).toEqual(await rows(s.env, "SELECT name, uid, reason FROM deletions"));
    // A replayed delivery the backup holds is a replay in the restored ledger too: nothing written.
    const replay = await started({ ...s, env: env2 }, busy.metadata.name, 7200, 72000, "bk-busy");
    expect(await replay.json()).toMatchObject({ outcome: "duplicate" });
    // The busy runner's job completes: the restored ledger deletes it, by its uid.
    await s.kube.clearCalls();
    await completed(env2, busy.metadata.name, 7200, 72000);
    expect(await alarmAt(env2)).not.toBeNull();
    await ledgerOf(env2).alarmAt(NOW);
    const reaped = await deletes(s, { accepted: true });
    expect(reaped.map((d) => d.path)).toEqual([expect.stringMatching(/\/arc-runners-bk-busy$/)]);
    expect(reaped[0]!.body).toMatchObject({ preconditions: { uid: busy.metadata.uid } });
    expect((await adminRunners(env2, "?state=reaped")).runners.map((r) => r.name).sort()).toEqual(["arc-runners-bk-busy", "arc-runners-bk-done"]);
  });

  it("restored under a LEDGER_NAME not yet served, is left without an alarm until it is", async () => {
    const s = await stack();
    const busy = await s.runner({ name: "arc-runners-bk-later", workflowRunId: 7400 });
    await started(s, busy.metadata.name, 7400, 74000, "bk-later");
    await completed(s.env, busy.metadata.name, 7400, 74000);
    const text = await textOf(await backup(s.env));
    const target = newLedger(s.env);
    const restored = await restore(s.env, text, `?ledger=${String(target.LEDGER_NAME)}`);
    expect(await restored.json()).toMatchObject({ ledger: target.LEDGER_NAME, live: false });
    expect(await alarmAt(target)).toBeNull();
    expect(await rows(target, "SELECT runner, state FROM runners")).toEqual([{ runner: "arc-runners-bk-later", state: "finished" }]);
  });
});

describe("a restore refuses, writing nothing", () => {
  it("a ledger that holds facts, a backup altered or of a newer schema, a bad ledger name, a missing token", async () => {
    const s = await stack();
    const busy = await s.runner({ name: "arc-runners-bk-full", workflowRunId: 7500 });
    await started(s, busy.metadata.name, 7500, 75000, "bk-full");
    const text = await textOf(await backup(s.env));

    const full = await restore(s.env, text);
    expect(full.status).toBe(409);
    expect(await full.json()).toEqual({
      reason: "NotEmpty",
      ledger: s.env.LEDGER_NAME,
      error: expect.stringContaining("the ledger is not empty (runners: 1 rows"),
    });

    const empty = newLedger(s.env);
    const altered = await restore(empty, text.replace("arc-runners-bk-full", "arc-runners-bk-fulx"));
    expect(altered.status).toBe(400);
    expect(await altered.json()).toMatchObject({ reason: "BadChecksum", error: expect.stringContaining("altered") });

    const newline = text.indexOf("\n");
    const header = JSON.parse(text.slice(0, newline));
    const newer = await restore(empty, `${JSON.stringify({ ...header, schemaVersion: SCHEMA_VERSION + 1 })}${text.slice(newline)}`);
    expect(newer.status).toBe(409);
    expect(await newer.json()).toMatchObject({ reason: "NewerSchema", error: expect.stringContaining(`newer than this code's ${SCHEMA_VERSION}`) });

    const badName = await restore(s.env, text, "?ledger=Not_A_Name");
    expect(badName.status).toBe(400);
    expect(await badName.json()).toMatchObject({ reason: "BadLedgerName" });

    expect(await rows(empty, "SELECT COUNT(*) AS n FROM runners")).toEqual([{ n: 0 }]);
    expect(await rows(empty, "SELECT COUNT(*) AS n FROM deliveries_received")).toEqual([{ n: 0 }]);

    expect((await backup(s.env, {})).status).toBe(401);
    const noToken = await call(empty, new Request("https://arc-reaper.test/admin/restore", { method: "POST", body: text }));
    expect(noToken.status).toBe(401);
    expect(await rows(empty, "SELECT COUNT(*) AS n FROM runners")).toEqual([{ n: 0 }]);
  });
});
