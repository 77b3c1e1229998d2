// The words of every Failed-runner code (src/model/failed-codes.ts), once each, through the real paths
// (judge-failed.ts, failed-runners.ts): the unit tests assert codes, this file pins what people read.
import { describe, expect, it } from "vitest";
import type { Cluster, DeleteOutcome } from "../../../src/cluster/ephemeral-runners.ts";
import { FAILED_CODES, type FailedCode } from "../../../src/model/failed-codes.ts";
import type { FailedRunner } from "../../../src/model/failed.ts";
import type { ClusterRunner } from "../../../src/model/runner.ts";
import type { Lookup } from "../../../src/model/view.ts";
import { SlidingWindow } from "../../../src/model/window.ts";
import { lookAtFailed } from "../../../src/reaper/failed-runners.ts";
import { judgeFailed } from "../../../src/reaper/judge-failed.ts";
import type { FailedPort, LedgerPort } from "../../../src/reaper/ports.ts";
import type { PassDeps } from "../../../src/reaper/reconcile-all.ts";
import { failedObject, failedRow, NOW } from "../support/failed-fixtures.ts";

const STORY = "ARC marked it Failed 600s ago (PodCreateFailed: denied); it holds a slot of scale set set-a";
const DUE = "failed at least REAPER_FAILED_SECONDS=300 ago: deleted so ARC can make a new one";
const object = failedObject;
const stored = failedRow;

interface World {
  objects?: ClusterRunner[];
  open?: FailedRunner[];
  failedSeconds?: number;
  dryRun?: boolean;
  paused?: boolean;
  cap?: number;
  outcome?: DeleteOutcome;
}

/** One look of the sweep at Failed runners: the first row it stored (its code and words). */
async function looked(o: World): Promise<{ code?: FailedCode; reason: string }> {
  const rows: FailedRunner[] = [];
  const port: FailedPort = { open: () => o.open ?? [], store: (row) => void rows.push(structuredClone(row)), deletedSince: () => new Map() };
  const cluster = { deleteRunner: async () => o.outcome ?? { kind: "deleted" } } as unknown as Cluster;
  const ledger = {
    failed: port,
    paused: () => o.paused ?? false,
    deletions: (now: number) => new SlidingWindow(o.cap === 0 ? [NOW - 1000] : [], o.cap === 0 ? 1 : 10, now),
    saveDeletions: () => undefined,
  } as unknown as LedgerPort;
  const deps = {
    ledger,
    watched: [{ name: "default", cluster, namespaces: ["arc"] }],
    settings: { failedSeconds: o.failedSeconds ?? 300, dryRun: o.dryRun ?? false },
    now: NOW,
    clock: () => NOW,
  } as unknown as PassDeps;
  const objects = o.objects ?? [object()];
  const listing = {
    names: () => new Set([...objects.map((r) => r.name), ...(o.open ?? []).map((r) => r.name)]),
    lookup: (name: string): Lookup => ({ found: objects.filter((r) => r.name === name), unreadable: [], absentAsOf: () => NOW }),
  };
  await lookAtFailed(listing, deps);
  const row = rows[0];
  if (!row) throw new Error("the look stored no row");
  return { code: row.code, reason: row.reason };
}

const judged = (over: { row?: Partial<FailedRunner>; runner?: Partial<ClusterRunner>; failedSeconds?: number | undefined } = {}) =>
  judgeFailed({
    row: stored({ createdAt: NOW - 700_000, ...over.row }),
    runner: { namespace: "arc", name: "f-1", uid: "u-1", phase: "Failed", ...over.runner },
    now: NOW,
    failedSeconds: "failedSeconds" in over ? over.failedSeconds : 300,
    recentlyDeleted: 0,
  });

/** The words of each code, by one path that makes it. */
const WORDING: Record<
  FailedCode,
  { name: string; decision: () => { code?: FailedCode; reason: string } | Promise<{ code?: FailedCode; reason: string }>; reason: string }
> = {
  CarriesRun: {
    name: "busy on a run",
    decision: () => judged({ runner: { workflowRunId: 5 } }),
    reason: `${STORY}; it carries run 5, so its job's rules judge it, never this one`,
  },
  AlreadyDeleted: {
    name: "deleted by us, still held",
    decision: () => judged({ row: { deletedAt: NOW - 120_000 } }),
    reason: `${STORY}; deleted 120s ago, ARC still holds it: never deleted again`,
  },
  BeingDeleted: {
    name: "a deletionTimestamp",
    decision: () => judged({ runner: { deletionTimestamp: "2026-12-01T11:00:00Z" } }),
    reason: `${STORY}; already being deleted since 2026-12-01T11:00:00Z`,
  },
  NeverDeleted: {
    name: "REAPER_FAILED_SECONDS unset",
    decision: () => judged({ failedSeconds: undefined }),
    reason: `${STORY}; REAPER_FAILED_SECONDS is unset: never deleted`,
  },
  NotDue: {
    name: "not failed long enough",
    decision: () => judged({ failedSeconds: 900 }),
    reason: `${STORY}; due for deletion at 2026-12-01T12:05:00.000Z (REAPER_FAILED_SECONDS=900)`,
  },
  FailedLong: { name: "failed long enough", decision: () => judged(), reason: `${STORY}; ${DUE}` },
  DryRun: { name: "would delete", decision: () => looked({ dryRun: true }), reason: `dry run: would delete: ${STORY}; ${DUE}` },
  Paused: { name: "would delete", decision: () => looked({ paused: true }), reason: `paused: would delete: ${STORY}; ${DUE}` },
  DeleteBackingOff: {
    name: "its last DELETE failed, within its back-off",
    decision: () => looked({ open: [stored({ deleteFailures: 2, retryAt: NOW + 60_000 })] }),
    reason: `${STORY}; ${DUE}; its delete failed (2 in a row): tried again at 2026-12-01T12:01:00.000Z`,
  },
  Cap: { name: "the cap reached", decision: () => looked({ cap: 0 }), reason: `deletion cap of 1 in 60s reached, held back: ${STORY}; ${DUE}` },
  Deleted: { name: "the DELETE went through", decision: () => looked({}), reason: `deleted (cause failed): ${STORY}; ${DUE}` },
  AlreadyGone: { name: "the DELETE answered 404", decision: () => looked({ outcome: { kind: "gone" } }), reason: `${STORY}; ${DUE}; already gone (404)` },
  DeleteFailed: {
    name: "the DELETE answered 500",
    decision: () => looked({ outcome: { kind: "failed", status: 500, why: "HTTP 500" } }),
    reason: `${STORY}; ${DUE}; delete failed (1 in a row), tried again at 2026-12-01T12:01:00.000Z: HTTP 500`,
  },
  NoLongerFailed: {
    name: "its object is Running",
    decision: () => looked({ objects: [object({ phase: "Running" })], open: [stored()] }),
    reason: "ARC marked it Failed 540s ago (PodCreateFailed: denied); it is no longer Failed (phase Running)",
  },
  Reaped: {
    name: "it went after our delete",
    decision: () => looked({ objects: [], open: [stored({ deletedAt: NOW - 30_000 })] }),
    reason: "ARC marked it Failed 540s ago (PodCreateFailed: denied); it went 30s after our delete",
  },
  Gone: {
    name: "it left without us",
    decision: () => looked({ objects: [], open: [stored()] }),
    reason: "ARC marked it Failed 540s ago (PodCreateFailed: denied); it left the cluster without us",
  },
};

describe("the words of every Failed-runner code", () => {
  it("every code in FAILED_CODES has its case, and every case a code of it", () => {
    expect(Object.keys(WORDING).sort()).toEqual([...FAILED_CODES].sort());
  });

  it("the codes are a closed set of distinct names", () => {
    expect(new Set(FAILED_CODES).size).toBe(FAILED_CODES.length);
    for (const code of FAILED_CODES) expect(code).toMatch(/^[A-Z][A-Za-z]+$/);
  });

  for (const code of FAILED_CODES) {
    it(`${code}: ${WORDING[code].name}`, async () => {
      const d = await WORDING[code].decision();
      expect(d.code).toBe(code);
      expect(d.reason).toBe(WORDING[code].reason);
    });
  }
});
