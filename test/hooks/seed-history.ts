// Bench and tests only (the test ledger, test/hooks/test-ledger.ts): inserts `count` closed
// rows, as a week of finished jobs would leave them, in one SQL statement, so
// a benchmark can put 100,000 rows of history behind a sweep in seconds
// instead of replaying 200,000 webhooks. The rows look like real closed rows:
// reaped or gone, a verdict, a reason, a three-entry story, pruned in 7 days.
// They closed over the last 24 hours (unevenly, as a working day would), and
// the admin page's hourly counters count them as a real close would.
import { CountersTable } from "../../src/ledger/counters-table.ts";
import { HOUR_MS } from "../../src/ledger/hourly-rollup.ts";
import type { Sql } from "../../src/ledger/sql.ts";

const STORY = JSON.stringify([
  { at: "2026-01-01T00:00:00.000Z", what: "job in_progress", source: "00000000-0000-0000-0000-000000000000" },
  { at: "2026-01-01T00:06:00.000Z", what: "job completed (success)", source: "00000000-0000-0000-0000-000000000001" },
  { at: "2026-01-01T00:11:00.000Z", what: "gone: the runner is no longer in the cluster", source: "sweep" },
]);

/** How many hours before `now` seeded row i closed: 0..23, busier in some hours than others. */
const HOURS_AGO = "((i * 7 + (i / 5) * 3) % 24)";

/** Inserts closed rows named history-runner-<from..from+count-1>; answers the rows written (each row and its index entries). */
export function seedHistory(sql: Sql, from: number, count: number, now: number): number {
  const written = insertRows(sql, from, count, now);
  // The closed-runner gauges the admin page's filter counts read, as real closes keep them.
  const gone = Math.floor((from + count - 1) / 2) - Math.floor((from - 1) / 2); // even i in [from, from + count - 1]
  const counters = new CountersTable(sql);
  counters.add("arc_reaper_closed_runners", { state: "gone" }, gone);
  counters.add("arc_reaper_closed_runners", { state: "reaped" }, count - gone);
  // The hourly counters of those closes, in one statement: reaped ones by a delay bucket that varies with i.
  return (
    written +
    sql.run(
      `WITH RECURSIVE n(i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO hourly_outcomes (hour, outcome, bucket, why, n)
     SELECT CAST((? - ${HOURS_AGO} * ${HOUR_MS}) / ${HOUR_MS} AS INTEGER) AS hour, CASE WHEN i % 2 = 0 THEN 'gone' ELSE 'reaped' END AS outcome,
       CASE WHEN i % 2 = 0 THEN -1 ELSE (i / 2) % 9 END AS bucket, '', COUNT(*)
     FROM n GROUP BY 1, 2, 3
     ON CONFLICT (hour, outcome, bucket, why) DO UPDATE SET n = n + excluded.n`,
      from,
      from + count - 1,
      now,
    )
  );
}

function insertRows(sql: Sql, from: number, count: number, now: number): number {
  return sql.run(
    `WITH RECURSIVE n(i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO runners (runner, job_id, repo, run_id, run_attempt, installation_id, started_at, job_completed_at, job_conclusion,
       uid, namespace, checked_at, state, verdict, reason, verdict_key, cause, decided_at, due_at, story)
     SELECT 'history-runner-' || i, 90000000 + i, 'octo-org/octo-repo', 80000000 + i, 1, 4242,
       '2026-01-01T00:00:00Z', '2026-01-01T00:06:00Z', 'success',
       'uid-history-' || i, 'arc-runners', ?, CASE WHEN i % 2 = 0 THEN 'gone' ELSE 'reaped' END, 'delete',
       'job completed 300s ago (grace 300s)', 'delete:completed', 'completed', ? - ${HOURS_AGO} * ${HOUR_MS}, ?, ?
     FROM n`,
    from,
    from + count - 1,
    now,
    now,
    now + 7 * 86_400_000,
    STORY,
  );
}

/**
 * Inserts `count` closed rows of runners ARC marked Failed, as a churning scale set leaves them: each was
 * deleted by arc-reaper (cause failed) and went, spread over the last `spreadMs`, in namespace and scale set
 * `scaleSet`; pruned REAPER_HISTORY_DAYS after they closed. Answers the rows written.
 */
export function seedFailedHistory(sql: Sql, from: number, count: number, now: number, scaleSet: string, spreadMs: number): number {
  // Row i was deleted ((i * 7919) mod count) steps ago: a permutation of 0..count-1 (7919 is prime), evenly over spreadMs.
  const step = Math.max(1, Math.floor(spreadMs / count));
  const ago = `((i * 7919) % ${Math.max(1, Math.floor(count))}) * ${step}`;
  return sql.run(
    `WITH RECURSIVE n(i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO failed_runners (cluster, namespace, name, uid, scale_set, arc_reason, arc_message, failed_at, first_seen, created_at, state, reason, deleted_at, closed_at, story)
     SELECT 'default', ?, ? || '-failed-' || i, 'uid-failed-history-' || i, ?, 'PodCreateFailed', 'admission webhook denied the request',
       ? - ${ago} - 600000, ? - ${ago} - 600000, ? - ${ago} - 700000, 'reaped',
       'ARC marked it Failed 600s ago (PodCreateFailed: admission webhook denied the request); it went 20s after our delete',
       ? - ${ago}, ? - ${ago} + 20000, ?
     FROM n`,
    from,
    from + count - 1,
    scaleSet,
    scaleSet,
    scaleSet,
    now,
    now,
    now,
    now,
    now,
    STORY,
  );
}
