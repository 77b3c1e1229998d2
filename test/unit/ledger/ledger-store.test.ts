// The sweep reads the open rows for judging without their stories and names
// (LedgerStore.openToJudge, RunnersTable.openToJudge); the rows it writes are
// read whole first. Two ledgers with the same rows, one read that way and one
// read whole, go through the same sweeps (the real gather, reconcile and
// transition over the fakes' cluster and GitHub): the same decisions, the same
// lines, and tables equal to the byte afterwards.
import type { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LedgerStore } from "../../../src/ledger/ledger-store.ts";
import { migrate } from "../../../src/ledger/schema.ts";
import type { Fact } from "../../../src/model/facts.ts";
import type { RunnerRecord } from "../../../src/model/runner.ts";
import { gatherListed } from "../../../src/reaper/gather-listed.ts";
import type { DecisionLine } from "../../../src/reaper/log-lines.ts";
import { nextLook } from "../../../src/reaper/next-look.ts";
import { reconcileAll, type PassDeps } from "../../../src/reaper/reconcile-all.ts";
import { scheduleFromFacts } from "../../../src/reaper/schedule-facts.ts";
import { transition } from "../../../src/reaper/transition.ts";
import { FakeCluster, FakeGithub, FakeLedger, object, passDeps, policy, REPO } from "../support/fakes.ts";
import { nodeSql } from "../support/node-sql.ts";

const T0 = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const names = (i: number) => ({ workflow: `CI ${i}`, job: `build ${i}`, branch: "main", runUrl: `https://github.com/${REPO}/actions/runs/${100 + i}` });

const started = (i: number, ago: number): Fact => ({
  type: "job-started",
  runner: `r-${i}`,
  repo: REPO,
  runId: 100 + i,
  runAttempt: 1,
  jobId: 1000 + i,
  startedAt: iso(T0 - ago),
  source: `d-${i}`,
  names: names(i),
});
const completed = (i: number, at: number): Fact => ({
  type: "job-completed",
  runner: `r-${i}`,
  repo: REPO,
  runId: 100 + i,
  runAttempt: 1,
  jobId: 1000 + i,
  completedAt: iso(at),
  conclusion: "success",
  source: `c-${i}`,
});

/** One ledger over its own SQLite, with the fakes' cluster and GitHub; `whole`: the sweep reads its rows whole. */
function world(whole: boolean) {
  const { sql, db } = nodeSql();
  migrate(sql);
  let now = T0;
  const clock = () => now;
  const lines: DecisionLine[] = [];
  const store = new LedgerStore(sql, {
    schedule: (record) => scheduleFromFacts(record, clock(), policy),
    policy,
    historyDays: 3,
    stuckSeconds: 600,
    maxDeletionsPerMinute: 10,
    log: (line) => lines.push(line),
    transition,
    look: nextLook,
  });
  const judged: RunnerRecord[][] = [];
  const narrow = store.openToJudge.bind(store);
  store.openToJudge = () => {
    const rows = whole ? store.openRunners() : narrow();
    judged.push(rows);
    return rows;
  };
  const cluster = new FakeCluster(clock);
  const github = new FakeGithub(clock);
  // Running jobs (0-3; 2 past the hourly recheck), one completed with its runner still there (4: deleted),
  // one completed and gone from the cluster (5), one with a full story (6: its new decision drops the oldest entry).
  for (let i = 0; i < 7; i++) {
    const ago = i === 2 ? 2 * 3_600_000 : 600_000 + i * 1000;
    store.record([started(i, ago)], T0 - ago);
    github.jobs.set(1000 + i, { id: 1000 + i, runId: 100 + i, runner: `r-${i}`, status: "in_progress", startedAt: iso(T0 - ago), completedAt: null });
    if (i !== 5) cluster.put(object({ name: `r-${i}`, namespace: "arc-a", uid: `u-${i}`, runId: 100 + i, createdAt: T0 - ago - 5000 }));
  }
  store.record([completed(4, T0 - 900_000), completed(5, T0 - 900_000)], T0 - 900_000);
  const six = store.runners.get("r-6", 1006)!;
  const story = Array.from({ length: 40 }, (_, k) => ({ at: iso(T0 - 500_000 + k), what: `entry ${k}`, source: "d-6" }));
  store.runners.put({ ...six, story });
  const fake = new FakeLedger(policy, 10, clock);
  const deps = (): PassDeps => ({
    ...passDeps({ ledger: fake, cluster, github, namespaces: ["arc-a"], now, clock, cap: 10, budget: 100, githubTimes: [] }),
    ledger: store,
  });
  return {
    store,
    db,
    sql,
    lines,
    judged,
    cluster,
    at: (t: number) => {
      now = t;
      vi.setSystemTime(t);
    },
    /** One sweep: gather, `between` (facts that come in while the cluster is listed), reconcile and store. */
    sweep: async (between?: (s: LedgerStore) => void) => {
      const g = await gatherListed(deps());
      between?.(store);
      const { results } = await reconcileAll(g.items, deps(), "sweep");
      return results.map((r) => [r.name, r.verdict, r.close ?? null, r.next]);
    },
  };
}

const TABLES = ["runners", "counters", "deletions", "hourly_outcomes", "unseen", "memory"];
const dump = (db: DatabaseSync) => Object.fromEntries(TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()]));

describe("the sweep's read for judging (no stories, no names) beside the whole read", () => {
  // The ledger stamps a fact's arrival with Date.now(): one clock for both ledgers.
  beforeEach(() => {
    vi.useFakeTimers({ now: T0, toFake: ["Date"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("makes the same decisions and the same writes, sweep after sweep", async () => {
    const narrow = world(false);
    const whole = world(true);
    expect(dump(narrow.db)).toEqual(dump(whole.db));

    const steps: [number, ((s: LedgerStore) => void) | undefined, ((w: ReturnType<typeof world>) => void) | undefined][] = [
      // The first looks: every row's verdict written, 4 deleted, 5 gone.
      [T0, undefined, undefined],
      // The same decisions again (nothing written); a webhook completes 1 while the cluster is listed: its judged row is not written.
      [T0 + 60_000, (s) => s.record([completed(1, T0 + 60_000)], T0 + 60_000), undefined],
      // Later: 0 leaves the cluster (gone), 1 is past its grace (deleted), 2 and 3 are rechecked, 6 moves on.
      [T0 + 3 * 3_600_000, undefined, (w) => w.cluster.remove("arc-a", "r-0")],
      // A sweep with nothing new.
      [T0 + 3 * 3_600_000 + 60_000, undefined, undefined],
    ];
    for (const [t, between, before] of steps) {
      for (const w of [narrow, whole]) {
        w.at(t);
        before?.(w);
      }
      const [a, b] = [await narrow.sweep(between), await whole.sweep(between)];
      expect(a).toEqual(b);
      expect(narrow.lines).toEqual(whole.lines);
      expect(dump(narrow.db)).toEqual(dump(whole.db));
      expect(narrow.sql.cost.rowsWritten).toBe(whole.sql.cost.rowsWritten);
    }
    // Not the same read twice: one ledger judged rows without their stories, the other whole.
    const first = (w: ReturnType<typeof world>) => w.judged[0]!.find((r) => r.runner === "r-6")!;
    expect(first(narrow)).toMatchObject({ storyUnread: true, story: [] });
    expect(first(narrow).names).toBeUndefined();
    expect(first(whole).story).toHaveLength(40);
    expect(first(whole).names).toEqual(names(6));
    // The decisions this compares: deletes, gones, rechecks and a story kept to its 40 entries.
    expect(narrow.lines.map((l) => `${l.runner} ${l.verdict}`)).toEqual(expect.arrayContaining(["r-4 deleted", "r-5 gone", "r-0 gone", "r-1 deleted"]));
    // Rechecked (GitHub asked, the row written with its stories untouched): 2 at once, 3 three hours on.
    for (const [runner, job] of [
      ["r-2", 1002],
      ["r-3", 1003],
    ] as const)
      expect(narrow.store.runners.get(runner, job)!.checkedAt).toBeDefined();
    const six = narrow.store.runners.get("r-6", 1006)!;
    expect(six.story).toHaveLength(40);
    expect(six.story[0]!.what).toBe("entry 1");
    expect(six.names).toEqual(names(6));
  });

  it("a record read without its story is never written as it is: its empty story would replace the row's", () => {
    const { store } = world(false);
    const [row] = store.openToJudge();
    expect(row!.storyUnread).toBe(true);
    expect(() => store.runners.update({ ...row!, reason: "x" }, row!, { closing: false })).toThrow(/read without its story/);
    expect(() => store.runners.put(row!)).toThrow(/read without its story/);
    expect(store.runners.get(row!.runner, row!.jobId)!.story.length).toBeGreaterThan(0);
  });

  it("made whole, a record is as it was read, with the story and names its row holds; a row gone is undefined", () => {
    const { store, db } = world(false);
    const [a, b] = store.openToJudge();
    db.exec(`DELETE FROM runners WHERE id = ${b!.id}`);
    const [made, gone] = store.runners.whole([a!, b!]);
    expect(gone).toBeUndefined();
    const stored = store.runners.byId(a!.id!)!;
    expect(made).toEqual(stored);
    expect(made!.storyUnread).toBeUndefined();
    expect(store.runners.whole([stored])[0]).toBe(stored);
  });

  it("makes many records whole at once, past one statement's 100 ids", () => {
    const { store } = world(false);
    const base = store.runners.get("r-0", 1000)!;
    for (let i = 0; i < 250; i++)
      store.runners.put({ ...base, id: undefined, runner: `m-${i}`, jobId: 5000 + i, story: [{ at: iso(T0), what: `m ${i}`, source: "d" }] });
    const judged = store.openToJudge();
    expect(judged.length).toBe(257);
    expect(store.runners.whole(judged)).toEqual(judged.map((r) => store.runners.byId(r.id!)));
  });
});
