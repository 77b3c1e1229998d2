// The admin page's day at a glance, read from the hourly counters
// (hourly-rollup.ts): at most 24 hours of a few rows each, whatever the size of
// the runners' history.
import { DELAY_BUCKETS, HOUR_MS, type HourlyGithub, type HourlyOutcome } from "./hourly-rollup.ts";
import type { Sql, SqlRow } from "./sql.ts";

export interface HourFigures {
  /** The hour's start, ISO 8601. */
  start: string;
  reaped: number;
  kept: number;
  gone: number;
  /** GitHub requests made in the hour, and those GitHub counts against the rate limit (all but 304s). */
  githubRequests: number;
  githubCounted: number;
}

/** A percentile of the delay after the grace, as the upper bound of its bucket: "at most this long". */
export interface DelayPercentile {
  /** At most this many seconds; null when past the largest bucket. */
  atMostSeconds: number | null;
  /** Past the largest bucket: more than this many seconds. */
  moreThanSeconds?: number;
}

export interface DayAtGlance {
  /** The last 24 hours, oldest first, the current hour last. */
  hours: HourFigures[];
  /** Reaped runners whose delay after the grace is known, and its p50 and p99; null when none. */
  delay: { count: number; p50: DelayPercentile; p99: DelayPercentile } | null;
  /** Finished runners kept over the day, by why, most first. */
  keptWhy: { why: string; n: number }[];
}

interface Row extends SqlRow {
  hour: number;
  outcome: string;
  bucket: number;
  why: string;
  n: number;
}

export function readDay(sql: Sql, now: number): DayAtGlance {
  const last = Math.floor(now / HOUR_MS);
  const first = last - 23;
  const hours = Array.from(
    { length: 24 },
    (_, i): HourFigures => ({ start: new Date((first + i) * HOUR_MS).toISOString(), reaped: 0, kept: 0, gone: 0, githubRequests: 0, githubCounted: 0 }),
  );
  const buckets = new Array<number>(DELAY_BUCKETS.length + 1).fill(0);
  const why = new Map<string, number>();
  for (const r of sql.all<Row>("SELECT hour, outcome, bucket, why, n FROM hourly_outcomes WHERE hour >= ? AND hour <= ?", first, last)) {
    const figures = hours[Math.floor(r.hour) - first];
    const outcome = r.outcome as HourlyOutcome | HourlyGithub;
    if (figures && outcome === "github-requests") figures.githubRequests += r.n;
    if (figures && outcome === "github-counted") figures.githubCounted += r.n;
    if (!figures || (outcome !== "reaped" && outcome !== "kept" && outcome !== "gone")) continue;
    figures[outcome] += r.n;
    if (outcome === "reaped" && r.bucket >= 0) buckets[r.bucket] = (buckets[r.bucket] ?? 0) + r.n;
    if (outcome === "kept") why.set(r.why, (why.get(r.why) ?? 0) + r.n);
  }
  const count = buckets.reduce((a, b) => a + b, 0);
  return {
    hours,
    delay: count === 0 ? null : { count, p50: percentile(buckets, count, 0.5), p99: percentile(buckets, count, 0.99) },
    keptWhy: [...why].map(([w, n]) => ({ why: w, n })).sort((a, b) => b.n - a.n || a.why.localeCompare(b.why)),
  };
}

function percentile(buckets: number[], count: number, q: number): DelayPercentile {
  const rank = Math.ceil(q * count);
  let seen = 0;
  for (const [i, n] of buckets.entries()) {
    seen += n;
    if (seen >= rank) return i < DELAY_BUCKETS.length ? { atMostSeconds: DELAY_BUCKETS[i]! } : { atMostSeconds: null, moreThanSeconds: DELAY_BUCKETS.at(-1)! };
  }
  return { atMostSeconds: null, moreThanSeconds: DELAY_BUCKETS.at(-1)! };
}
