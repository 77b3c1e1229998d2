// Direct mode lists EphemeralRunners as Tables (printer columns and metadata) and reads in full only the
// runners whose decision or count needs more: a sweep via Tables reaps and keeps the same runners as one via
// full objects, judges a Failed runner with its reason, counts idle runners with their version; a server that
// refuses Tables (406) or serves them without a column is listed in full, which the ledger remembers once per
// cluster and /healthz/deep shows.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Sql } from "../../../src/ledger/sql.ts";
import { makeEphemeralRunner, type KubeCall } from "../../standins/kube/control.ts";
import { NOW } from "../support/kube-calls.ts";
import { before, NS, REPO, stack, type Stack } from "../support/stack.ts";
import { adminRunners, ADMIN_TOKEN, call, ledgerOf } from "../support/worker.ts";

const at = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const SETTINGS = { REAPER_FAILED_SECONDS: "600", REAPER_IDLE_ALERT_SECONDS: "3600" };

/** The same fleet on each stack: one to reap, one Failed to delete, idle (old and young), being deleted, busy. */
async function fleet(s: Stack): Promise<void> {
  const seed = (o: Partial<Parameters<typeof makeEphemeralRunner>[0]> & { name: string }) =>
    s.kube.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", creationTimestamp: at(NOW - 7200_000), ...o }));
  await seed({ name: "arc-runners-x-runner-reap1", workflowRunId: 500, jobRepositoryName: REPO });
  await s.jobStarted({ runner: "arc-runners-x-runner-reap1", runId: 500, jobId: 9001, startedAt: before(NOW, 3600) });
  await s.runCompleted({ runId: 500, updatedAt: before(NOW, 900), conclusion: "cancelled" });
  await seed({
    name: "arc-runners-x-runner-fail1",
    phase: "Failed",
    status: { ready: false, reason: "PodCreateFailed", message: "quota exceeded", failures: { "pod-1": at(NOW - 3600_000) } },
  });
  await seed({ name: "arc-runners-x-runner-idle1", runnerImage: "ghcr.io/actions/actions-runner:2.330.0" });
  await seed({ name: "arc-runners-x-runner-young", creationTimestamp: at(NOW - 60_000) });
  await seed({ name: "arc-runners-x-runner-outd1", phase: "Outdated", runnerImage: "ghcr.io/actions/actions-runner:2.300.0" });
}

const listCalls = async (s: Stack): Promise<KubeCall[]> => (await s.kube.calls()).filter((c) => c.method === "GET" && c.path.endsWith("/ephemeralrunners"));
const deleted = async (s: Stack): Promise<string[]> =>
  (await s.kube.calls())
    .filter((c) => c.method === "DELETE" && c.status === 200)
    .map((c) => c.path.split("/").pop() ?? "")
    .sort();
const idleLines = async (s: Stack): Promise<string[]> =>
  (await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text())
    .split("\n")
    .filter((l) => l.startsWith("arc_reaper_idle_runners{"));
const notes = (s: Stack) =>
  runInDurableObject(ledgerOf(s.env), (_i, state) =>
    new Sql(state.storage.sql).all<{ key: string; value: string }>("SELECT key, value FROM memory WHERE key LIKE 'list-shape/%'"),
  );
const metricLine = async (s: Stack, prefix: string): Promise<string | undefined> =>
  (await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text())
    .split("\n")
    .find((l) => l.startsWith(prefix));
const namespaceCheck = async (s: Stack) =>
  (
    (await (await call(s.env, new Request("https://arc-reaper.test/healthz/deep", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).json()) as {
      checks: { name: string; detail: string }[];
    }
  ).checks.find((c) => c.name === `namespace ${NS}`)?.detail;

describe("listing as Tables", () => {
  it("reaps and keeps the same runners as a listing of full objects, judges Failed runners with their reason, counts idle ones with their version", async () => {
    const tables = await stack(SETTINGS, { namespaces: [NS] });
    const full = await stack(SETTINGS, { namespaces: [NS] });
    await full.kube.setTables({ refuse: true });
    for (const s of [tables, full]) {
      await fleet(s);
      await s.sweep(NOW);
    }
    expect(await deleted(tables)).toEqual(["arc-runners-x-runner-fail1", "arc-runners-x-runner-reap1"]);
    expect(await deleted(tables)).toEqual(await deleted(full));
    expect(await idleLines(tables)).toEqual(await idleLines(full));
    expect((await idleLines(tables)).join("\n")).toMatch(/runner_version="2\.330\.0",why="idle"\} 1/);
    expect((await idleLines(tables)).join("\n")).toMatch(/runner_version="2\.300\.0",why="outdated"\} 1/);
    const failed = async (s: Stack) => (await adminRunners(s.env, "?state=failed")).runners.map((r) => [r.name, r.arcReason, r.failedAt]);
    expect(await failed(tables)).toEqual([["arc-runners-x-runner-fail1", "PodCreateFailed", expect.any(String)]]);
    expect(await failed(tables)).toEqual(await failed(full));

    // Via Tables: one Table page, and a GET for each runner the decisions read more of (Failed, Outdated, idle past the setting).
    expect((await listCalls(tables)).map((c) => [c.status, c.query["includeObject"]])).toEqual([[200, "Metadata"]]);
    const reads = (await tables.kube.calls()).filter((c) => c.method === "GET" && c.path.includes("/ephemeralrunners/")).map((c) => c.path.split("/").pop());
    expect(reads.sort()).toEqual(["arc-runners-x-runner-fail1", "arc-runners-x-runner-idle1", "arc-runners-x-runner-outd1"]);
    expect(await notes(tables)).toEqual([]);
    // The two deleted are still listed: ARC's finalizers hold them.
    expect(await namespaceCheck(tables)).toBe(`listed 5 EphemeralRunners in ${NS} as Tables`);
  });

  it("takes the full list a server without Tables answers the fallback clause, in one request: the ledger remembers it, /healthz/deep says why", async () => {
    const s = await stack(SETTINGS, { namespaces: [NS] });
    await s.kube.setTables({ refuse: true });
    await fleet(s);
    await s.sweep(NOW);
    await s.sweep(NOW + 60_000);
    // The first sweep's Table request is answered with the full list (Accept's fallback clause): no 406, no second request.
    expect((await listCalls(s)).map((c) => [c.status, c.query["includeObject"] ?? "full"])).toEqual([
      [200, "Metadata"],
      [200, "full"],
    ]);
    const [note] = await notes(s);
    expect(note?.key).toBe("list-shape/default");
    expect(JSON.parse(note?.value ?? "{}")).toEqual({
      shape: "full",
      since: expect.any(Number),
      why: "HTTP 200: the server answered the full list, not a Table",
    });
    expect(await namespaceCheck(s)).toMatch(
      /^listed 5 EphemeralRunners in arc-runners as full objects since \d{4}-\d\d-\d\dT.*Z \(Tables refused: HTTP 200: the server answered the full list, not a Table; tried again a day after\)$/,
    );
    expect(await deleted(s)).toEqual(["arc-runners-x-runner-fail1", "arc-runners-x-runner-reap1"]);
  });

  it("falls back to full objects when the Table lacks a column it reads (an older CRD), naming it", async () => {
    const s = await stack(SETTINGS, { namespaces: [NS] });
    await s.kube.setTables({ withoutColumns: ["WorkflowRunId"] });
    await fleet(s);
    await s.sweep(NOW);
    expect((await listCalls(s)).map((c) => [c.status, c.query["includeObject"] ?? "full"])).toEqual([
      [200, "Metadata"],
      [200, "full"],
    ]);
    expect(JSON.parse((await notes(s))[0]?.value ?? "{}")).toMatchObject({ why: "the Table has no WorkflowRunId column (an older CRD?)" });
    expect(await deleted(s)).toEqual(["arc-runners-x-runner-fail1", "arc-runners-x-runner-reap1"]);
    // Served whole again (the CRD upgraded): within the day still full objects; after it Tables again, and the note goes.
    await s.kube.setTables({ withoutColumns: [] });
    await s.sweep(NOW + 60_000);
    expect((await listCalls(s)).at(-1)?.query["includeObject"]).toBeUndefined();
    await s.sweep(NOW + 86_400_000);
    expect((await listCalls(s)).slice(3).map((c) => [c.status, c.query["includeObject"] ?? "full"])).toEqual([[200, "Metadata"]]);
    expect(await notes(s)).toEqual([]);
  });

  it.each(["short-row", "mistyped-cells", "cut-page"] as const)(
    "a broken proxy's list (%s) leaves the namespace unreadable: nothing closed or deleted, /healthz/deep says why; once it answers right, reaped",
    async (mangle) => {
      const s = await stack(SETTINGS, { namespaces: [NS] });
      const seed = (name: string, runId: number, runnerId: number) =>
        s.kube.seed(
          makeEphemeralRunner({
            namespace: NS,
            scaleSet: "arc-runners",
            name,
            runnerId,
            workflowRunId: runId,
            jobRepositoryName: REPO,
            creationTimestamp: at(NOW - 7200_000),
          }),
        );
      // A busy runner (its job runs) and one whose job completed: the first row of the Table, and the second.
      await seed("arc-runners-x-runner-busy1", 600, 61);
      await s.jobStarted({ runner: "arc-runners-x-runner-busy1", runId: 600, jobId: 9601, startedAt: before(NOW, 3600) });
      await seed("arc-runners-x-runner-done1", 601, 62);
      await s.jobStarted({ runner: "arc-runners-x-runner-done1", runId: 601, jobId: 9602, startedAt: before(NOW, 3600) });
      await s.jobCompleted({
        runner: "arc-runners-x-runner-done1",
        runId: 601,
        jobId: 9602,
        startedAt: before(NOW, 3600),
        completedAt: before(NOW, 900),
        conclusion: "success",
      });
      // The sweep's list and /healthz/deep's own list, both through the proxy.
      await s.kube.addFault({ match: { verb: "list" }, mangle, times: 2 });
      await s.sweep(NOW);
      const health = await namespaceCheck(s);
      expect((await listCalls(s)).filter((c) => c.mangled === mangle)).toHaveLength(2);
      expect(health).toMatch(
        {
          "short-row": /^listing ephemeralrunners in arc-runners: HTTP 200: Table\.rows\[0\]\.cells: 2 cells for \d+ columns/,
          "mistyped-cells": /^listing ephemeralrunners in arc-runners: HTTP 200: Table\.rows\[0\]\.cells\[2\] \(RunnerId\): string, not its column's number$/,
          "cut-page": /^listing ephemeralrunners in arc-runners: HTTP 200: Table says 1 more items remain but carries no continue token$/,
        }[mangle],
      );
      expect(await metricLine(s, 'arc_reaper_last_sweep_errors{kind="cluster"}')).toMatch(/^arc_reaper_last_sweep_errors\{kind="cluster"\} [1-9]/);
      const open = async () => (await adminRunners(s.env)).runners.map((r) => [r["name"], r["state"]]).sort();
      expect((await open()).map(([name]) => name)).toEqual(["arc-runners-x-runner-busy1", "arc-runners-x-runner-done1"]);
      // Whatever the proxy sent, the busy runner was never read as absent or idle: no DELETE, no row closed.
      expect(await deleted(s)).toEqual([]);
      expect(await notes(s)).toEqual([]); // merely unreadable: Tables are not given up
      await s.sweep(NOW + 60_000);
      expect(await deleted(s)).toEqual(["arc-runners-x-runner-done1"]);
      expect((await listCalls(s)).at(-1)?.query["includeObject"]).toBe("Metadata");
    },
  );
});
