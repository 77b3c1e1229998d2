// The day at a glance, written as it happens: one counter per hour and outcome
// (reaped, kept, gone), the reaped ones by how long after the grace they went
// (a bucket of the delay), the kept ones by why. A close adds 1 to one row;
// the admin page reads at most a day of rows (day-at-glance.ts), never the
// runners' history. Rows older than two days are dropped as new ones come.
import type { Sql } from "./sql.ts";

export type HourlyOutcome = "reaped" | "kept" | "gone";
/** The hour's GitHub requests: made, and counted against the rate limit (all but 304s). */
export type HourlyGithub = "github-requests" | "github-counted";

/** Upper bounds of the delay buckets, in seconds; a delay past the last is in bucket DELAY_BUCKETS.length. */
export const DELAY_BUCKETS: readonly number[] = [1, 2, 3, 5, 7, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600, 900, 1800, 3600];

export const HOUR_MS = 3_600_000;
const KEEP_HOURS = 48;

function delayBucket(delayMs: number): number {
  const i = DELAY_BUCKETS.findIndex((upper) => delayMs <= upper * 1000);
  return i === -1 ? DELAY_BUCKETS.length : i;
}

export interface Outcome {
  outcome: HourlyOutcome;
  /** When it happened (ms). */
  at: number;
  /** Reaped: how long after the grace (or the bound) it was deleted, when known. */
  delayAfterGraceMs?: number;
  /** Kept: why, in a word or two (a small fixed set, so the rows stay few). */
  why?: string;
}

/** Adds one outcome to its hour's counters. */
export function recordOutcome(sql: Sql, o: Outcome): void {
  const hour = Math.floor(o.at / HOUR_MS);
  const bucket = o.outcome === "reaped" && o.delayAfterGraceMs !== undefined ? delayBucket(o.delayAfterGraceMs) : -1;
  sql.run(
    "INSERT INTO hourly_outcomes (hour, outcome, bucket, why, n) VALUES (?, ?, ?, ?, 1) ON CONFLICT (hour, outcome, bucket, why) DO UPDATE SET n = n + 1",
    hour,
    o.outcome,
    bucket,
    o.outcome === "kept" ? (o.why ?? "other") : "",
  );
  sql.run("DELETE FROM hourly_outcomes WHERE hour < ?", hour - KEEP_HOURS);
}

/** Adds a pass's GitHub requests to its hour's counters: those made and those GitHub counts (all but 304s). */
export function recordGithubCalls(sql: Sql, at: number, requests: number, counted: number): void {
  if (requests === 0) return;
  const hour = Math.floor(at / HOUR_MS);
  for (const [outcome, n] of [
    ["github-requests", requests],
    ["github-counted", counted],
  ] as const satisfies readonly (readonly [HourlyGithub, number])[]) {
    sql.run(
      "INSERT INTO hourly_outcomes (hour, outcome, bucket, why, n) VALUES (?, ?, -1, '', ?) ON CONFLICT (hour, outcome, bucket, why) DO UPDATE SET n = n + excluded.n",
      hour,
      outcome,
      n,
    );
  }
}
