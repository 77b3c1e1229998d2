// The remembered answers of conditional requests (migration 16, github_validators): bounded in rows
// and age, and a ledger of the release before (schema 15, no such table) read and worked on after the upgrade.
import { describe, expect, it } from "vitest";
import { LedgerStore } from "../../../src/ledger/ledger-store.ts";
import { RunnersTable } from "../../../src/ledger/runners-table.ts";
import { migrate, SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { MAX_AGE_MS, MAX_ROWS, ValidatorsTable } from "../../../src/ledger/validators-table.ts";
import { nextLook } from "../../../src/reaper/next-look.ts";
import { scheduleFromFacts } from "../../../src/reaper/schedule-facts.ts";
import { transition } from "../../../src/reaper/transition.ts";
import { policy, REPO } from "../support/fakes.ts";
import { nodeSql } from "../support/node-sql.ts";

const NOW = Date.parse("2026-12-07T12:00:00Z");
const answer = (n: number, storedAt = NOW) => ({ token: "0123456789abcdef", etag: `W/"${n}"`, summary: JSON.stringify({ jobs: [], n }), storedAt });

describe("github_validators", () => {
  it("keeps one row per request, a 200 replacing it; forgets on demand", () => {
    const { sql } = nodeSql();
    migrate(sql);
    const t = new ValidatorsTable(sql, () => NOW);
    t.remember("GET /a", answer(1));
    t.remember("GET /a", { ...answer(2), etag: undefined, lastModified: "Mon, 07 Dec 2026 11:00:00 GMT" });
    expect(t.recall("GET /a")).toEqual({
      token: "0123456789abcdef",
      lastModified: "Mon, 07 Dec 2026 11:00:00 GMT",
      summary: '{"jobs":[],"n":2}',
      storedAt: NOW,
    });
    t.forget("GET /a");
    expect(t.recall("GET /a")).toBeUndefined();
  });

  it(`holds at most ${MAX_ROWS} rows, the oldest written going first`, () => {
    const { sql, db } = nodeSql();
    migrate(sql);
    const t = new ValidatorsTable(sql, () => NOW);
    for (let i = 0; i < MAX_ROWS + 25; i++) t.remember(`GET /r/${i}`, answer(i));
    // Rewritten: the first request is the newest now, and survives what comes next.
    t.remember("GET /r/0", answer(0));
    t.remember("GET /r/extra", answer(-1));
    expect(db.prepare("SELECT COUNT(*) AS n FROM github_validators").get()).toEqual({ n: MAX_ROWS });
    expect(t.recall("GET /r/0")).toBeDefined();
    expect(t.recall("GET /r/1")).toBeUndefined();
    expect(t.recall("GET /r/26")).toBeUndefined();
    expect(t.recall("GET /r/27")).toBeDefined();
  });

  it("never answers a row older than its age, and the hourly prune drops them", () => {
    const { sql, db } = nodeSql();
    migrate(sql);
    let now = NOW;
    const t = new ValidatorsTable(sql, () => now);
    t.remember("GET /old", answer(1, NOW));
    t.remember("GET /older", answer(2, NOW - 60_000));
    t.remember("GET /new", answer(3, NOW + MAX_AGE_MS));
    now = NOW + MAX_AGE_MS + 1;
    expect(t.recall("GET /old")).toBeUndefined();
    expect(t.prune()).toBe(1); // /older; /old went when it was asked for
    expect(db.prepare("SELECT request FROM github_validators").all()).toEqual([{ request: "GET /new" }]);
  });
});

describe("the upgrade from the release before (schema 15: no github_validators)", () => {
  function previousRelease() {
    const { sql, db } = nodeSql();
    migrate(sql);
    db.exec("DROP TABLE github_validators");
    db.exec("UPDATE schema_version SET version = 15");
    const runners = new RunnersTable(sql);
    runners.put({ runner: "r-run", repo: REPO, runId: 1, runAttempt: 1, jobId: 1, state: "running", reason: "", dueAt: NOW + 60_000, story: [] });
    db.exec(`INSERT INTO memory (key, value) VALUES ('installation/${REPO}', '7')`);
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
    return { sql, db, store };
  }

  it("moves to the code's version with the table, keeping what was there, and works on it", () => {
    const { sql, db, store } = previousRelease();
    expect(db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: SCHEMA_VERSION }]);
    expect(store.runners.get("r-run", 1)).toMatchObject({ state: "running", dueAt: NOW + 60_000 });
    expect(store.memory.github().installation(REPO)).toBe(7);
    expect(store.nextDue()).toBe(NOW + 60_000);
    expect(store.validators.recall("GET /a")).toBeUndefined();
    store.validators.remember("GET /a", answer(1, Date.now()));
    expect(store.validators.recall("GET /a")).toMatchObject({ etag: 'W/"1"' });
    // Run again (a restart): nothing changes.
    migrate(sql);
    expect(store.validators.recall("GET /a")).toMatchObject({ etag: 'W/"1"' });
    expect(store.prune(NOW)).toBe(0);
  });
});
