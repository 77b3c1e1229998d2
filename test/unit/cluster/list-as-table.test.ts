// Listing as Tables (list-as-table.ts): the runners whose decision or count needs what a Table lacks are read in
// full (a GET each, or one full listing beyond FULL_READS_MAX), so that the Failed judge and the idle count see
// exactly what a full listing shows them (a differential over random fleets).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FULL_READS_MAX, listAsTable, needsFullRead, ReadFailed, type TableListing } from "../../../src/cluster/list-as-table.ts";
import type { ReadAnswer } from "../../../src/cluster/read-runner.ts";
import { ephemeralRunnerFromRead, runnersFromList } from "../../../src/cluster/runner-answers.ts";
import { isFailed } from "../../../src/cluster/arc-failure.ts";
import type { ClusterRunner } from "../../../src/model/runner.ts";
import type { Lookup } from "../../../src/model/view.ts";
import { countIdle } from "../../../src/reaper/idle-runners.ts";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { managedFieldsOf } from "../../standins/kube/managed-fields.ts";
import { printerColumns, tableOf } from "../../standins/kube/table.ts";
import type { JsonObject } from "../../standins/kube/types.ts";

const NS = "arc-runners";
const NOW = Date.parse("2026-12-03T12:00:00Z");
const IDLE_S = 3600;
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
let uids = 0;

type Kind = "busy" | "idle-old" | "idle-young" | "failed" | "outdated" | "deleting";
function served(kind: Kind, i: number, ageS: number, version: string): JsonObject {
  const r = makeEphemeralRunner({
    namespace: NS,
    scaleSet: `set-${i % 3}`,
    name: `runner-${String(i).padStart(4, "0")}`,
    runnerImage: `ghcr.io/actions/actions-runner:${version}`,
    ...(kind === "busy" ? { workflowRunId: 100 + i, jobRepositoryName: "octo-org/app" } : {}),
    ...(kind === "failed" ? { phase: "Failed", status: { reason: "PodCreateFailed", message: "denied", failures: { p: iso(NOW - 60_000) } } } : {}),
    ...(kind === "outdated" ? { phase: "Outdated", status: { reason: "Outdated", message: "exit 7" } } : {}),
  }) as unknown as JsonObject;
  const created = iso(NOW - (kind === "idle-young" ? Math.min(ageS, IDLE_S - 700) : ageS) * 1000);
  const meta: JsonObject = {
    ...(r["metadata"] as JsonObject),
    uid: `uid-${++uids}`,
    creationTimestamp: created,
    finalizers: ["ephemeralrunner.actions.github.com/finalizer"],
  };
  if (kind === "deleting") meta["deletionTimestamp"] = iso(NOW - 10_000);
  const obj = { ...r, metadata: meta };
  return { ...obj, metadata: { ...meta, managedFields: managedFieldsOf(obj, created) } };
}

const list = (items: JsonObject[]) => ({ kind: "EphemeralRunnerList", apiVersion: "actions.github.com/v1alpha1", metadata: { resourceVersion: "7" }, items });

/** A listing over `items`: Table pages of `pageSize`, GETs and a full listing from the same objects, each call counted. */
function listing(items: JsonObject[], pageSize = 500) {
  const calls = { pages: 0, reads: [] as string[], full: 0 };
  const byName = new Map(items.map((o) => [(o["metadata"] as JsonObject)["name"] as string, o]));
  const l: TableListing = {
    namespace: NS,
    now: NOW,
    idleAlertSeconds: IDLE_S,
    page: async (token) => {
      calls.pages++;
      const from = token ? Number(token) : 0;
      const rows = items.slice(from, from + pageSize);
      const more = from + pageSize < items.length;
      const metadata: JsonObject = more ? { resourceVersion: "7", continue: String(from + pageSize) } : { resourceVersion: "7" };
      return { status: 200, body: tableOf(rows, metadata, printerColumns("0.14.2"), new URLSearchParams(), NOW) };
    },
    listFull: async () => {
      calls.full++;
      return runnersFromList(200, NS, list(items)).runners;
    },
    read: async (name): Promise<ReadAnswer> => {
      calls.reads.push(name);
      const o = byName.get(name);
      return o ? { kind: "found", runner: ephemeralRunnerFromRead(200, name, o) } : { kind: "absent" };
    },
  };
  return { l, calls };
}

const asListing = (runners: ClusterRunner[]) => ({
  names: () => runners.map((r) => r.name),
  lookup: (name: string) => ({ found: runners.filter((r) => r.name === name) }) as unknown as Lookup,
});
const lessWhatTablesLack = (r: ClusterRunner) => {
  const { arcReason: _r, failedAt: _f, runnerVersion: _v, ...rest } = r;
  return rest;
};

describe("needsFullRead", () => {
  const r = (o: Partial<ClusterRunner>): ClusterRunner => ({ namespace: NS, name: "r", uid: "u", createdAt: iso(NOW - 7200_000), ...o });
  it.each([
    [{ phase: "Failed", workflowRunId: 3 }, true],
    [{ phase: "Outdated" }, true],
    [{}, true],
    // 10 minutes before the line: the sweep counts a little after it lists.
    [{ createdAt: iso(NOW - (IDLE_S - 599) * 1000) }, true],
    [{ createdAt: iso(NOW - (IDLE_S - 601) * 1000) }, false],
    [{ workflowRunId: 3 }, false],
    [{ deletionTimestamp: iso(NOW) }, false],
    [{ createdAt: "not a time" }, false],
  ] as const)("%j → %s", (o, want) => {
    expect(needsFullRead(r(o), NOW, IDLE_S)).toBe(want);
  });
});

describe("listAsTable", () => {
  it("reads nothing more when no runner needs it, over every page", async () => {
    const items = Array.from({ length: 7 }, (_, i) => served("busy", i, 7200, "2.330.0"));
    const { l, calls } = listing(items, 3);
    const runners = await listAsTable(l);
    expect(runners.map((r) => r.name)).toEqual(items.map((o) => (o["metadata"] as JsonObject)["name"]));
    expect(calls).toEqual({ pages: 3, reads: [], full: 0 });
  });

  it("GETs the few that need it, and drops one gone since the Table", async () => {
    const items = [served("busy", 0, 7200, "2.330.0"), served("failed", 1, 7200, "2.330.0"), served("idle-old", 2, 7200, "2.329.0")];
    const { l, calls } = listing(items);
    const gone = (items[2]!["metadata"] as JsonObject)["name"] as string;
    const read = l.read;
    l.read = async (name) => {
      if (name !== gone) return read(name);
      calls.reads.push(name);
      return { kind: "absent" };
    };
    const runners = await listAsTable(l);
    expect(calls.reads.sort()).toEqual(["runner-0001", "runner-0002"]);
    expect(runners.map((r) => r.name)).toEqual(["runner-0000", "runner-0001"]);
    expect(runners[1]).toMatchObject({ arcReason: "PodCreateFailed", failedAt: expect.any(String), runnerVersion: "2.330.0" });
  });

  it("fails the namespace when a GET fails (every runner of it is kept)", async () => {
    const { l } = listing([served("failed", 1, 7200, "2.330.0")]);
    l.read = async () => ({ kind: "failed", failure: { status: 503, why: "HTTP 503", cause: new Error("x") } });
    await expect(listAsTable(l)).rejects.toBeInstanceOf(ReadFailed);
  });

  it(`lists in full once, with no GET, when more than ${FULL_READS_MAX} need it`, async () => {
    const items = Array.from({ length: FULL_READS_MAX + 1 }, (_, i) => served("idle-old", i, 7200, "2.330.0"));
    const { l, calls } = listing([...items, served("busy", 999, 60, "2.330.0")]);
    const runners = await listAsTable(l);
    expect(calls.reads).toEqual([]);
    expect(calls.full).toBe(1);
    expect(runners.every((r) => r.runnerVersion === "2.330.0")).toBe(true);
  });

  it("gives the Failed judge and the idle count what a full listing gives, over random fleets", async () => {
    const kind = fc.constantFrom<Kind>("busy", "busy", "idle-old", "idle-young", "failed", "outdated", "deleting");
    const fleet = fc.array(fc.tuple(kind, fc.integer({ min: 0, max: 3 * IDLE_S }), fc.constantFrom("2.329.0", "2.330.0", "latest")), { maxLength: 80 });
    await fc.assert(
      fc.asyncProperty(fleet, fc.integer({ min: 1, max: 40 }), async (spec, pageSize) => {
        const items = spec.map(([k, age, v], i) => served(k, i, age, v));
        const full = runnersFromList(200, NS, list(items)).runners;
        const { l } = listing(items, pageSize);
        const viaTables = await listAsTable(l);
        // Same runners, the same fields but what a Table lacks; in full those the decisions read more of.
        expect(viaTables.map(lessWhatTablesLack)).toEqual(full.map(lessWhatTablesLack));
        expect(viaTables.filter(isFailed)).toEqual(full.filter(isFailed));
        for (const now of [NOW, NOW + 300_000]) {
          expect(countIdle(asListing(viaTables), new Set(), now, IDLE_S)).toEqual(countIdle(asListing(full), new Set(), now, IDLE_S));
        }
      }),
      { numRuns: 60 },
    );
  });
});
