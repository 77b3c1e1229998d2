// Reconcile and the pass on plain Node, against the in-memory fakes: the next
// look, the per-row back-off of failed asks, the budget order, the real-clock
// deletion window.
import { describe, expect, it } from "vitest";
import { backoffMs } from "../../../src/model/next-look.ts";
import { runPass } from "../../../src/reaper/run-pass.ts";
import { FakeCluster, FakeGithub, FakeLedger, object, passDeps, policy, REPO } from "../support/fakes.ts";

const T0 = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

function world(o: { cap?: number; budget?: number } = {}) {
  let now = T0;
  const clock = () => now;
  const ledger = new FakeLedger(policy, o.cap ?? 10, clock);
  const cluster = new FakeCluster(clock);
  const github = new FakeGithub(clock);
  const githubTimes: number[] = [];
  const pass = async (kind: "alarm" | "sweep") => {
    const deps = passDeps({ ledger, cluster, github, namespaces: ["arc-a", "arc-b"], now, clock, cap: o.cap ?? 10, budget: o.budget ?? 100, githubTimes });
    const report = await runPass(kind, deps);
    for (let i = 0; i < deps.budget.used; i++) githubTimes.push(now);
    return report;
  };
  return { ledger, cluster, github, pass, at: (t: number) => (now = t), now: () => now };
}

describe("the next look and the back-off (plain Node)", () => {
  it("backoffMs: 1 minute doubling to 1 hour", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(backoffMs)).toEqual([60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000]);
  });

  it("a job past the bound that GitHub answers 404: asked at 0, 1, 3, 7, 15 min... by sweeps every minute; the count is kept per row", async () => {
    const w = world();
    w.cluster.put(object({ name: "r-1", namespace: "arc-a", uid: "u-1", runId: 7, createdAt: T0 - 600_000_000 }));
    w.ledger.record(
      [{ type: "job-started", runner: "r-1", repo: REPO, runId: 7, runAttempt: 1, jobId: 70, startedAt: iso(T0 - 500_000_000), source: "d1" }],
      T0,
    );
    const askedAt: number[] = [];
    for (let m = 0; m <= 30; m++) {
      w.at(T0 + m * 60_000);
      const before = w.github.calls.length;
      await w.pass("sweep");
      if (w.github.calls.length > before) askedAt.push(m);
    }
    expect(askedAt).toEqual([0, 1, 3, 7, 15]);
    const row = w.ledger.openRunners()[0]!;
    expect(row).toMatchObject({ failures: 5, dueAt: T0 + 15 * 60_000 + 960_000 });
    expect(w.cluster.deleted).toEqual([]);
  });

  it("rows whose last ask failed come after the others in the budget", async () => {
    const w = world({ budget: 1 });
    for (const [i, name] of ["old", "new"].entries()) {
      w.cluster.put(object({ name, namespace: "arc-a", uid: `u-${name}`, runId: 7 + i, createdAt: T0 - 600_000_000 }));
      w.ledger.record(
        [
          {
            type: "job-started",
            runner: name,
            repo: REPO,
            runId: 7 + i,
            runAttempt: 1,
            jobId: 70 + i,
            startedAt: iso(T0 - (i === 0 ? 500_000_000 : 450_000_000)),
            source: "d",
          },
        ],
        T0,
      );
    }
    w.github.jobs.set(71, { id: 71, runId: 8, runner: "new", status: "in_progress", startedAt: iso(T0 - 450_000_000), completedAt: null });
    await w.pass("sweep"); // the oldest is asked first and fails (404)
    expect(w.github.calls.map((c) => c.what)).toEqual(["job 70"]);
    w.at(T0 + 61_000);
    await w.pass("sweep"); // its back-off is over, but it failed last time: the other goes first
    expect(w.github.calls.map((c) => c.what)).toEqual(["job 70", "job 71"]);
  });

  it("the deletion window counts the clock at the delete, not the pass's now", async () => {
    const w = world({ cap: 1 });
    for (const n of ["a", "b"]) {
      w.cluster.put(object({ name: n, namespace: "arc-a", uid: `u-${n}`, runId: n === "a" ? 1 : 2, createdAt: T0 - 7_200_000 }));
      w.ledger.record(
        [
          {
            type: "job-completed",
            runner: n,
            repo: REPO,
            runId: n === "a" ? 1 : 2,
            runAttempt: 1,
            jobId: n === "a" ? 10 : 20,
            startedAt: iso(T0 - 3_600_000),
            completedAt: iso(T0 - 1_800_000),
            conclusion: "success",
            source: "d",
          },
        ],
        T0,
      );
    }
    const report = await w.pass("sweep");
    expect(report.deleted).toBe(1);
    expect(w.ledger.deletionTimes).toEqual([T0]);
    const held = w.ledger.openRunners()[0]!;
    expect(held).toMatchObject({ heldFor: "cap", dueAt: T0 + 60_000 });
  });
});
