// The admin rows carry their decision's code (src/ledger/queries.ts), and a row a check of our deletion
// restated keeps that check's code (migration 15, runners.check_code). A ledger of the release before
// (schema 14: no check_code) is read after the upgrade: its rows answer the codes their keys name, its
// stuck row none (null: its key names the verdict that condemned it); a check after it stores its code.
import { describe, expect, it } from "vitest";
import { DeletionsTable } from "../../../src/ledger/deletions-table.ts";
import { LedgerStore } from "../../../src/ledger/ledger-store.ts";
import { ledgerQueries } from "../../../src/ledger/queries.ts";
import { RunnersTable } from "../../../src/ledger/runners-table.ts";
import { migrate, SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import type { DeletionWatch, RunnerRecord } from "../../../src/model/runner.ts";
import { scheduleFromFacts } from "../../../src/reaper/schedule-facts.ts";
import { nextLook } from "../../../src/reaper/next-look.ts";
import { transition } from "../../../src/reaper/transition.ts";
import { policy, REPO } from "../support/fakes.ts";
import { nodeSql } from "../support/node-sql.ts";

const NOW = Date.parse("2026-12-03T10:00:00Z");

const row = (runner: string, jobId: number, o: Partial<RunnerRecord>): RunnerRecord => ({
  runner,
  repo: REPO,
  runId: jobId,
  runAttempt: 1,
  jobId,
  state: "running",
  reason: "",
  dueAt: null,
  story: [],
  ...o,
});

const watchOf = (rowId: number, name: string, jobId: number, stuckAt?: number): DeletionWatch => ({
  rowId,
  name,
  cluster: "default",
  namespace: "arc-a",
  uid: `u-${name}`,
  repo: REPO,
  jobId,
  deletedAt: NOW - 900_000,
  dueAt: NOW,
  reason: `job ${jobId} in ${REPO} is cancelled, completed 900s ago`,
  ...(stuckAt === undefined ? {} : { stuckAt }),
});

/** A ledger as release 14 left it: a row judged Running, one keyed in words, one never judged, one reaped, one stuck and one reaped but still watched. */
function previousRelease() {
  const { sql, db } = nodeSql();
  migrate(sql);
  const runners = new RunnersTable(sql);
  runners.put(row("r-run", 1, { verdict: "keep", verdictKey: "keep/Running", reason: "job 1 is in_progress for 60s, within the bound of 432000s" }));
  runners.put(row("r-words", 2, { verdict: "keep", verdictKey: "keep: job 2 is in_progress for Ns", reason: "job 2 is in_progress for 60s" }));
  runners.put(row("r-new", 3, {}));
  const closed = { verdict: "delete", verdictKey: "delete/JobCompleted", pruneAt: NOW + 86_400_000 } as const;
  runners.put(row("r-reaped", 4, { ...closed, state: "reaped", reason: `job 4 in ${REPO} is cancelled, completed 900s ago` }));
  runners.put(row("r-stuck", 5, { ...closed, state: "stuck", pruneAt: undefined, reason: "stuck: deleted 900s ago and still in arc-a" }));
  runners.put(row("r-held", 6, { ...closed, state: "reaped", reason: `job 6 in ${REPO} is cancelled, completed 900s ago` }));
  const idOf = (runner: string, jobId: number) => runners.get(runner, jobId)!.id!;
  const deletions = new DeletionsTable(sql);
  deletions.put(watchOf(idOf("r-stuck", 5), "r-stuck", 5, NOW - 300_000));
  deletions.put(watchOf(idOf("r-held", 6), "r-held", 6));
  db.exec("ALTER TABLE runners DROP COLUMN check_code");
  db.exec("UPDATE schema_version SET version = 14");
  migrate(sql);
  const store = new LedgerStore(sql, {
    schedule: (record) => scheduleFromFacts(record, NOW, policy),
    policy,
    historyDays: 3,
    stuckSeconds: 600,
    maxDeletionsPerMinute: 10,
    log: () => {},
    transition,
    look: nextLook,
  });
  const codes = () =>
    Object.fromEntries(
      ledgerQueries(sql)
        .page({})
        .runners.map((r) => [r.name, [r.state, r.code]]),
    );
  return { db, sql, store, deletions, codes };
}

describe("the rows' codes after the upgrade (schema 14 to 15, runners.check_code)", () => {
  it("the schema moves to the code's version; each row answers the code its key names, or null", () => {
    const { db, codes } = previousRelease();
    expect(db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: SCHEMA_VERSION }]);
    expect(codes()).toEqual({
      "r-run": ["running", "Running"],
      "r-words": ["running", null], // keyed before keys were codes: it names none
      "r-new": ["running", null], // never judged
      "r-reaped": ["reaped", "JobCompleted"],
      "r-stuck": ["stuck", null], // restated by a check that kept no code: not the verdict's
      "r-held": ["reaped", "JobCompleted"],
    });
  });

  it("a check after the upgrade stores its code: the stuck row that went answers Went, the one newly stuck Stuck", () => {
    const { sql, store, deletions, codes } = previousRelease();
    const [stuck, held] = deletions.all().sort((a, b) => a.jobId - b.jobId);
    store.storeDeletionCheck(stuck!, { kind: "went", code: "Went", reason: "went 900s after our delete" }, NOW, "sweep");
    store.storeDeletionCheck(held!, { kind: "stuck", code: "Stuck", reason: "stuck: deleted 900s ago", dueAt: NOW + 600_000, newly: true }, NOW, "sweep");
    expect(codes()).toMatchObject({ "r-stuck": ["reaped", "Went"], "r-held": ["stuck", "Stuck"], "r-reaped": ["reaped", "JobCompleted"] });
    // Each restate's story entry names the check's code too.
    const stories = Object.fromEntries(
      ledgerQueries(sql)
        .page({})
        .runners.map((r) => [r.name, ledgerQueries(sql).story(r.name).jobs[0]!.story.at(-1)?.code]),
    );
    expect(stories).toMatchObject({ "r-stuck": "Went", "r-held": "Stuck" });
  });
});
