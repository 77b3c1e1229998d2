// The sweep's look at runners ARC marked Failed (failed-runners.ts) on plain
// Node: rows kept and shown, deleted once by uid when REAPER_FAILED_SECONDS
// says so (within the cap, never in dry run or paused), closed on a fresh look.
import { describe, expect, it } from "vitest";
import type { Cluster, DeleteContext, DeleteOutcome } from "../../../src/cluster/ephemeral-runners.ts";
import { scaleSetKey, type FailedRunner } from "../../../src/model/failed.ts";
import type { ClusterRunner } from "../../../src/model/runner.ts";
import type { Lookup } from "../../../src/model/view.ts";
import { SlidingWindow } from "../../../src/model/window.ts";
import { lookAtFailed } from "../../../src/reaper/failed-runners.ts";
import type { FailedPort, LedgerPort } from "../../../src/reaper/ports.ts";
import type { PassDeps } from "../../../src/reaper/reconcile-all.ts";
import { failedObject, failedRow, iso, NOW } from "../support/failed-fixtures.ts";

const failedObj = failedObject;

function listing(objects: ClusterRunner[], o: { unreadable?: Lookup["unreadable"]; absentAsOf?: number } = {}) {
  return {
    names: () => new Set(objects.map((r) => r.name)),
    lookup: (name: string): Lookup => ({
      found: objects.filter((r) => r.name === name),
      unreadable: o.unreadable ?? [],
      absentAsOf: () => o.absentAsOf ?? NOW,
    }),
  };
}

function world(
  o: {
    open?: FailedRunner[];
    failedSeconds?: number;
    dryRun?: boolean;
    paused?: boolean;
    cap?: number;
    times?: readonly number[];
    outcome?: DeleteOutcome;
    recent?: number;
    port?: boolean;
    cluster?: string;
  } = {},
) {
  const stored: { row: FailedRunner; change: { deleted?: boolean; closed?: boolean; logged?: boolean } }[] = [];
  const deletes: { uid: string; context?: DeleteContext }[] = [];
  const deletedSinceAsked: unknown[][] = [];
  let saved: number[] | undefined;
  const port: FailedPort = {
    open: () => (o.open ?? []).map((r) => ({ ...r, story: [...r.story] })),
    store: (row, change) => stored.push({ row: structuredClone(row), change }),
    deletedSince: (...args) => {
      deletedSinceAsked.push(args);
      return new Map([[scaleSetKey("default", "arc", "set-a"), o.recent ?? 0]]);
    },
  };
  const cluster = {
    deleteRunner: async (r: Pick<ClusterRunner, "uid">, context?: DeleteContext) => {
      deletes.push({ uid: r.uid, context });
      return o.outcome ?? { kind: "deleted" };
    },
  } as unknown as Cluster;
  const ledger = {
    failed: o.port === false ? undefined : port,
    paused: () => o.paused ?? false,
    deletions: (now: number) => new SlidingWindow([...(o.times ?? [])], o.cap ?? 10, now),
    saveDeletions: (w: SlidingWindow) => (saved = w.toJSON()),
  } as unknown as LedgerPort;
  const deps = {
    ledger,
    watched: [{ name: o.cluster ?? "default", cluster, namespaces: ["arc"] }],
    settings: { failedSeconds: o.failedSeconds, dryRun: o.dryRun ?? false },
    now: NOW,
    clock: () => NOW + 7,
  } as unknown as PassDeps;
  return { deps, stored, deletes, deletedSinceAsked, saved: () => saved };
}

const openRow = (over: Partial<FailedRunner> = {}): FailedRunner =>
  failedRow({
    reason: "ARC marked it Failed 540s ago (PodCreateFailed: denied); it holds a slot of scale set set-a; REAPER_FAILED_SECONDS is unset: never deleted",
    story: [{ at: iso(NOW - 60_000), what: "seen Failed", source: "sweep", code: "NeverDeleted" }],
    ...over,
  });

describe("lookAtFailed", () => {
  it("a ledger without Failed rows: nothing looked at", async () => {
    const w = world({ port: false });
    expect(await lookAtFailed(listing([failedObj()]), w.deps)).toEqual({ failed: 0, deleted: 0, closed: 0 });
    expect(w.saved()).toBeUndefined();
  });

  it("a new Failed runner without REAPER_FAILED_SECONDS: a row shown with ARC's words, never deleted", async () => {
    const w = world();
    const report = await lookAtFailed(listing([failedObj(), failedObj({ name: "ok-1", uid: "u-ok", phase: "Running" })]), w.deps);
    expect(report).toEqual({ failed: 1, deleted: 0, closed: 0 });
    expect(w.deletes).toEqual([]);
    expect(w.deletedSinceAsked).toEqual([]);
    const reason = "ARC marked it Failed 600s ago (PodCreateFailed: denied); it holds a slot of scale set set-a; REAPER_FAILED_SECONDS is unset: never deleted";
    expect(w.stored).toEqual([
      {
        row: {
          firstSeen: NOW,
          story: [{ at: iso(NOW), what: `seen Failed: ${reason}`, source: "sweep", code: "NeverDeleted" }],
          reason,
          code: "NeverDeleted",
          state: "failed",
          cluster: "default",
          namespace: "arc",
          name: "f-1",
          uid: "u-1",
          failedAt: NOW - 600_000,
          scaleSet: "set-a",
          arcReason: "PodCreateFailed",
          arcMessage: "denied",
          createdAt: NOW - 700_000,
        },
        change: { deleted: false, logged: true },
      },
    ]);
  });

  it("a Failed runner without ARC's times or labels: failed as of now, in default, unlabelled; one carrying a run is left to its job", async () => {
    const w = world({ failedSeconds: 60 });
    await lookAtFailed(
      listing([
        failedObj({ cluster: undefined, failedAt: undefined, createdAt: undefined, scaleSet: undefined, arcReason: undefined, arcMessage: undefined }),
        failedObj({ name: "f-2", uid: "u-2", workflowRunId: 9 }),
      ]),
      w.deps,
    );
    expect(w.stored[0]?.row).toMatchObject({ cluster: "default", failedAt: NOW, firstSeen: NOW });
    expect(w.stored[0]?.row).not.toHaveProperty("scaleSet");
    expect(w.stored[0]?.row).not.toHaveProperty("createdAt");
    expect(w.stored[0]?.row).not.toHaveProperty("arcReason");
    expect(w.stored[0]?.row).not.toHaveProperty("arcMessage");
    expect(w.stored[0]?.row.reason).toMatch(/^ARC marked it Failed 0s ago; it holds a slot of scale set \(unlabelled\); due for deletion/);
    expect(w.stored[0]?.row.code).toBe("NotDue");
    expect(w.stored[1]?.row).toMatchObject({ runId: 9, code: "CarriesRun" });
    expect(w.deletes).toEqual([]);
  });

  it("failed long enough: deleted once by its uid (cause failed), within the window stamped at the real clock", async () => {
    const w = world({ failedSeconds: 300, open: [openRow()], times: [NOW - 1000] });
    const report = await lookAtFailed(listing([failedObj()]), w.deps);
    expect(report).toEqual({ failed: 1, deleted: 1, closed: 0 });
    const reason =
      "ARC marked it Failed 600s ago (PodCreateFailed: denied); it holds a slot of scale set set-a; failed at least REAPER_FAILED_SECONDS=300 ago: deleted so ARC can make a new one";
    expect(w.deletes).toEqual([{ uid: "u-1", context: { reason, cause: "failed" } }]);
    expect(w.deletedSinceAsked).toEqual([[NOW - 300_000]]);
    expect(w.stored).toHaveLength(1);
    expect(w.stored[0]).toMatchObject({
      row: { id: 1, deletedAt: NOW, code: "Deleted", reason: `deleted (cause failed): ${reason}`, firstSeen: NOW - 600_000 },
      change: { deleted: true, logged: true },
    });
    expect(w.stored[0]?.row.story.at(-1)).toEqual({ at: iso(NOW), what: `deleted (cause failed): ${reason}`, source: "sweep", code: "Deleted" });
    expect(w.saved()).toEqual([NOW - 1000, NOW + 7]);
  });

  it("replacements that keep failing: the churn is said", async () => {
    const w = world({ failedSeconds: 300, recent: 2 });
    await lookAtFailed(listing([failedObj()]), w.deps);
    expect(w.stored[0]?.row.code).toBe("Deleted");
    expect(w.stored[0]?.row.reason).toMatch(/; replacements keep failing: 2 of scale set set-a deleted in the last 300s$/);
  });

  it("recent deletions are counted once per look, not once per Failed runner (a count scanned the Failed history each time)", async () => {
    const objects = Array.from({ length: 500 }, (_, i) => failedObj({ name: `f-${i}`, uid: `u-${i}` }));
    const w = world({ failedSeconds: 300, recent: 2, cap: 2 });
    const report = await lookAtFailed(listing(objects), w.deps);
    expect(report).toMatchObject({ failed: 500, deleted: 2 });
    expect(w.deletedSinceAsked).toEqual([[NOW - 300_000]]);
    // The count still includes this look's own deletes, as a count per runner did.
    const churn = w.stored.map((s) => /replacements keep failing: (\d+) of/.exec(s.row.reason)?.[1]);
    expect(churn.slice(0, 3)).toEqual(["2", "3", "4"]);
    expect(churn.at(-1)).toBe("4");
    // No Failed runner in the lists: nothing counted at all.
    const none = world({ failedSeconds: 300 });
    await lookAtFailed(listing([]), none.deps);
    expect(none.deletedSinceAsked).toEqual([]);
  });

  it("dry run, paused, the cap reached: said, never deleted", async () => {
    for (const [o, code] of [
      [{ dryRun: true }, "DryRun"],
      [{ paused: true }, "Paused"],
      [{ cap: 1, times: [NOW - 1000] }, "Cap"],
    ] as const) {
      const w = world({ failedSeconds: 300, ...o });
      const report = await lookAtFailed(listing([failedObj()]), w.deps);
      expect(report.deleted).toBe(0);
      expect(w.deletes).toEqual([]);
      expect(w.stored[0]?.row.code).toBe(code);
      expect(w.stored[0]?.row.story.at(-1)?.code).toBe(code);
      expect(w.stored[0]?.row.deletedAt).toBeUndefined();
      expect(w.stored[0]?.change.deleted).toBe(false);
    }
  });

  it("a delete answered 404 or failed: said, not marked deleted", async () => {
    const gone = world({ failedSeconds: 300, outcome: { kind: "gone" } });
    await lookAtFailed(listing([failedObj()]), gone.deps);
    expect(gone.stored[0]?.row.code).toBe("AlreadyGone");
    expect(gone.stored[0]?.row.deletedAt).toBeUndefined();
    const failed = world({ failedSeconds: 300, outcome: { kind: "failed", status: 500, why: "HTTP 500" } });
    expect((await lookAtFailed(listing([failedObj()]), failed.deps)).deleted).toBe(0);
    expect(failed.stored[0]?.row).toMatchObject({ code: "DeleteFailed", deleteFailures: 1, retryAt: NOW + 60_000 });
  });

  it("a runner in a cluster not watched is never deleted", async () => {
    const w = world({ failedSeconds: 300, cluster: "east" });
    await lookAtFailed(listing([failedObj()]), w.deps);
    expect(w.deletes).toEqual([]);
    expect(w.stored[0]?.row).toMatchObject({ code: "DeleteFailed", deleteFailures: 1 });
    expect(w.stored[0]?.row.reason).toMatch(/: no cluster named default is watched$/);
  });

  it("a row seen again with the same code: stored without a story line or a log, whatever its words", async () => {
    const w = world({ open: [openRow()] });
    await lookAtFailed(listing([failedObj()]), w.deps);
    expect(w.stored[0]?.change).toEqual({ deleted: false, logged: false });
    expect(w.stored[0]?.row.story).toHaveLength(1);
    expect(w.stored[0]?.row).toMatchObject({ code: "NeverDeleted" });
    // Its words changed (ARC's message), its decision did not.
    const reworded = world({ open: [openRow()] });
    await lookAtFailed(listing([failedObj({ arcMessage: "quota exceeded" })]), reworded.deps);
    expect(reworded.stored[0]?.change).toEqual({ deleted: false, logged: false });
    expect(reworded.stored[0]?.row.reason).toMatch(/\(PodCreateFailed: quota exceeded\)/);
  });

  it("a row seen again with another code: a story line with its code, and a log", async () => {
    const w = world({ failedSeconds: 300, dryRun: true, open: [openRow()] });
    await lookAtFailed(listing([failedObj()]), w.deps);
    expect(w.stored[0]?.change).toEqual({ deleted: false, logged: true });
    expect(w.stored[0]?.row.story.map((e) => e.code)).toEqual(["NeverDeleted", "DryRun"]);
    // Dry run again: the same decision.
    const again = world({ failedSeconds: 300, dryRun: true, open: [w.stored[0]?.row as FailedRunner] });
    await lookAtFailed(listing([failedObj()]), again.deps);
    expect(again.stored[0]?.change).toEqual({ deleted: false, logged: false });
  });

  it("a row stored before codes (its story's entries name none): a new decision once, then its code decides", async () => {
    const w = world({ open: [openRow({ story: [{ at: iso(NOW - 60_000), what: "seen Failed", source: "sweep" }] })] });
    await lookAtFailed(listing([failedObj()]), w.deps);
    expect(w.stored[0]?.change).toEqual({ deleted: false, logged: true });
    expect(w.stored[0]?.row.story.at(-1)?.code).toBe("NeverDeleted");
    const next = world({ open: [w.stored[0]?.row as FailedRunner] });
    await lookAtFailed(listing([failedObj()]), next.deps);
    expect(next.stored[0]?.change).toEqual({ deleted: false, logged: false });
  });

  it("every DELETE sent that failed is said, even after one that failed before it", async () => {
    const w = world({
      failedSeconds: 300,
      open: [openRow({ deleteFailures: 1, retryAt: NOW, story: [{ at: iso(NOW - 60_000), what: "failed", source: "sweep", code: "DeleteFailed" }] })],
      outcome: { kind: "failed", status: 503, why: "HTTP 503" },
    });
    await lookAtFailed(listing([failedObj()]), w.deps);
    expect(w.stored[0]?.change).toEqual({ deleted: false, logged: true });
    expect(w.stored[0]?.row).toMatchObject({ code: "DeleteFailed", deleteFailures: 2 });
  });

  it("a stored row brought up to date: an unnamed cluster is default, ARC's failure time kept when it no longer says one, a run it no longer carries dropped", async () => {
    const w = world({ open: [openRow({ runId: 5, failedAt: NOW - 900_000 })] });
    await lookAtFailed(listing([failedObj({ cluster: undefined, failedAt: undefined })]), w.deps);
    expect(w.stored).toHaveLength(1);
    expect(w.stored[0]?.row).toMatchObject({ id: 1, cluster: "default", failedAt: NOW - 900_000, firstSeen: NOW - 600_000 });
    expect(w.stored[0]?.row).not.toHaveProperty("runId");
    expect(w.stored[0]?.row.reason).toMatch(/^ARC marked it Failed 900s ago/);
  });

  it("a row whose object left on a fresh look: closed gone; one we deleted: closed reaped with how long", async () => {
    const w = world({ open: [openRow(), openRow({ id: 2, name: "f-2", uid: "u-2", deletedAt: NOW - 30_000 })] });
    const report = await lookAtFailed(listing([]), w.deps);
    expect(report).toEqual({ failed: 0, deleted: 0, closed: 2 });
    expect(w.stored.map((s) => s.change)).toEqual([{ closed: true }, { closed: true }]);
    expect(w.stored[0]?.row).toMatchObject({
      state: "gone",
      closedAt: NOW,
      code: "Gone",
      reason: "ARC marked it Failed 540s ago (PodCreateFailed: denied); it left the cluster without us",
    });
    expect(w.stored[0]?.row.story.at(-1)).toEqual({ at: iso(NOW), what: "closed gone: it left the cluster without us", source: "sweep", code: "Gone" });
    expect(w.stored[1]?.row).toMatchObject({
      state: "reaped",
      code: "Reaped",
      reason: "ARC marked it Failed 540s ago (PodCreateFailed: denied); it went 30s after our delete",
    });
  });

  it("a row whose object is no longer Failed: closed gone, saying its phase", async () => {
    const w = world({ open: [openRow({ deletedAt: NOW - 1000 })] });
    await lookAtFailed(listing([failedObj({ phase: "Running" })]), w.deps);
    expect(w.stored[0]?.row).toMatchObject({
      state: "gone",
      code: "NoLongerFailed",
      reason: "ARC marked it Failed 540s ago (PodCreateFailed: denied); it is no longer Failed (phase Running)",
    });
    const unset = world({ open: [openRow()] });
    await lookAtFailed(listing([failedObj({ phase: undefined })]), unset.deps);
    expect(unset.stored[0]?.row.reason).toMatch(/it is no longer Failed \(phase unset\)$/);
  });

  it("a row of another uid, namespace or cluster of that name is not its object", async () => {
    for (const other of [{ uid: "u-9" }, { namespace: "arc-b" }, { cluster: "east" }]) {
      const w = world({ open: [openRow()] });
      await lookAtFailed(listing([failedObj({ phase: "Running", ...other })]), w.deps);
      expect(w.stored[0]?.row.code).toBe("Gone");
    }
  });

  it("its place unreadable or not looked in: the row stays", async () => {
    const unreadable = world({ open: [openRow()] });
    const r = await lookAtFailed(listing([], { unreadable: [{ place: { cluster: "default", namespace: "arc" }, why: "503" }] }), unreadable.deps);
    expect(r.closed).toBe(0);
    expect(unreadable.stored).toEqual([]);
    const notLooked = world({ open: [openRow()] });
    expect((await lookAtFailed(listing([], { absentAsOf: 0 }), notLooked.deps)).closed).toBe(0);
    // Another place unreadable: this one's fresh absence closes it.
    const other = world({ open: [openRow()] });
    const o = await lookAtFailed(
      listing([], {
        unreadable: [
          { place: { cluster: "default", namespace: "arc-b" }, why: "503" },
          { place: { cluster: "east", namespace: "arc" }, why: "503" },
        ],
      }),
      other.deps,
    );
    expect(o.closed).toBe(1);
  });
  it("a failed DELETE backs off per row, 1 minute doubling to 1 hour, taking no slot of the cap meanwhile; a delete that goes through clears it", async () => {
    const backingOff = world({ failedSeconds: 300, open: [openRow({ deleteFailures: 3, retryAt: NOW + 1 })] });
    expect((await lookAtFailed(listing([failedObj()]), backingOff.deps)).deleted).toBe(0);
    expect(backingOff.deletes).toEqual([]);
    expect(backingOff.saved()).toEqual([]);
    expect(backingOff.stored[0]?.row.code).toBe("DeleteBackingOff");
    const again = world({
      failedSeconds: 300,
      open: [openRow({ deleteFailures: 3, retryAt: NOW })],
      outcome: { kind: "failed", status: 503, why: "HTTP 503" },
    });
    await lookAtFailed(listing([failedObj()]), again.deps);
    expect(again.stored[0]?.row).toMatchObject({ deleteFailures: 4, retryAt: NOW + 8 * 60_000 });
    const capped = world({
      failedSeconds: 300,
      open: [openRow({ deleteFailures: 9, retryAt: NOW })],
      outcome: { kind: "failed", status: 503, why: "HTTP 503" },
    });
    await lookAtFailed(listing([failedObj()]), capped.deps);
    expect(capped.stored[0]?.row).toMatchObject({ deleteFailures: 10, retryAt: NOW + 3_600_000 });
    // A row that never backed off says nothing of one.
    const fresh = world({ failedSeconds: 300 });
    await lookAtFailed(listing([failedObj()]), fresh.deps);
    expect(fresh.stored[0]?.row).not.toHaveProperty("deleteFailures");
    for (const outcome of [{ kind: "deleted" as const }, { kind: "gone" as const }]) {
      const through = world({ failedSeconds: 300, open: [openRow({ deleteFailures: 2, retryAt: NOW - 1 })], outcome });
      await lookAtFailed(listing([failedObj()]), through.deps);
      expect(through.stored[0]?.row.deleteFailures).toBe(0);
      expect(through.stored[0]?.row).not.toHaveProperty("retryAt");
    }
  });

  it("cap-many Failed runners whose DELETE keeps failing do not hold back ordinary reaping (an hour of sweeps, an alarm 30 s after each)", async () => {
    const CAP = 5;
    let rows = new Map<string, FailedRunner>();
    let times: number[] = [];
    const attempts = new Map<string, number>();
    const objects = Array.from({ length: CAP }, (_, i) => failedObj({ name: `f-${i}`, uid: `u-${i}` }));
    let heldBack = 0;
    for (let minute = 0; minute < 60; minute++) {
      const now = NOW + minute * 60_000;
      const port: FailedPort = {
        open: () => [...rows.values()].map((r) => structuredClone(r)),
        store: (row) => void rows.set(row.uid, structuredClone(row)),
        deletedSince: () => new Map(),
      };
      const cluster = {
        deleteRunner: async (r: Pick<ClusterRunner, "uid">) => {
          attempts.set(r.uid, (attempts.get(r.uid) ?? 0) + 1);
          return { kind: "failed", status: 500, why: "HTTP 500" } as const;
        },
      } as unknown as Cluster;
      const ledger = {
        failed: port,
        paused: () => false,
        deletions: (at: number) => new SlidingWindow(times, CAP, at),
        saveDeletions: (w: SlidingWindow) => (times = w.toJSON()),
      } as unknown as LedgerPort;
      const deps = {
        ledger,
        watched: [{ name: "default", cluster, namespaces: ["arc"] }],
        settings: { failedSeconds: 300, dryRun: false },
        now,
        clock: () => now + 7,
      } as unknown as PassDeps;
      await lookAtFailed({ ...listing(objects, { absentAsOf: now }) }, deps);
      rows = new Map([...rows].filter(([, r]) => r.state === "failed"));
      // The alarm 30 s later wants to delete one ordinary runner: the window must have room.
      if (new SlidingWindow(times, CAP, now + 30_000).left(now + 30_000) === 0) heldBack++;
    }
    // Tried at minutes 0, 1, 3, 7, 15 and 31 (back-off 1, 2, 4, 8, 16, 32 minutes), not 60 times.
    expect([...attempts.values()]).toEqual(Array(CAP).fill(6));
    expect(heldBack).toBe(6);
  });
});
