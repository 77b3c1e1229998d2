// Keys of decisions moved from the reason's words to the verdict's code (src/model/verdict.ts), and unseen
// rows got a key of their own (migration 14). A ledger of the release before (schema 13: runner rows keyed
// "keep: <the reason without its ages>", unseen rows with no key) is read after the upgrade, and its first
// verdicts, the same decisions as before, add no story entry and no decision line; a new decision does.
import { describe, expect, it } from "vitest";
import { LedgerStore } from "../../../src/ledger/ledger-store.ts";
import { RunnersTable } from "../../../src/ledger/runners-table.ts";
import { migrate, SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { lookAt } from "../../../src/model/next-look.ts";
import type { RunnerRecord } from "../../../src/model/runner.ts";
import type { Verdict } from "../../../src/model/verdict.ts";
import type { DecisionLine } from "../../../src/reaper/log-lines.ts";
import type { Result } from "../../../src/reaper/reconcile.ts";
import { scheduleFromFacts } from "../../../src/reaper/schedule-facts.ts";
import { nextLook } from "../../../src/reaper/next-look.ts";
import { transition } from "../../../src/reaper/transition.ts";
import { busyRunner, policy, REPO } from "../support/fakes.ts";
import { nodeSql } from "../support/node-sql.ts";

const NOW = Date.parse("2026-12-03T10:00:00Z");
const STARTED = "2026-12-03T09:00:00.000Z";
const RUNNING = `job 11 in ${REPO} is in_progress for 3540s, within the bound of 432000s`;
const NOT_PLACED = "GitHub names no job of run 8 for runner r-2";

/** A ledger as release 13 left it: one open row judged Running, one unseen row judged, one never judged. */
function previousRelease() {
  const { sql, db } = nodeSql();
  migrate(sql);
  const row: RunnerRecord = {
    runner: "r-1",
    repo: REPO,
    runId: 7,
    runAttempt: 1,
    jobId: 11,
    startedAt: STARTED,
    state: "running",
    verdict: "keep",
    reason: RUNNING,
    verdictKey: `keep: job 11 in ${REPO} is in_progress for Ns, within the bound of Ns`,
    decidedAt: NOW - 3_540_000,
    dueAt: NOW,
    uid: "u-1",
    namespace: "arc-a",
    cluster: "default",
    story: [
      { at: STARTED, what: "in_progress", source: "guid-1" },
      { at: "2026-12-03T09:01:00.000Z", what: `keep: ${RUNNING}`, source: "sweep" },
    ],
  };
  new RunnersTable(sql).put(row);
  db.exec("ALTER TABLE unseen DROP COLUMN verdict_key");
  db.exec("ALTER TABLE runners DROP COLUMN check_code"); // migration 15, run again too
  const unseen = db.prepare(
    "INSERT INTO unseen (name, uid, namespace, run_id, repo, first_seen, due_at, reason, held_for, cluster, failures) VALUES (?, ?, 'arc-a', 8, ?, ?, ?, ?, NULL, 'default', ?)",
  );
  unseen.run("r-2", "u-2", REPO, NOW - 600_000, NOW, NOT_PLACED, 1);
  unseen.run("r-3", "u-3", REPO, NOW - 60_000, null, "", 0);
  db.exec("UPDATE schema_version SET version = 13");
  migrate(sql);
  const lines: DecisionLine[] = [];
  const store = new LedgerStore(sql, {
    schedule: (record) => scheduleFromFacts(record, NOW, policy),
    policy,
    historyDays: 3,
    stuckSeconds: 600,
    maxDeletionsPerMinute: 10,
    log: (line) => lines.push(line),
    transition,
    look: nextLook,
  });
  return { sql, db, store, lines };
}

const runningVerdict: Verdict = { code: "Running", verdict: "keep", reason: `job 11 in ${REPO} is in_progress for 3600s, within the bound of 432000s` };
const notPlaced: Verdict = { code: "NotPlaced", verdict: "keep", reason: NOT_PLACED };

function rowResult(record: RunnerRecord, verdict: Verdict): Result {
  return { name: record.runner, record, view: { kind: "found", runner: busyRunner(NOW) }, verdict, next: lookAt(NOW + 3_600_000), failures: 0 };
}

describe("verdict keys after the upgrade (schema 13, keys of words, to 14, keys of codes)", () => {
  it("the schema moves to the code's version; the unseen rows read as they meant, without keys", () => {
    const { db, store } = previousRelease();
    expect(db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: SCHEMA_VERSION }]);
    expect(store.unseen().map((u) => [u.name, u.reason, u.verdictKey])).toEqual([
      ["r-2", NOT_PLACED, undefined],
      ["r-3", null, undefined],
    ]);
  });

  it("a runner row's first verdict, its decision as before: the key is rewritten, no story entry, no line, no new decidedAt", () => {
    const { store, lines } = previousRelease();
    const [before] = store.openRunners();
    expect(store.store([rowResult(before!, runningVerdict)], "sweep", NOW)).toEqual({ logged: 0 });
    const [after] = store.openRunners();
    expect(after).toMatchObject({ verdictKey: "keep/Running", reason: runningVerdict.reason, decidedAt: before!.decidedAt, dueAt: NOW + 3_600_000 });
    expect(after!.story).toEqual(before!.story);
    expect(lines).toEqual([]);
    // The next verdict of another kind is a new decision: a story entry and a line.
    const grace: Verdict = { code: "InGrace", verdict: "wait", reason: "job 11 completed (success); grace 300s" };
    expect(store.store([rowResult(after!, grace)], "sweep", NOW + 1000)).toEqual({ logged: 1 });
    expect(store.openRunners()[0]!.story.at(-1)?.what).toBe(`wait: ${grace.reason}`);
    expect(lines.map((l) => l.code)).toEqual(["InGrace"]);
  });

  it("a verdict of another kind than the stored key's, right after the upgrade, is a new decision", () => {
    const { store, lines } = previousRelease();
    const [before] = store.openRunners();
    const grace: Verdict = { code: "InGrace", verdict: "wait", reason: "job 11 completed (success); grace 300s" };
    expect(store.store([rowResult(before!, grace)], "sweep", NOW)).toEqual({ logged: 1 });
    const [after] = store.openRunners();
    expect(after).toMatchObject({ verdictKey: "wait/InGrace", decidedAt: NOW });
    expect(after!.story).toHaveLength(before!.story.length + 1);
    expect(lines.map((l) => l.code)).toEqual(["InGrace"]);
  });

  it("an unseen row judged before: its next verdict takes a key as the same decision (no line); one never judged is a first look (a line)", () => {
    const { store, lines } = previousRelease();
    const [judged, fresh] = store.unseen();
    const unseenResult = (u: typeof judged, verdict: Verdict): Result => ({
      name: u!.name,
      unseen: u,
      view: { kind: "found", runner: busyRunner(NOW, { name: u!.name, uid: u!.uid, workflowRunId: 8 }) },
      verdict,
      next: lookAt(NOW + 120_000),
      failures: 1,
    });
    const awaiting: Verdict = { code: "AwaitingWebhook", verdict: "keep", reason: "waiting 180s for its webhook" };
    expect(store.store([unseenResult(judged, notPlaced), unseenResult(fresh, awaiting)], "sweep", NOW)).toEqual({ logged: 1 });
    expect(lines.map((l) => l.runner)).toEqual(["r-3"]);
    expect(store.unseen().map((u) => [u.name, u.verdictKey])).toEqual([
      ["r-2", "keep/NotPlaced"],
      ["r-3", "keep/AwaitingWebhook"],
    ]);
    // From then on its key decides: the same again is no line, another code is.
    const [again] = store.unseen();
    expect(store.store([unseenResult(again, notPlaced)], "sweep", NOW + 60_000)).toEqual({ logged: 0 });
    const budget: Verdict = { code: "Budget", verdict: "keep", reason: "not asked now (budget)" };
    expect(store.store([unseenResult(store.unseen()[0], budget)], "sweep", NOW + 120_000)).toEqual({ logged: 1 });
  });
});
