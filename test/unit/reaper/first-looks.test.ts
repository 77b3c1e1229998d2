// A sweep gives at most so many runners their first look (issue 25: 50,000
// runners arriving at once are judged over several sweeps, none past the
// Durable Object's CPU limit); the rest are kept, still accounted for, and
// judged by the next sweeps, oldest first.
import { describe, expect, it } from "vitest";
import { gatherListed } from "../../../src/reaper/gather-listed.ts";
import { reconcileAll } from "../../../src/reaper/reconcile-all.ts";
import { FakeCluster, FakeGithub, FakeLedger, object, passDeps, policy, REPO } from "../support/fakes.ts";

const T0 = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

function world(runners: number, unseen: number) {
  const clock = () => T0;
  const ledger = new FakeLedger(policy, 10, clock);
  const cluster = new FakeCluster(clock);
  const github = new FakeGithub(clock);
  for (let i = 0; i < runners; i++) {
    cluster.put(object({ name: `r-${i}`, namespace: "arc-a", uid: `u-${i}`, runId: 100 + i, createdAt: T0 - 60_000 }));
    github.jobs.set(1000 + i, { id: 1000 + i, runId: 100 + i, runner: `r-${i}`, status: "in_progress", startedAt: iso(T0 - 50_000 + i), completedAt: null });
    ledger.record(
      [{ type: "job-started", runner: `r-${i}`, repo: REPO, runId: 100 + i, runAttempt: 1, jobId: 1000 + i, startedAt: iso(T0 - 50_000 + i), source: `d${i}` }],
      T0 - 50_000,
    );
  }
  // Busy runners no webhook told of (unseen): first seen by the sweep.
  for (let i = 0; i < unseen; i++) cluster.put(object({ name: `x-${i}`, namespace: "arc-b", uid: `ux-${i}`, runId: 900 + i, createdAt: T0 - 60_000 }));
  const deps = () => passDeps({ ledger, cluster, github, namespaces: ["arc-a", "arc-b"], now: T0, clock, cap: 10, budget: 100, githubTimes: [] });
  return { ledger, cluster, deps };
}

describe("first looks per sweep (plain Node)", () => {
  it("judges at most the share, oldest rows first; the rest wait, and no runner of theirs is taken for an unseen one", async () => {
    const w = world(5, 2);
    const first = await gatherListed(w.deps(), 3);
    expect(first.items.map((i) => i.name)).toEqual(["r-0", "r-1", "r-2"]);
    expect(first.deferred).toBe(4);
    await reconcileAll(first.items, w.deps(), "sweep");
    expect(
      w.ledger
        .openRunners()
        .filter((r) => r.verdictKey !== undefined)
        .map((r) => r.runner),
    ).toEqual(["r-0", "r-1", "r-2"]);

    // The next sweep: the judged rows (no first look any more) and the next three first looks.
    const second = await gatherListed(w.deps(), 3);
    expect(second.items.map((i) => i.name).sort()).toEqual(["r-0", "r-1", "r-2", "r-3", "r-4", "x-0"]);
    expect(second.deferred).toBe(1);
    await reconcileAll(second.items, w.deps(), "sweep");

    const third = await gatherListed(w.deps(), 3);
    expect(third.deferred).toBe(0);
    expect(third.items.map((i) => i.name).sort()).toEqual(["r-0", "r-1", "r-2", "r-3", "r-4", "x-0", "x-1"]);
    expect(w.cluster.deleted).toEqual([]);
  });

  it("without a share to spare, nothing is judged for the first time and nothing is deleted", async () => {
    const w = world(2, 1);
    const g = await gatherListed(w.deps(), 0);
    expect(g.items).toEqual([]);
    expect(g.deferred).toBe(3);
  });
});
