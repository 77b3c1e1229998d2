// Property-based tests (fast-check, shrinking) over reconcile and the pass, on
// plain Node against in-memory fakes of the ledger, the cluster and GitHub:
// random sequences of webhooks (any order, duplicated, lost), cluster changes
// (idle twins in the other namespace, runners vanishing, ARC removing runners),
// unreadable places, GitHub errors and clock jumps.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Fact } from "../../../src/model/facts.ts";
import type { ClusterRunner } from "../../../src/model/runner.ts";
import { runPass } from "../../../src/reaper/run-pass.ts";
import { FakeCluster, FakeGithub, FakeLedger, type FakeJob, object, passDeps, policy, REPO } from "../support/fakes.ts";

const T0 = Date.parse("2026-12-01T12:00:00Z");
const NS = ["arc-a", "arc-b"] as const;
const iso = (ms: number) => new Date(ms).toISOString();
const say = (line: string) => process.stdout.write(`${line}\n`);

type Command =
  | { t: "started" | "completed"; job: number; dup: boolean }
  | { t: "finish"; job: number }
  | { t: "arcRemove" | "vanish" | "twin" | "lateTwin"; job: number }
  | { t: "githubDown"; on: boolean }
  | { t: "unreadable"; ns: 0 | 1; on: boolean }
  | { t: "jump"; ms: number }
  | { t: "pass"; kind: "alarm" | "sweep" };

const job = fc.integer({ min: 0, max: 3 });
const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constantFrom("started" as const, "completed" as const), job, dup: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("finish" as const), job }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constantFrom("arcRemove" as const, "vanish" as const, "twin" as const, "lateTwin" as const), job }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("githubDown" as const), on: fc.boolean() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("unreadable" as const), ns: fc.constantFrom(0 as const, 1 as const), on: fc.boolean() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("jump" as const), ms: fc.integer({ min: 0, max: 30 * 60_000 }) }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("pass" as const), kind: fc.constantFrom("alarm" as const, "sweep" as const) }), weight: 4 },
);
const scenario = fc.record({
  jobs: fc.array(fc.record({ ns: fc.constantFrom(0 as const, 1 as const), startedAgo: fc.integer({ min: 60, max: 7200 }) }), { minLength: 1, maxLength: 4 }),
  commands: fc.array(command, { minLength: 5, maxLength: 60 }),
  cap: fc.integer({ min: 1, max: 3 }),
  budget: fc.integer({ min: 1, max: 6 }),
});

/** No 60 s of (simulated wall) time holds more than `limit` of these times. */
function maxIn60s(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 60_000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe("the pass, property-based (plain Node)", () => {
  it("never deletes a runner whose job GitHub says runs, nor an idle one; every open row has a next look or a hold; the cap and the budget hold in every 60 s", async () => {
    let cases = 0;
    let deletesSeen = 0;
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(scenario, async ({ jobs, commands, cap, budget }) => {
        cases++;
        let now = T0;
        const clock = () => now;
        const world: FakeJob[] = jobs.map((j, i) => ({
          id: 1000 + i,
          runId: 100 + i,
          runner: `r-${i}`,
          status: "in_progress",
          startedAt: iso(T0 - j.startedAgo * 1000),
          completedAt: null,
        }));
        const violations: string[] = [];
        const ledger = new FakeLedger(policy, cap, clock);
        const cluster = new FakeCluster(clock, (o: ClusterRunner) => {
          const j = world.find((x) => x.runId === o.workflowRunId);
          if (o.workflowRunId === undefined) violations.push(`idle runner ${o.namespace}/${o.name} (${o.uid}) deleted`);
          else if (j?.status !== "completed") violations.push(`runner ${o.name} deleted while GitHub says job ${j?.id} runs`);
        });
        const github = new FakeGithub(clock);
        for (const [i, j] of jobs.entries()) {
          github.jobs.set(world[i]!.id, world[i]!);
          cluster.put(object({ name: `r-${i}`, namespace: NS[j.ns], uid: `busy-${i}`, runId: 100 + i, createdAt: T0 - j.startedAgo * 1000 - 5000 }));
        }
        const githubTimes: number[] = [];
        const factOf = (i: number, kind: "started" | "completed"): Fact[] => {
          const w = world[i]!;
          const common = { runner: w.runner, repo: REPO, runId: w.runId, runAttempt: 1, jobId: w.id, source: `d-${i}-${kind}` };
          if (kind === "started") return [{ type: "job-started", ...common, startedAt: w.startedAt }];
          if (w.status !== "completed" || !w.completedAt) return []; // no completion to tell of yet
          return [{ type: "job-completed", ...common, startedAt: w.startedAt, completedAt: w.completedAt, conclusion: "success" }];
        };
        for (const c of commands) {
          const i = "job" in c ? c.job % jobs.length : 0;
          const w = world[i]!;
          const home = NS[jobs[i]!.ns];
          const other = NS[1 - jobs[i]!.ns]!;
          switch (c.t) {
            case "started":
            case "completed":
              for (let k = 0; k < (c.dup ? 2 : 1); k++) ledger.record(factOf(i, c.t), now);
              break;
            case "finish":
              if (w.status === "in_progress") Object.assign(w, { status: "completed", completedAt: iso(now) });
              break;
            case "arcRemove":
              if (w.status === "completed") cluster.remove(home, w.runner);
              break;
            case "vanish":
              cluster.remove(home, w.runner);
              break;
            case "twin":
            case "lateTwin": {
              // An idle object of the name in the other namespace, created before the job started (or now).
              const created = c.t === "twin" ? Date.parse(w.startedAt) - 600_000 : now;
              if (!(cluster.objects.get(other) ?? []).some((o) => o.name === w.runner))
                cluster.put(object({ name: w.runner, namespace: other, uid: `twin-${i}-${now}`, createdAt: created }));
              break;
            }
            case "githubDown":
              github.failing = c.on;
              break;
            case "unreadable":
              if (c.on) cluster.unreadable.add(NS[c.ns]);
              else cluster.unreadable.delete(NS[c.ns]);
              break;
            case "jump":
              now += c.ms;
              break;
            case "pass": {
              const deps = passDeps({ ledger, cluster, github, namespaces: [...NS], now, clock, cap, budget, githubTimes });
              await runPass(c.kind, deps);
              for (let k = 0; k < deps.budget.used; k++) githubTimes.push(now);
              for (const r of ledger.openRunners()) {
                if (r.dueAt !== null && r.dueAt <= now && r.heldFor === undefined && c.kind === "sweep")
                  violations.push(`open row ${r.runner} has its next look in the past (${r.dueAt - now} ms) after a sweep, with no hold`);
              }
              now += 1000; // passes take time
              break;
            }
          }
        }
        deletesSeen += cluster.deleted.length;
        expect(violations).toEqual([]);
        expect(maxIn60s(cluster.deleted.map((d) => d.at))).toBeLessThanOrEqual(cap);
        expect(maxIn60s(github.calls.map((d) => d.at))).toBeLessThanOrEqual(budget);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 400) },
    );
    say(`fast-check: the pass: ${cases} cases run, ${deletesSeen} deletions checked, ${Date.now() - started} ms`);
    expect(cases).toBeGreaterThanOrEqual(Number(process.env.FC_RUNS ?? 400));
  }, 60_000); // a few seconds alone; more on a shared machine

  it("a failed ask repeats at most log2(T/60 s)+1 times in T (T up to 2 hours), whatever the passes' timing", async () => {
    let cases = 0;
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ gap: fc.integer({ min: 1_000, max: 300_000 }), kind: fc.constantFrom("alarm" as const, "sweep" as const) }), {
          minLength: 1,
          maxLength: 150,
        }),
        async (passes) => {
          cases++;
          let now = T0;
          const clock = () => now;
          const ledger = new FakeLedger(policy, 10, clock);
          const cluster = new FakeCluster(clock);
          const github = new FakeGithub(clock);
          github.failing = true;
          cluster.put(object({ name: "r-0", namespace: "arc-a", uid: "busy-0", runId: 100, createdAt: T0 - 500_000_000 }));
          ledger.record(
            [{ type: "job-started", runner: "r-0", repo: REPO, runId: 100, runAttempt: 1, jobId: 1000, startedAt: iso(T0 - 433_000_000), source: "d" }],
            T0,
          );
          const githubTimes: number[] = [];
          for (const p of passes) {
            if (now - T0 > 7_200_000) break;
            const deps = passDeps({ ledger, cluster, github, namespaces: ["arc-a"], now, clock, cap: 10, budget: 100, githubTimes });
            await runPass(p.kind, deps);
            now += p.gap;
          }
          if (github.calls.length === 0) return;
          const T = github.calls.at(-1)!.at - github.calls[0]!.at + 60_000;
          expect(github.calls.length).toBeLessThanOrEqual(Math.floor(Math.log2(T / 60_000)) + 1);
          expect(cluster.deleted).toEqual([]);
        },
      ),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
    say(`fast-check: the back-off: ${cases} cases run, ${Date.now() - started} ms`);
    expect(cases).toBeGreaterThanOrEqual(Number(process.env.FC_RUNS ?? 300));
  }, 60_000);
});
