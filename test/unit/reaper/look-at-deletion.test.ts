// One look at a deletion we made (look-at-deletion.ts) on plain Node: read in
// its own place, GitHub asked once when first found stuck, the finish (with
// REAPER_FINISH_STUCK) asked instead, and what the ledger is told.
import { describe, expect, it } from "vitest";
import type { FinishOutcome } from "../../../src/cluster/finish-patch.ts";
import type { DeletionWatch } from "../../../src/model/runner.ts";
import type { Lookup } from "../../../src/model/view.ts";
import { lookAtDeletion } from "../../../src/reaper/look-at-deletion.ts";
import type { PassDeps } from "../../../src/reaper/reconcile-all.ts";
import { FakeCluster, FakeLedger, object, policy } from "../support/fakes.ts";
import { stubGithub, type StubAnswers } from "../support/stub-github.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const ARC = ["ephemeralrunner.actions.github.com/finalizer"];

const watch = (over: Partial<DeletionWatch> = {}): DeletionWatch => ({
  rowId: 1,
  name: "r-1",
  cluster: "default",
  namespace: "arc-a",
  uid: "u-1",
  repo: "octo/repo",
  jobId: 70,
  installationId: 3,
  deletedAt: NOW - 1_000_000,
  dueAt: NOW,
  reason: "job 70 is over",
  ...over,
});

function world(o: { github?: StubAnswers | Error; finishStuck?: boolean; finish?: FinishOutcome; namespaces?: string[] } = {}) {
  const clock = () => NOW;
  const ledger = new FakeLedger(policy, 10, clock);
  const cluster = new FakeCluster(clock);
  const finishes: string[][] = [];
  Object.assign(cluster, {
    finishDeletion: async (_r: unknown, f: readonly string[]) => {
      finishes.push([...f]);
      return o.finish ?? { kind: "finished" };
    },
  });
  const gh = o.github instanceof Error ? undefined : stubGithub(o.github ?? {});
  const deps = {
    ledger,
    watched: [{ name: "default", cluster, namespaces: o.namespaces ?? ["arc-a", "arc-b"] }],
    github: o.github instanceof Error ? o.github : gh!.github,
    settings: { stuckSeconds: 900, finishStuck: o.finishStuck ?? false },
    now: NOW,
    clock,
  } as unknown as PassDeps;
  return { deps, ledger, cluster, calls: gh?.calls ?? [], finishes };
}

const stillThere = (w: ReturnType<typeof world>, over: Parameters<typeof object>[0] extends infer T ? Partial<T> : never = {}) =>
  w.cluster.put({
    ...object({ name: "r-1", namespace: "arc-a", uid: "u-1", createdAt: NOW - 2_000_000, ...over }),
    finalizers: ARC,
    deletionTimestamp: "2026-12-01T11:43:20Z",
  });

describe("lookAtDeletion", () => {
  it("gone (a fresh read in its own place): went; read by name in its namespace only", async () => {
    const w = world();
    await lookAtDeletion(watch(), w.deps, "alarm");
    expect(w.cluster.reads).toBe(1);
    expect(w.ledger.checks).toEqual([{ w: watch(), check: { kind: "went", code: "Went", reason: "went 1000s after our delete" }, now: NOW, by: "alarm" }]);
    expect(w.calls).toEqual([]);
  });

  it("still there, first found stuck: GitHub's word on its job in the reason, read with the row's installation", async () => {
    const w = world({ github: { job: { status: "completed", conclusion: "success" } } });
    stillThere(w);
    await lookAtDeletion(watch(), w.deps, "sweep");
    expect(w.calls).toEqual(["job 70 @3"]);
    expect(w.ledger.checks[0]?.check).toEqual({
      kind: "stuck",
      code: "Stuck",
      reason:
        "stuck: deleted 1000s ago and still in arc-a (Terminating since 2026-12-01T11:43:20Z), held by ARC's finalizer; GitHub says job 70 is completed (success); never deleted again",
      dueAt: NOW + 900_000,
      newly: true,
    });
    expect(w.ledger.checks[0]?.by).toBe("sweep");
  });

  it("no installation on the row: the repository's is looked up; a job without conclusion says none", async () => {
    const w = world({ github: { installation: 8, job: { status: "in_progress", conclusion: null } } });
    stillThere(w);
    await lookAtDeletion(watch({ installationId: undefined }), w.deps, "sweep");
    expect(w.calls).toEqual(["installationFor octo/repo", "job 70 @8"]);
    expect(w.ledger.checks[0]?.check.reason).toContain("; GitHub says job 70 is in_progress; never deleted again");
  });

  it("a row whose job is unknown (0, learned from its completed run): its run is asked about, never job 0", async () => {
    const w = world({ github: { run: { status: "completed", conclusion: "cancelled" } } });
    stillThere(w);
    await lookAtDeletion(watch({ jobId: 0, runId: 42 }), w.deps, "sweep");
    expect(w.calls).toEqual(["run 42"]);
    expect(w.ledger.checks[0]?.check.reason).toContain("; GitHub says run 42 is completed (cancelled); never deleted again");
  });

  it("GitHub could not be read: said so", async () => {
    const w = world({ github: { throws: new Error("HTTP 502") } });
    stillThere(w);
    await lookAtDeletion(watch(), w.deps, "sweep");
    expect(w.ledger.checks[0]?.check.reason).toContain("; GitHub says nothing: it could not be read (HTTP 502); never deleted again");
  });

  it("already found stuck, or no GitHub: not asked", async () => {
    const w = world();
    stillThere(w);
    await lookAtDeletion(watch({ stuckAt: NOW - 60_000 }), w.deps, "sweep");
    expect(w.calls).toEqual([]);
    expect(w.ledger.checks[0]?.check).toMatchObject({ kind: "stuck", code: "Stuck", newly: false });
    const none = world({ github: new Error("no key") });
    stillThere(none);
    await lookAtDeletion(watch(), none.deps, "sweep");
    expect(none.ledger.checks[0]?.check.reason).not.toContain("GitHub says");
  });

  it("another object of the name (a new uid) in its place: went", async () => {
    const w = world();
    stillThere(w, { uid: "u-2" });
    await lookAtDeletion(watch(), w.deps, "alarm");
    expect(w.ledger.checks[0]?.check.kind).toBe("went");
    expect(w.calls).toEqual([]);
  });

  it("its own place unreadable: cannot tell (its one place read: the error names no place)", async () => {
    const w = world();
    w.cluster.unreadable.add("arc-a");
    await lookAtDeletion(watch(), w.deps, "alarm");
    expect(w.ledger.checks[0]?.check).toEqual({
      kind: "unknown",
      code: "CannotTell",
      reason: "cannot tell whether it went: namespace arc-a cannot be read",
      dueAt: NOW + 900_000,
    });
  });

  it("a cluster not watched: cannot tell", async () => {
    const w = world();
    await lookAtDeletion(watch({ cluster: "east" }), w.deps, "sweep");
    expect(w.ledger.checks[0]?.check).toEqual({
      kind: "unknown",
      code: "CannotTell",
      reason: "cannot tell whether it went: no cluster named east is watched",
      dueAt: NOW + 900_000,
    });
    expect(w.cluster.reads).toBe(0);
  });

  it("a look the sweep had (its lists): used instead of a read; absent only when newer than our delete", async () => {
    const w = world();
    const lookup = (asOf: number, found: Lookup["found"] = []): Lookup => ({ found, unreadable: [], absentAsOf: () => asOf });
    await lookAtDeletion(watch(), w.deps, "sweep", lookup(NOW - 1_000_000));
    await lookAtDeletion(watch(), w.deps, "sweep", lookup(NOW - 999_999));
    const elsewhere = { ...object({ name: "r-1", namespace: "arc-b", uid: "u-1", createdAt: 0 }) };
    await lookAtDeletion(watch(), w.deps, "sweep", lookup(NOW - 999_999, [elsewhere]));
    expect(w.cluster.reads).toBe(0);
    expect(w.ledger.checks.map((c) => c.check)).toEqual([
      { kind: "unknown", code: "CannotTell", reason: "cannot tell whether it went: the view is not newer than our delete", dueAt: NOW + 900_000 },
      { kind: "went", code: "Went", reason: "went 1000s after our delete" },
      { kind: "went", code: "Went", reason: "went 1000s after our delete" },
    ]);
  });
});

describe("lookAtDeletion with REAPER_FINISH_STUCK", () => {
  it("first found stuck and finished: stored stuck first, then went, with the time it was found stuck; GitHub read once, by the finish", async () => {
    const w = world({ finishStuck: true, github: { job: { status: "completed", conclusion: "success" } } });
    stillThere(w);
    await lookAtDeletion(watch(), w.deps, "sweep");
    expect(w.calls).toEqual(["job 70 @3"]);
    expect(w.finishes).toEqual([ARC]);
    expect(w.ledger.checks.map((c) => [c.w.stuckAt, c.check.kind])).toEqual([
      [undefined, "stuck"],
      [NOW, "went"],
    ]);
    expect(w.ledger.checks[0]?.check.reason).not.toContain("GitHub says");
    expect(w.ledger.checks[1]?.check).toMatchObject({ kind: "went", code: "Finished" });
  });

  it("already stuck and finished: one store, went, its stuck time kept", async () => {
    const w = world({ finishStuck: true, github: { job: { status: "completed", conclusion: "success" } } });
    stillThere(w);
    await lookAtDeletion(watch({ stuckAt: NOW - 5000 }), w.deps, "alarm");
    expect(w.ledger.checks.map((c) => [c.w.stuckAt, c.check.kind, c.by])).toEqual([[NOW - 5000, "went", "alarm"]]);
  });

  it("GitHub says it runs: stays stuck, not finished, one store", async () => {
    const w = world({ finishStuck: true, github: { job: { status: "in_progress", conclusion: null } } });
    stillThere(w);
    await lookAtDeletion(watch(), w.deps, "sweep");
    expect(w.finishes).toEqual([]);
    expect(w.ledger.checks).toHaveLength(1);
    expect(w.ledger.checks[0]?.check).toMatchObject({
      kind: "stuck",
      code: "StillRunning",
      reason: expect.stringContaining("; not finished: GitHub says job 70 is in_progress"),
    });
  });

  it("not stuck yet (gone): no finish, one store", async () => {
    const w = world({ finishStuck: true });
    await lookAtDeletion(watch(), w.deps, "sweep");
    expect(w.finishes).toEqual([]);
    expect(w.ledger.checks.map((c) => c.check.kind)).toEqual(["went"]);
  });

  it("still within REAPER_STUCK_SECONDS is stuck only by the check's own rule: finished when GitHub says completed", async () => {
    const w = world({ finishStuck: true, github: { job: { status: "completed", conclusion: "failure" } }, finish: { kind: "gone" } });
    stillThere(w);
    await lookAtDeletion(watch(), w.deps, "sweep");
    expect(w.ledger.checks.map((c) => c.check)).toEqual([
      expect.objectContaining({ kind: "stuck" }),
      { kind: "went", code: "GoneWhenFinishing", reason: "went 1000s after our delete (404 when finishing it)" },
    ]);
  });
});
