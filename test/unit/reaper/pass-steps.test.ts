// The pass's steps on plain Node (gather-due.ts, gather-listed.ts,
// reconcile-all.ts, run-pass.ts): what each gathers, the order GitHub is asked
// in, what is stored and reported.
import { describe, expect, it } from "vitest";
import type { Github } from "../../../src/github/github-client.ts";
import type { Fact } from "../../../src/model/facts.ts";
import type { DeletionWatch, RunnerRecord, UnseenRunner } from "../../../src/model/runner.ts";
import { gatherDue } from "../../../src/reaper/gather-due.ts";
import { gatherListed } from "../../../src/reaper/gather-listed.ts";
import type { FailedPort } from "../../../src/reaper/ports.ts";
import type { Result } from "../../../src/reaper/reconcile.ts";
import { policyOf, reconcileAll, type PassDeps } from "../../../src/reaper/reconcile-all.ts";
import { runPass } from "../../../src/reaper/run-pass.ts";
import { FakeCluster, FakeGithub, FakeLedger, object, passDeps, policy, REPO } from "../support/fakes.ts";

const T0 = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

function world(o: { cap?: number; budget?: number; githubTimes?: number[] } = {}) {
  const clock = () => T0;
  const ledger = new FakeLedger(policy, o.cap ?? 10, clock);
  const cluster = new FakeCluster(clock);
  const github = new FakeGithub(clock);
  const deps = () =>
    passDeps({
      ledger,
      cluster,
      github,
      namespaces: ["arc-a", "arc-b"],
      now: T0,
      clock,
      cap: o.cap ?? 10,
      budget: o.budget ?? 100,
      githubTimes: o.githubTimes ?? [],
    });
  return { ledger, cluster, github, deps };
}

/** Started `startedAgo` ms ago. */
const started = (runner: string, runId: number, jobId: number, startedAgo: number): Fact => ({
  type: "job-started",
  runner,
  repo: REPO,
  runId,
  runAttempt: 1,
  jobId,
  startedAt: iso(T0 - startedAgo),
  source: "d",
});
/** Completed `ago` seconds ago. */
const completed = (runner: string, runId: number, jobId: number, ago: number): Fact => ({
  type: "job-completed",
  runner,
  repo: REPO,
  runId,
  runAttempt: 1,
  jobId,
  startedAt: iso(T0 - ago * 1000 - 60_000),
  completedAt: iso(T0 - ago * 1000),
  conclusion: "success",
  source: "d",
});
const unseenRow = (name: string, over: Partial<UnseenRunner> = {}): UnseenRunner => ({
  name,
  uid: `u-${name}`,
  cluster: "default",
  namespace: "arc-a",
  runId: 9,
  repo: REPO,
  firstSeen: T0 - 60_000,
  dueAt: T0,
  reason: null,
  ...over,
});
const deletionWatch = (name: string, over: Partial<DeletionWatch> = {}): DeletionWatch => ({
  rowId: 1,
  name,
  cluster: "default",
  namespace: "arc-a",
  uid: `u-${name}`,
  repo: REPO,
  jobId: 70,
  installationId: 1,
  deletedAt: T0 - 30_000,
  dueAt: T0 + 600_000,
  reason: "over",
  ...over,
});

describe("gatherDue (the alarm)", () => {
  it("due rows and due unseen rows, each read by name; not-due rows left alone; the clusters' own error kind", async () => {
    const w = world();
    w.ledger.record([completed("due", 1, 10, 900), started("later", 2, 20, 60_000)], T0);
    w.ledger.unseenRows = [unseenRow("u-due"), unseenRow("u-later", { dueAt: T0 + 1000 })];
    w.cluster.put(object({ name: "due", namespace: "arc-a", uid: "u-due", runId: 1, createdAt: T0 - 3_600_000 }));
    expect(w.ledger.dueRunners(T0, 100).map((r) => r.runner)).toEqual(["due"]);
    const deps = w.deps();
    (deps.watched[0]!.cluster as { errorKind?: string }).errorKind = "agent";
    const g = await gatherDue(deps);
    expect(g.items.map((i) => [i.name, i.view.kind, i.viewErrorKind, i.record ? "row" : "unseen"])).toEqual([
      ["due", "found", "agent", "row"],
      ["u-due", "missing", "agent", "unseen"],
    ]);
    // Two places for each of the two names.
    expect(w.cluster.reads).toBe(4);
  });

  it("a cluster without a kind of its own counts as the cluster; the due deletions are looked at by the alarm", async () => {
    const w = world();
    w.ledger.record([completed("due", 1, 10, 900)], T0);
    w.ledger.watches = [deletionWatch("d-due", { dueAt: T0 }), deletionWatch("d-later")];
    const g = await gatherDue(w.deps());
    expect(g.items[0]?.viewErrorKind).toBe("cluster");
    expect(await g.lookAtDeletions()).toBe(0);
    expect(w.ledger.checks.map((c) => [c.w.name, c.check.kind, c.by])).toEqual([["d-due", "went", "alarm"]]);
  });
});

describe("gatherListed (the sweep)", () => {
  it("every open row, every busy runner no row accounts for (new or remembered), and unseen rows gone from the lists", async () => {
    const w = world();
    w.ledger.record([started("tracked", 1, 10, 60_000)], T0);
    w.ledger.unseenRows = [unseenRow("remembered", { firstSeen: T0 - 120_000, reason: "waiting" }), unseenRow("left")];
    w.cluster.put(object({ name: "tracked", namespace: "arc-a", uid: "u-tracked", runId: 1, createdAt: T0 - 3_600_000 }));
    w.cluster.put(object({ name: "remembered", namespace: "arc-a", uid: "u-remembered", runId: 9, createdAt: T0 - 3_600_000 }));
    w.cluster.put(object({ name: "new-busy", namespace: "arc-b", uid: "u-new", runId: 5, createdAt: T0 - 3_600_000 }));
    w.cluster.put(object({ name: "idle", namespace: "arc-a", uid: "u-idle", createdAt: T0 - 3_600_000 }));
    w.cluster.put({ ...object({ name: "deleting", namespace: "arc-a", uid: "u-del", runId: 6, createdAt: T0 - 3_600_000 }), deletionTimestamp: iso(T0) });
    const g = await gatherListed(w.deps());
    const byName = new Map(g.items.map((i) => [i.name, i]));
    expect([...byName.keys()].sort()).toEqual(["left", "new-busy", "remembered", "tracked"]);
    expect(byName.get("tracked")).toMatchObject({ record: { jobId: 10 }, view: { kind: "found" }, viewErrorKind: "cluster" });
    expect(byName.get("remembered")?.unseen).toMatchObject({ firstSeen: T0 - 120_000, reason: "waiting" });
    expect(byName.get("new-busy")?.unseen).toEqual({
      name: "new-busy",
      uid: "u-new",
      cluster: "default",
      namespace: "arc-b",
      runId: 5,
      repo: REPO,
      firstSeen: T0,
      dueAt: null,
      reason: null,
    });
    expect(byName.get("new-busy")?.viewErrorKind).toBeUndefined();
    expect(byName.get("left")).toMatchObject({ unseen: { name: "left" }, view: { kind: "missing" }, viewErrorKind: "cluster" });
    expect(w.cluster.reads).toBe(0);
  });

  it("a replaced runner: its facts and the new object of its name are both looked at", async () => {
    const w = world();
    w.ledger.record([started("r", 1, 10, 600_000)], T0);
    w.cluster.put(object({ name: "r", namespace: "arc-a", uid: "u-new", runId: 2, createdAt: T0 - 60_000 }));
    const g = await gatherListed(w.deps());
    expect(g.items.map((i) => [i.name, i.record ? "row" : "unseen", i.view.kind])).toEqual([
      ["r", "row", "found"],
      ["r", "unseen", "found"],
    ]);
  });

  it("a busy runner without a repository is remembered with none", async () => {
    const w = world();
    w.cluster.put({ ...object({ name: "x", namespace: "arc-a", uid: "u-x", runId: 3, createdAt: T0 }), jobRepositoryName: undefined });
    const g = await gatherListed(w.deps());
    expect(g.items[0]?.unseen).toMatchObject({ repo: null, runId: 3 });
  });

  it("our deletions: gone from a readable list or due are looked at on the lists (no read); others wait; Failed runners' deletes are counted", async () => {
    const w = world();
    w.cluster.put(object({ name: "still", namespace: "arc-a", uid: "u-still", createdAt: T0 - 3_600_000 }));
    w.cluster.put(object({ name: "due", namespace: "arc-a", uid: "u-due", createdAt: T0 - 3_600_000 }));
    w.cluster.put({
      ...object({ name: "failed", namespace: "arc-a", uid: "u-failed", createdAt: T0 - 3_600_000 }),
      phase: "Failed",
      failedAt: iso(T0 - 3_600_000),
    });
    w.ledger.watches = [deletionWatch("gone"), deletionWatch("still"), deletionWatch("due", { dueAt: T0 })];
    const stored: string[] = [];
    const failed: FailedPort = { open: () => [], store: (row, change) => stored.push(`${row.name} ${JSON.stringify(change)}`), deletedSince: () => new Map() };
    w.ledger.failed = failed;
    const deps = w.deps();
    deps.settings.failedSeconds = 60;
    const g = await gatherListed(deps);
    expect(await g.lookAtDeletions()).toBe(1);
    expect(stored).toEqual(['failed {"deleted":true,"logged":true}']);
    expect(w.cluster.deleted.map((d) => d.runner.uid)).toEqual(["u-failed"]);
    expect(w.ledger.checks.map((c) => [c.w.name, c.check.kind, c.by])).toEqual([
      ["gone", "went", "sweep"],
      ["due", "stuck", "sweep"],
    ]);
    expect(w.cluster.reads).toBe(0);
  });

  it("a deletion whose place could not be listed waits for its due time", async () => {
    const w = world();
    w.cluster.unreadable.add("arc-a");
    w.ledger.watches = [deletionWatch("gone")];
    const g = await gatherListed(w.deps());
    await g.lookAtDeletions();
    expect(w.ledger.checks).toEqual([]);
  });
});

describe("reconcileAll", () => {
  it("nothing to reconcile: nothing stored, the window untouched", async () => {
    const w = world();
    let stores = 0;
    w.ledger.store = () => {
      stores += 1;
      return { logged: 0 };
    };
    expect(await reconcileAll([], w.deps(), "sweep")).toEqual({ results: [], deleted: 0 });
    expect(stores).toBe(0);
  });

  it("asks GitHub oldest first, rows whose ask failed and repositories without an installation last; stores what came of each", async () => {
    const w = world();
    const rows: RunnerRecord[] = [
      { runner: "young", jobId: 1, startedAt: iso(T0 - 500_000_000) },
      { runner: "old", jobId: 2, startedAt: iso(T0 - 600_000_000) },
      { runner: "failed-before", jobId: 3, startedAt: iso(T0 - 700_000_000), failures: 1, dueAt: T0 - 1 },
      { runner: "no-install", jobId: 4, startedAt: iso(T0 - 800_000_000), repo: "other/repo" },
      { runner: "middle", jobId: 5, startedAt: iso(T0 - 550_000_000) },
    ].map((r) => ({ repo: REPO, runId: r.jobId, runAttempt: 1, state: "running", reason: "", dueAt: null, story: [], ...r }) as RunnerRecord);
    const deps = w.deps();
    const gh = deps.github as Github;
    (gh.cache.memory as { installationFailedUntil: (repo: string) => number }).installationFailedUntil = (repo) => (repo === "other/repo" ? T0 + 1 : 0);
    let storedBy: unknown[] = [];
    w.ledger.store = (results, by, now) => {
      storedBy = [results.length, by, now];
      return { logged: 0 };
    };
    await reconcileAll(
      rows.map((record) => ({ name: record.runner, record, view: { kind: "missing" } })),
      deps,
      "alarm",
    );
    expect(storedBy).toEqual([5, "alarm", T0]);
    // Missing objects close without asks: order shows in GitHub calls only when asked; use found views instead.
    const seen: string[] = [];
    const found = rows.map((record) => ({
      name: record.runner,
      record,
      view: {
        kind: "found" as const,
        runner: object({ name: record.runner, namespace: "arc-a", uid: `u-${record.runner}`, runId: record.runId, createdAt: T0 - 900_000_000 }),
      },
    }));
    w.ledger.store = (results: readonly Result[]) => {
      seen.push(...results.map((r) => r.name));
      return { logged: 0 };
    };
    await reconcileAll(found, deps, "sweep");
    expect(seen).toEqual(["old", "middle", "young", "no-install", "failed-before"]);
    expect(w.github.calls.map((c) => c.what)).toEqual(["job 2", "job 5", "job 1", "job 4", "job 3"]);
  });

  it("busy runners without rows are ordered by their creation", async () => {
    const w = world();
    const items = ["b", "a", "c"].map((n, i) => ({
      name: n,
      unseen: unseenRow(n, { firstSeen: T0 - 600_000 }),
      view: { kind: "found" as const, runner: object({ name: n, namespace: "arc-a", uid: `u-${n}`, runId: 9, createdAt: T0 - [2, 3, 1][i]! * 1000 }) },
    }));
    const { results } = await reconcileAll(items, w.deps(), "sweep");
    expect(results.map((r) => r.name)).toEqual(["a", "b", "c"]);
  });

  it("deletes through the runner's own cluster, counts what it deleted, saves the window; an unwatched cluster's runner is never deleted", async () => {
    const w = world({ cap: 5 });
    w.ledger.record([completed("r", 1, 10, 900), completed("elsewhere", 2, 20, 900)], T0);
    const here = object({ name: "r", namespace: "arc-a", uid: "u-r", runId: 1, createdAt: T0 - 3_600_000 });
    w.cluster.put(here);
    const rows = w.ledger.openRunners();
    const away = { ...object({ name: "elsewhere", namespace: "arc-a", uid: "u-e", runId: 2, createdAt: T0 - 3_600_000 }), cluster: "east" };
    const { results, deleted } = await reconcileAll(
      [
        { name: "r", record: rows[0], view: { kind: "found", runner: here } },
        { name: "elsewhere", record: rows[1], view: { kind: "found", runner: away } },
      ],
      w.deps(),
      "sweep",
    );
    expect(deleted).toBe(1);
    expect(w.cluster.deleted.map((d) => d.runner.uid)).toEqual(["u-r"]);
    expect(results[1]).toMatchObject({ errorKind: "cluster", verdict: { code: "DeleteFailed", verdict: "keep", error: true } });
    expect(w.ledger.deletionTimes).toEqual([T0, T0]);
  });

  it("the budget spent: held until the GitHub window frees, counting this pass's calls", async () => {
    const w = world({ budget: 2, githubTimes: [T0 - 50_000] });
    w.ledger.record([started("a", 1, 10, 500_000_000), started("b", 2, 20, 450_000_000)], T0);
    const rows = w.ledger.openRunners();
    const items = rows.map((record) => ({
      name: record.runner,
      record,
      view: {
        kind: "found" as const,
        runner: object({ name: record.runner, namespace: "arc-a", uid: `u-${record.runner}`, runId: record.runId, createdAt: T0 - 600_000_000 }),
      },
    }));
    const { results } = await reconcileAll(items, w.deps(), "sweep");
    expect(w.github.calls.map((c) => c.what)).toEqual(["job 10"]);
    // One call 50 s ago and one now fill the window of 2: free when the older leaves it.
    expect(results[1]).toMatchObject({ heldFor: "budget", next: { at: T0 + 10_000 } });
  });

  it("policyOf: the judge's policy from the settings", () => {
    expect(policyOf({ graceSeconds: 1, maxJobSeconds: 2, recheckSeconds: 3, dryRun: true } as never)).toEqual({
      graceSeconds: 1,
      maxJobSeconds: 2,
      recheckSeconds: 3,
    });
  });
});

describe("runPass", () => {
  function report(w: ReturnType<typeof world>, kind: "alarm" | "sweep", tweak: (d: PassDeps) => void = () => {}) {
    const d = w.deps();
    tweak(d);
    return runPass(kind, d);
  }

  it("the sweep's report: what it checked, deleted, kept, waited on, closed and held; errors by kind", async () => {
    const w = world({ cap: 1 });
    w.ledger.record(
      [
        completed("del-1", 1, 10, 900),
        completed("del-2", 2, 20, 900),
        completed("wait", 3, 30, 10),
        completed("gone", 4, 40, 900),
        started("keep", 5, 50, 60_000),
      ],
      T0,
    );
    for (const [n, run] of [
      ["del-1", 1],
      ["del-2", 2],
      ["wait", 3],
      ["keep", 5],
    ] as const)
      w.cluster.put(object({ name: n, namespace: "arc-a", uid: `u-${n}`, runId: run, createdAt: T0 - 3_600_000 }));
    const r = await report(w, "sweep");
    expect(r).toEqual({
      kind: "sweep",
      checked: 5,
      deleted: 1,
      kept: 2,
      waiting: 1,
      gone: 1,
      heldBack: 1,
      errors: 0,
      errorsByKind: { cluster: 0, github: 0, redelivery: 0 },
      dryRun: false,
      paused: false,
      githubCalls: 0,
      githubCounted: 0,
      redelivery: { listed: 0, asked: [], failed: [] },
    });
  });

  it("an unreadable cluster with nothing tracked is a cluster error, with why, not cluster 0", async () => {
    const w = world();
    w.cluster.unreadable.add("arc-a");
    w.cluster.unreadable.add("arc-b");
    const r = await report(w, "sweep");
    expect(r.checked).toBe(0);
    expect(r.errorsByKind.cluster).toBe(2);
    expect(r.errors).toBe(2);
    expect(r.unreadable).toEqual([expect.stringMatching(/arc-a.*cannot be read/), expect.stringMatching(/arc-b.*cannot be read/)]);
  });

  it("the alarm: no redelivery; a readable cluster's gone rows counted", async () => {
    const w = world();
    w.ledger.record([completed("gone", 4, 40, 900)], T0);
    const r = await report(w, "alarm", () => {
      w.ledger.isPaused = true;
    });
    expect(r).toMatchObject({ kind: "alarm", checked: 1, gone: 1, kept: 0, errors: 0, errorsByKind: { cluster: 0, github: 0 }, paused: true, deleted: 0 });
    expect(r).not.toHaveProperty("redelivery");
  });

  it("no GitHub: the redelivery says why; a redelivery that throws is reported, not thrown", async () => {
    const w = world();
    const noKey = await report(w, "sweep", (d) => (d.github = new Error("no private key")));
    expect(noKey.redelivery).toEqual({ error: "no private key" });
    expect(noKey.errorsByKind.redelivery).toBe(1);
    expect(noKey.errors).toBe(1);
    const boom = await report(w, "sweep", (d) => {
      d.ledger.deliveriesMark = () => {
        throw new Error("mark unreadable");
      };
    });
    expect(boom.redelivery).toEqual({ error: "mark unreadable" });
  });

  it("the redelivery's mark is stored, its failed asks counted, and it never spends more than half the budget", async () => {
    const w = world({ budget: 4 });
    const marks: unknown[] = [];
    const failedIds: string[] = [];
    const r = await report(w, "sweep", (d) => {
      d.settings.redeliveryLookbackSeconds = 3600;
      d.ledger.setDeliveriesMark = (m) => marks.push(m);
      d.ledger.deliveriesMark = () => ({ listedUntil: T0 - 600_000 });
      const gh = d.github as Github & Record<string, unknown>;
      gh.deliveriesSince = async () => {
        d.budget.used++;
        return {
          deliveries: ["g1", "g2", "g3"].map((guid, i) => ({
            id: String(i + 1),
            guid,
            deliveredAt: iso(T0 - 1000),
            redelivery: false,
            statusCode: 500,
            event: "workflow_job",
            action: "completed",
          })),
          complete: true,
        };
      };
      gh.redeliver = async (id: string) => {
        d.budget.used++;
        failedIds.push(id);
        throw new Error(`refused ${id}`);
      };
      d.ledger.redeliveries.received = () => false;
      d.ledger.redeliveries.get = () => undefined;
      d.ledger.redeliveries.pending = () => [];
    });
    // Listing 1 + 1 ask = 2 = half of 4.
    expect(failedIds).toEqual(["1"]);
    expect(r.redelivery).toEqual({ listed: 3, asked: [], failed: ["g1: refused 1"] });
    expect(r.errorsByKind.redelivery).toBe(1);
    expect(r.githubCalls).toBe(2);
    expect(marks).toEqual([{ listedUntil: T0, lastListingAt: T0 }]);
  });

  it("a GitHub error of a row counts as github", async () => {
    const w = world();
    w.ledger.record([started("slow", 1, 10, 500_000_000)], T0);
    w.cluster.put(object({ name: "slow", namespace: "arc-a", uid: "u-slow", runId: 1, createdAt: T0 - 600_000_000 }));
    w.github.failing = true;
    const r = await report(w, "alarm");
    expect(r).toMatchObject({ errors: 1, errorsByKind: { cluster: 0, github: 1 }, githubCalls: 1 });
  });
});
