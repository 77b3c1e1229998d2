// Tables 1 and 2 as Markdown (table 3 is built by day-table.ts).
import type { IntakeRow } from "./intake.ts";
import { duration, fixed, int, markdownTable } from "./markdown.ts";
import type { SweepCost } from "./sweep-cost.ts";

export const PAID_SUBREQUESTS = 10_000;
export const PAID_CPU_MS = 5 * 60_000;

export function intakeTable(rows: readonly IntakeRow[]): string {
  return markdownTable(
    [
      "connections",
      "arc-reaper req/s",
      "p50 ms",
      "p99 ms",
      "baseline req/s",
      "p50 ms",
      "p99 ms",
      "req/s ratio",
      "workerd CPU ms/req (arc-reaper / baseline)",
      "errors",
    ],
    rows.map((r) => [
      String(r.concurrency),
      fixed(r.product.perSecond, 1),
      fixed(r.product.p50Ms, 1),
      fixed(r.product.p99Ms, 1),
      fixed(r.baseline.perSecond, 1),
      fixed(r.baseline.p50Ms, 1),
      fixed(r.baseline.p99Ms, 1),
      fixed(r.product.perSecond / r.baseline.perSecond, 2),
      `${fixed(r.product.cpuMsPerRequest, 1)} / ${fixed(r.baseline.cpuMsPerRequest, 1)}`,
      `${r.product.errors} / ${r.baseline.errors}`,
    ]),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
}

export function sweepTable(rows: readonly SweepCost[]): string {
  return markdownTable(
    ["tracked runners", "KV list", "KV get", "KV put", "cluster calls", "GitHub calls", "subrequests", "of 10,000", "wall", "workerd CPU", "of 5 min", "CPU per runner"],
    rows.map((r) => [
      r.label,
      int(r.kvLists),
      int(r.kvGets),
      int(r.kvPuts),
      `${int(r.clusterCalls)} (${Object.entries(r.clusterByVerb).map(([verb, n]) => `${n} ${verb}`).join(", ")})`,
      int(r.githubCalls),
      int(r.subrequests),
      `${fixed((100 * r.subrequests) / PAID_SUBREQUESTS, 1)}%`,
      r.wallMs < 10_000 ? `${fixed(r.wallMs / 1000, 2)} s` : duration(r.wallMs),
      `${fixed(r.cpuMs / 1000, 2)} s`,
      `${fixed((100 * r.cpuMs) / PAID_CPU_MS, 2)}%`,
      `${fixed(r.cpuMs / r.runners, 2)} ms`,
    ]),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
  );
}

/** What each sweep decided, so a reader can check the mix did what it should. */
export function sweepVerdicts(rows: readonly SweepCost[]): string {
  return markdownTable(
    ["tracked runners", "webhooks seeded", "seeding", "deleted", "kept", "waiting", "gone", "errors", "GitHub calls in the sweep's log"],
    rows.map((r) => [
      r.label,
      int(r.webhooks),
      duration(r.seedSeconds * 1000),
      int(r.verdicts.deleted),
      int(r.verdicts.kept),
      int(r.verdicts.waiting),
      int(r.verdicts.gone),
      int(r.verdicts.errors),
      int(r.githubLogged),
    ]),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
}

/** CPU that each extra tracked runner costs, from the two largest sweeps (they delete as many). */
export function marginalCpu(rows: readonly SweepCost[]): string | undefined {
  const [a, b] = rows.slice(-2);
  if (!a || !b || b.runners === a.runners || a.verdicts.deleted !== b.verdicts.deleted) return undefined;
  const perRunner = (b.cpuMs - a.cpuMs) / (b.runners - a.runners);
  return (
    `Between ${a.label} and ${b.label} tracked runners (both sweeps delete ${a.verdicts.deleted}), each extra runner cost ` +
    `${fixed(perRunner, 2)} ms of workerd CPU; the rest of a sweep is the deletions (a cluster delete and a KV put each), ` +
    `the GitHub calls and fixed costs, which is why CPU per runner falls as the fleet grows. ` +
    `At that rate the 5-minute limit would be reached near ${int(Number((PAID_CPU_MS / perRunner).toPrecision(2)))} tracked runners (an extrapolation).`
  );
}
