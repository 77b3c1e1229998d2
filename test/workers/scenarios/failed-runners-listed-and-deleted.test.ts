// Issue 24, items 1 and 2: runners ARC marked Failed are listed with ARC's
// reason and message; with REAPER_FAILED_SECONDS they are deleted (once, uid
// precondition, within the cap), never one busy on a run whose job runs; on
// each ARC version's CRD.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { FailedTable } from "../../../src/ledger/failed-table.ts";
import { SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { Sql } from "../../../src/ledger/sql.ts";
import { scaleSetKey } from "../../../src/model/failed.ts";
import { seedFailedHistory } from "../../hooks/seed-history.ts";
import { ARC_VERSIONS, makeEphemeralRunner, jobStartedStatus, type ArcVersion } from "../../standins/kube/control.ts";
import { before, NS, REPO, stack, type Stack } from "../support/stack.ts";
import { adminRunners, call, ADMIN_TOKEN, configureLedger, evictLedger, ledgerOf, runScheduled, testEnv } from "../support/worker.ts";
import { agentEnv, connect, runner as agentRunner, untilLedger } from "../support/fake-agent.ts";

const NOW = Date.now() + 86_400_000;
const at = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const MESSAGE = 'admission webhook "policy.example.com" denied the request:\u202e image <b>ghcr.io/x</b>\n is not allowed';

/** A runner as ARC leaves it when its pod cannot be made: Failed, with a reason, a message and the failed pods' times. */
async function failedRunner(
  s: Stack,
  version: ArcVersion,
  name: string,
  o: { failedAt: number; createdAt?: number; scaleSet?: string; runId?: number },
): Promise<string> {
  const created = await s.kube.seed(
    makeEphemeralRunner({
      namespace: NS,
      scaleSet: o.scaleSet ?? "arc-runners",
      name,
      phase: "Failed",
      arcVersion: version,
      creationTimestamp: at(o.createdAt ?? o.failedAt - 60_000),
      status: { ready: false, reason: "PodCreateFailed", message: MESSAGE, failures: { "pod-uid-1": at(o.failedAt - 30_000), "pod-uid-2": at(o.failedAt) } },
    }),
  );
  if (o.runId !== undefined) await s.kube.patchStatus(NS, name, jobStartedStatus({ workflowRunId: o.runId, jobRepositoryName: REPO }));
  return created.metadata.uid;
}

const deletes = async (s: Stack): Promise<string[]> =>
  (await s.kube.calls()).filter((c) => c.method === "DELETE").map((c) => `${c.status} ${c.path.split("/").pop() ?? ""}`);

async function metrics(s: Stack): Promise<string> {
  return (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text();
}

describe.each(ARC_VERSIONS)("ARC %s: Failed runners", (version) => {
  it("are listed under ?state=failed with ARC's reason and message (cleaned), when they failed, their scale set; counted in /metrics; never deleted without REAPER_FAILED_SECONDS", async () => {
    const s = await stack({}, { arcVersion: version });
    const uid = await failedRunner(s, version, "arc-runners-x-runner-aaaaa", { failedAt: NOW - 3_600_000 });
    await s.runner({ name: "arc-runners-x-runner-idle0" });
    await s.sweep(NOW);
    await s.sweep(NOW + 86_400_000);

    const listed = (await adminRunners(s.env, "?state=failed")).runners;
    expect(listed).toEqual([
      expect.objectContaining({
        name: "arc-runners-x-runner-aaaaa",
        state: "failed",
        uid,
        namespace: NS,
        cluster: "default",
        scaleSet: "arc-runners",
        arcReason: "PodCreateFailed",
        arcMessage: 'admission webhook "policy.example.com" denied the request: image <b>ghcr.io/x</b> is not allowed',
        failedAt: `${at(NOW - 3_600_000).slice(0, -1)}.000Z`,
        code: "NeverDeleted",
      }),
    ]);
    expect(await deletes(s)).toEqual([]);
    expect(await metrics(s)).toContain('arc_reaper_failed_runners{cluster="default",namespace="arc-runners",scale_set="arc-runners"} 1');
    expect(await metrics(s)).toContain('arc_reaper_runners{state="failed"} 1');
    // /admin?state=failed shows it with ARC's message, escaped, its direction marks gone.
    const page = await (
      await call(s.env, new Request("https://arc-reaper.test/admin?state=failed", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
    ).text();
    expect(page).toContain('<a href="/admin?state=failed" aria-current="page">failed (1)</a>');
    expect(page).toContain(
      '<strong><bdi>PodCreateFailed</bdi></strong>: <bdi class="message">admission webhook &quot;policy.example.com&quot; denied the request: image &lt;b&gt;ghcr.io/x&lt;/b&gt; is not allowed</bdi>',
    );
    expect(page).not.toContain("\u202e");
    expect(page).not.toContain("<b>ghcr.io");
    // The story says it.
    const story = (await (
      await call(
        s.env,
        new Request("https://arc-reaper.test/admin/runners/arc-runners-x-runner-aaaaa", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
      )
    ).json()) as { jobs: { state: string; story: { what: string }[] }[] };
    expect(story.jobs.map((j) => [j.state, j.story.map((e) => e.what.slice(0, 22))])).toEqual([["failed", ["seen Failed: ARC marke"]]]);
  });

  it("with REAPER_FAILED_SECONDS: deleted once that long after it failed (uid precondition, cause failed, within the cap), never one busy on a run whose job runs; its row closes reaped when it goes", async () => {
    const s = await stack(
      { REAPER_FAILED_SECONDS: "600", REAPER_MAX_DELETIONS_PER_MINUTE: "1", REAPER_MAX_DELETIONS_PER_SWEEP: "1" },
      { arcVersion: version, autoFinalize: true },
    );
    await failedRunner(s, version, "arc-runners-x-runner-old01", { failedAt: NOW - 3_600_000 });
    await failedRunner(s, version, "arc-runners-x-runner-old02", { failedAt: NOW - 3_000_000 });
    await failedRunner(s, version, "arc-runners-x-runner-new01", { failedAt: NOW - 300_000 });
    await failedRunner(s, version, "arc-runners-x-runner-busy1", { failedAt: NOW - 3_600_000, runId: 801 });
    expect((await s.jobStarted({ runner: "arc-runners-x-runner-busy1", runId: 801, jobId: 8010, startedAt: before(NOW, 3_500) })).status).toBe(202);

    const log = vi.spyOn(console, "log");
    await s.sweep(NOW);
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    log.mockRestore();
    // Each Failed runner's decision line names its code (src/model/failed-codes.ts).
    const decided = lines.filter((l) => l["msg"] === "decision").map((l) => [l["runner"], l["verdict"], l["code"]]);
    for (const line of [
      ["arc-runners-x-runner-old01", "deleted", "Deleted"],
      ["arc-runners-x-runner-old02", "keep", "Cap"],
      ["arc-runners-x-runner-new01", "keep", "NotDue"],
      ["arc-runners-x-runner-busy1", "keep", "CarriesRun"],
    ])
      expect(decided).toContainEqual(line);
    // The cap of 1 a minute: the oldest first; the second held back.
    expect(await deletes(s)).toEqual(["200 arc-runners-x-runner-old01"]);
    // The cap's number (1) is the one DELETE above; the code says which rule held each.
    expect(Object.fromEntries((await adminRunners(s.env, "?state=failed")).runners.map((r) => [r["name"], [r["code"], r["cause"]]]))).toEqual({
      "arc-runners-x-runner-old01": ["Deleted", "failed"],
      "arc-runners-x-runner-old02": ["Cap", null],
      "arc-runners-x-runner-new01": ["NotDue", null],
      "arc-runners-x-runner-busy1": ["CarriesRun", null],
    });
    expect(await metrics(s)).toContain('arc_reaper_deletions_total{cause="failed"} 1');

    await s.sweep(NOW + 60_000);
    await s.sweep(NOW + 400_000);
    expect(await deletes(s)).toEqual(["200 arc-runners-x-runner-old01", "200 arc-runners-x-runner-old02", "200 arc-runners-x-runner-new01"]);
    // Gone from the cluster (no finalizer held them): closed reaped, out of the failed listing; never a second DELETE.
    await s.sweep(NOW + 500_000);
    expect(await deletes(s)).toHaveLength(3);
    expect((await adminRunners(s.env, "?state=failed")).runners.map((r) => r["name"])).toEqual(["arc-runners-x-runner-busy1"]);
    expect(await s.kube.get(NS, "arc-runners-x-runner-busy1")).toBeDefined();

    // ARC's replacement fails at once: shown with its scale set's churn, deleted no sooner than REAPER_FAILED_SECONDS after it was made.
    await failedRunner(s, version, "arc-runners-x-runner-rep01", { createdAt: NOW + 60_000, failedAt: NOW + 70_000 });
    await s.sweep(NOW + 600_000);
    expect(await deletes(s)).toHaveLength(3);
    const rep = (await adminRunners(s.env, "?state=failed")).runners.find((r) => r["name"] === "arc-runners-x-runner-rep01");
    // Not due: made a minute ago; its scale set's 3 deletions in the last 600s are the 3 DELETEs above.
    expect(rep).toMatchObject({ code: "NotDue", cause: null });
    await s.sweep(NOW + 671_000);
    expect((await deletes(s)).slice(3)).toEqual(["200 arc-runners-x-runner-rep01"]);
  });
});

/** The migration (1-based) that made failed_runners. */
const FAILED_RUNNERS_MIGRATION = 11;
describe("recent deletions of Failed runners", () => {
  it("are counted per scale set in one statement that reads the recent deletions only, not the Failed history", async () => {
    const env = testEnv();
    await configureLedger(env);
    const now = Date.now();
    const { counts, rowsRead } = await runInDurableObject(ledgerOf(env), (_i, state) => {
      const sql = new Sql(state.storage.sql);
      // 10,000 deleted over a week in set-a, about 60 of them within the last hour (a deletion every 60.48 s);
      // one recent deletion in set-b, one Failed row never deleted.
      seedFailedHistory(sql, 0, 10_000, now, "set-a", 7 * 86_400_000);
      seedFailedHistory(sql, 20_000, 1, now, "set-b", 1);
      const table = new FailedTable(sql);
      table.put({ cluster: "default", namespace: "x", name: "open-1", uid: "u-open", failedAt: now, firstSeen: now, state: "failed", reason: "", story: [] });
      const read0 = sql.cost.rowsRead;
      const counts = table.deletedSince(now - 3_600_000);
      return { counts: Object.fromEntries(counts), rowsRead: sql.cost.rowsRead - read0 };
    });
    const recentA = counts[scaleSetKey("default", "set-a", "set-a")] ?? 0;
    expect(recentA).toBeGreaterThanOrEqual(59);
    expect(recentA).toBeLessThanOrEqual(61);
    expect(counts[scaleSetKey("default", "set-b", "set-b")]).toBe(1);
    expect(Object.keys(counts)).toHaveLength(2);
    // The index on deleted_at: about the recent rows, never the 10,000 of the history.
    expect(rowsRead).toBeLessThan(2 * (recentA + 1) + 10);
  });
});

describe("a Failed runner's DELETE back-off", () => {
  it("is kept with its open row, read back by the sweep's look, and cleared by a delete that goes through or a close", async () => {
    const env = testEnv();
    await configureLedger(env);
    const now = Date.now();
    const seen = await runInDurableObject(ledgerOf(env), (_i, state) => {
      const table = new FailedTable(new Sql(state.storage.sql));
      const row = {
        cluster: "default",
        namespace: NS,
        name: "f-1",
        uid: "u-1",
        failedAt: now,
        firstSeen: now,
        state: "failed" as const,
        reason: "r",
        story: [],
      };
      const out: unknown[] = [];
      table.put({ ...row, deleteFailures: 2, retryAt: now + 120_000 });
      out.push(table.open().map((f) => [f.deleteFailures, f.retryAt]));
      table.put({ ...row, deleteFailures: 3, retryAt: now + 240_000 });
      out.push(table.open().map((f) => [f.deleteFailures, f.retryAt]));
      table.put(row); // no word of a back-off: it stays
      out.push(table.open().map((f) => [f.deleteFailures, f.retryAt]));
      table.put({ ...row, deleteFailures: 0 }); // ended
      out.push(table.open().map((f) => [f.deleteFailures, f.retryAt]));
      table.put({ ...row, deleteFailures: 1, retryAt: now + 60_000 });
      table.put({ ...row, state: "gone", closedAt: now, deleteFailures: 1, retryAt: now + 60_000 });
      out.push(state.storage.sql.exec("SELECT COUNT(*) AS n FROM failed_delete_backoff").one().n);
      return out;
    });
    expect(seen).toEqual([[[2, now + 120_000]], [[3, now + 240_000]], [[3, now + 240_000]], [[undefined, undefined]], 0]);
  });
});

describe("the failed_runners migration", () => {
  it("a ledger of the release before it is read and worked on after it: its job rows judged, Failed runners seen", async () => {
    const s = await stack({ REAPER_FAILED_SECONDS: "600" }, { autoFinalize: true });
    await s.runner({ name: "arc-runners-x-runner-job01", workflowRunId: 901 });
    expect((await s.jobStarted({ runner: "arc-runners-x-runner-job01", runId: 901, jobId: 9010, startedAt: before(NOW, 1200) })).status).toBe(202);
    // Back to the schema of the release before it (10): no failed_runners, no finish_refusals, no agent_view.arc,
    // and none of the later migrations' runner ids.
    await runInDurableObject(ledgerOf(s.env), (_i, state) => {
      for (const statement of [
        "DROP TABLE failed_runners",
        "DROP TABLE finish_refusals",
        "ALTER TABLE agent_view DROP COLUMN arc",
        "ALTER TABLE agent_snapshot DROP COLUMN arc",
        "ALTER TABLE runners DROP COLUMN runner_id",
        "ALTER TABLE agent_view DROP COLUMN runner_id",
        "ALTER TABLE agent_snapshot DROP COLUMN runner_id",
        "ALTER TABLE unseen DROP COLUMN verdict_key",
        "ALTER TABLE runners DROP COLUMN check_code",
      ])
        state.storage.sql.exec(statement);
      // Before the failed_runners migration: it and every later one (runner ids, the deletion index) run again.
      state.storage.sql.exec("UPDATE schema_version SET version = ?", FAILED_RUNNERS_MIGRATION - 1);
    });
    await evictLedger(s.env);
    await failedRunner(s, "0.14.2", "arc-runners-x-runner-fail1", { failedAt: NOW - 3_600_000 });
    expect(
      (
        await s.jobCompleted({
          runner: "arc-runners-x-runner-job01",
          runId: 901,
          jobId: 9010,
          startedAt: before(NOW, 1200),
          completedAt: before(NOW, 600),
          conclusion: "success",
        })
      ).status,
    ).toBe(202);
    await s.sweep(NOW);
    const version = await runInDurableObject(
      ledgerOf(s.env),
      (_i, state) => state.storage.sql.exec<{ version: number }>("SELECT version FROM schema_version").one().version,
    );
    expect(version).toBe(SCHEMA_VERSION);
    expect((await adminRunners(s.env)).runners.map((r) => [r["name"], r["state"]])).toEqual([["arc-runners-x-runner-job01", "reaped"]]);
    expect(await deletes(s)).toEqual(["200 arc-runners-x-runner-job01", "200 arc-runners-x-runner-fail1"]);
    expect((await adminRunners(s.env, "?state=failed")).runners.map((r) => [r["name"], r["cause"]])).toEqual([["arc-runners-x-runner-fail1", "failed"]]);
  });
});

describe("agent mode", () => {
  it("a Failed runner the agent reports (its arc field) is listed with ARC's message, cleaned again by the ledger, and deleted through an order with cause failed (no run)", async () => {
    const env = agentEnv({ REAPER_FAILED_SECONDS: "600" });
    const agent = await connect(env);
    const arc = {
      phase: "Failed",
      reason: "PodCreateFailed",
      message: "quota\u202e exceeded",
      failedAt: new Date(NOW - 3_600_000).toISOString(),
      scaleSet: "arc-runners",
    };
    agent.send({
      type: "snapshot",
      id: "s1",
      part: 1,
      parts: 1,
      runners: [agentRunner("arc-runners-x-runner-agfl1", { arc }), agentRunner("arc-runners-x-runner-idle2")],
    });
    await untilLedger(env, "the snapshot", (v) => v.complete && v.runners.length === 2);
    await runScheduled(env, NOW);
    const rows = (await adminRunners(env, "?state=failed")).runners;
    expect(rows).toEqual([
      expect.objectContaining({
        name: "arc-runners-x-runner-agfl1",
        arcReason: "PodCreateFailed",
        arcMessage: "quota exceeded",
        scaleSet: "arc-runners",
        cause: "failed",
        code: "Deleted",
      }),
    ]);
    // One order, for the Failed runner only, with its cause and no run; the idle runner is never ordered.
    expect(agent.orders).toEqual([
      {
        type: "order",
        id: expect.any(String),
        namespace: NS,
        name: "arc-runners-x-runner-agfl1",
        uid: "uid-arc-runners-x-runner-agfl1",
        cause: "failed",
        reason: expect.any(String),
      },
    ]);
    // The next sweep sees it still listed (the fake agent's view is unchanged) and orders nothing twice.
    await runScheduled(env, NOW + 60_000);
    expect(agent.orders).toHaveLength(1);
  });
});
