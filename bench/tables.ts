// Tables 1, 2 and 3 as Markdown (table 4 is built by day-table.ts).
import type { ListShape } from "./list-shape-bytes.ts";
import type { ProfileLine } from "./cpu-profile.ts";
import type { IntakeRow, IntakeSplit } from "./intake.ts";
import { fixed, int, markdownTable } from "./markdown.ts";
import type { AlarmBatch } from "./alarm-batch.ts";
import type { SnapshotApply } from "./snapshot-apply.ts";
import type { OneSweep, SweepCost } from "./sweep-cost.ts";

export const SUBREQUEST_GOAL = 40;
export const CPU_GOAL_MS = 1_000;

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

/** Recorded deliveries beside the durable minimum (a signature check and one INSERT in a SQLite Durable Object), same run. */
export function intakeDurableTable(rows: readonly IntakeRow[]): string {
  const measured = rows.filter((r) => r.durable);
  return markdownTable(
    [
      "connections",
      "arc-reaper req/s",
      "p50 ms",
      "p99 ms",
      "durable minimum req/s",
      "p50 ms",
      "p99 ms",
      "ratio to the durable minimum",
      "workerd CPU ms/req (arc-reaper / durable minimum)",
      "errors",
    ],
    measured.map((r) => {
      const d = r.durable!;
      return [
        String(r.concurrency),
        fixed(r.product.perSecond, 1),
        fixed(r.product.p50Ms, 1),
        fixed(r.product.p99Ms, 1),
        fixed(d.perSecond, 1),
        fixed(d.p50Ms, 1),
        fixed(d.p99Ms, 1),
        fixed(r.product.perSecond / d.perSecond, 2),
        `${fixed(r.product.cpuMsPerRequest, 1)} / ${fixed(d.cpuMsPerRequest, 1)}`,
        `${r.product.errors} / ${d.errors}`,
      ];
    }),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
}

/** The headline line issue 25 asks for, in its exact form. */
export function durableHeadline(rows: readonly IntakeRow[]): string {
  const ratio = (c: number) => {
    const r = rows.find((x) => x.concurrency === c);
    return r?.durable ? `${fixed(r.product.perSecond / r.durable.perSecond, 2)}×` : "n/a";
  };
  return `Recorded deliveries at 1, 8 and 32 connections are ${ratio(1)}, ${ratio(8)} and ${ratio(32)} the durable minimum`;
}

/** Where intake time goes, by difference: baseline → parsed and counted (ignored) → recorded in the ledger. */
export function intakeSplitTable(s: IntakeSplit): string {
  const rows: [string, string, IntakeSplit["baseline"]][] = [
    ["baseline", "verify the signature, answer 202", s.baseline],
    ["arc-reaper, another event (push)", "+ Hono, settings, JSON.parse, a log line; the count RPC to the ledger (1 counter row) after the answer", s.ignored],
    ["arc-reaper, workflow_job.in_progress", "+ facts from the payload, the awaited RPC to the ledger: the runner row, the counter, the alarm", s.recorded],
  ];
  return markdownTable(
    ["request", "what it does", "req/s", "p50 ms", "p99 ms", "workerd CPU ms/req", "CPU over the baseline"],
    rows.map(([name, what, r]) => [
      name,
      what,
      fixed(r.perSecond, 1),
      fixed(r.p50Ms, 1),
      fixed(r.p99Ms, 1),
      fixed(r.cpuMsPerRequest, 2),
      `+${fixed(r.cpuMsPerRequest - s.baseline.cpuMsPerRequest, 2)}`,
    ]),
    [2, 3, 4, 5, 6],
  );
}

/** The middle value (the lower of the two middles for an even count). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;

const verbs = (s: OneSweep) =>
  `${int(s.clusterCalls)} (${
    Object.entries(s.clusterByVerb)
      .map(([verb, n]) => `${n} ${verb}`)
      .join(", ") || "none"
  })`;

/** The arithmetic mean. */
export const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

/** Table 2: 300 live runners in front of growing history. */
export function historyTable(rows: readonly SweepCost[]): string {
  // The mean, not the median: each figure moves in 10 ms clock ticks, and the mean of several keeps more of the signal.
  const base = rows[0] ? mean(rows[0].steady.map((s) => s.cpuMs)) : Number.NaN;
  return markdownTable(
    [
      "closed rows in history",
      "open rows judged",
      "rows read: first / steady",
      "rows written: first / steady",
      "cluster calls",
      "GitHub calls",
      "workerd CPU: first",
      `steady (mean of ${rows[0]?.steady.length ?? 0})`,
      "steady ÷ 0-history",
    ],
    rows.map((r) => {
      const steady = mean(r.steady.map((s) => s.cpuMs));
      const s = r.steady[r.steady.length - 1]!;
      return [
        int(r.history),
        int(s.checked),
        `${int(r.first.rowsRead)} / ${int(s.rowsRead)}`,
        `${int(r.first.rowsWritten)} / ${int(s.rowsWritten)}`,
        verbs(s),
        `${int(r.first.githubCalls)} / ${int(s.githubCalls)}`,
        `${int(r.first.cpuMs)} ms`,
        `${int(steady)} ms (${r.steady.map((x) => int(x.cpuMs)).join(", ")})`,
        `${fixed(steady / base, 2)}×`,
      ];
    }),
    [1, 2, 3, 5, 6, 7, 8],
  );
}

/** Table 3: the sweeps over 10,000 live runners, one row each. */
export function bigSweepTable(r: SweepCost, goals: { subrequests: number; cpuMs: number } = { subrequests: SUBREQUEST_GOAL, cpuMs: CPU_GOAL_MS }): string {
  const firsts = [r.first, ...(r.firstMore ?? [])];
  const sweeps: [string, OneSweep][] = [
    ...firsts.map((s, i): [string, OneSweep] => [firsts.length > 1 ? `first ${i + 1}` : "first", s]),
    ...r.steady.map((s, i): [string, OneSweep] => [`steady ${i + 1}`, s]),
  ];
  return markdownTable(
    [
      "sweep",
      "open rows judged",
      "rows read",
      "rows written",
      "decision lines",
      "cluster calls",
      "GitHub calls",
      "subrequests",
      `≤ ${goals.subrequests}`,
      "wall",
      "workerd CPU",
      `< ${goals.cpuMs / 1000} s`,
    ],
    sweeps.map(([label, s]) => {
      const sub = s.clusterCalls + s.githubCalls;
      return [
        label,
        int(s.checked),
        int(s.rowsRead),
        int(s.rowsWritten),
        int(s.decisionLines),
        verbs(s),
        int(s.githubCalls),
        int(sub),
        sub <= goals.subrequests ? "yes" : "no",
        `${fixed(s.wallMs / 1000, 2)} s`,
        `${fixed(s.cpuMs / 1000, 2)} s`,
        s.cpuMs < goals.cpuMs ? "yes" : "no",
      ];
    }),
    [1, 2, 3, 4, 5, 6, 7, 9, 10],
  );
}

/** Issue 25's goals for a direct-mode sweep over 50,000 live runners (steady), and its headline line. */
export const FLEET_GOALS = { subrequests: 120, cpuMs: 2_000, firstCpuMs: 10_000 };
export function fleetHeadline(r: SweepCost): string {
  const firsts = [r.first, ...(r.firstMore ?? [])];
  const most = Math.max(...firsts.map((s) => s.cpuMs));
  return (
    `A steady sweep over ${int(r.runners)} live runners takes ${fixed(median(r.steady.map((s) => s.cpuMs)) / 1000, 2)} s of workerd CPU\n\n` +
    `Their first look took ${firsts.length} sweep${firsts.length > 1 ? "s" : ""} (every runner judged within ${firsts.length - 1} minute${firsts.length === 2 ? "" : "s"} at a sweep a minute), ` +
    `the largest ${fixed(most / 1000, 2)} s of workerd CPU (goal: under ${FLEET_GOALS.firstCpuMs / 1000} s).`
  );
}

/** The largest self times of a CPU profile. */
export function profileTable(top: readonly ProfileLine[], rows = 12): string {
  return markdownTable(
    ["function", "module (from the bundle)", "self ms", "share of sampled CPU"],
    top.slice(0, rows).map((l) => [`\`${l.fn}\``, l.module || l.where || "(runtime)", fixed(l.selfMs, 1), `${fixed(l.share * 100, 1)}%`]),
    [2, 3],
  );
}

/** Bytes per runner of one list page in each listing shape. */
export function listShapesTable(shapes: readonly ListShape[]): string {
  return markdownTable(
    ["listing shape (500 stand-in objects a page)", "bytes a runner"],
    shapes.map((s) => [s.shape, int(s.bytes)]),
    [1],
  );
}

/** The agent's snapshot of a large fleet applied by the ledger (agent mode): each part's CPU, the whole, then sweeps over the view. */
export const SNAPSHOT_PART_GOAL_MS = 30_000;
export function snapshotApplyTable(r: SnapshotApply): string {
  const s = (ms: number) => `${fixed(ms / 1000, 2)} s`;
  const rows: string[][] = [
    ["messages (runners each)", `${int(r.messages)} (${int(Math.ceil(r.runners / r.messages))})`],
    ["largest message", `${fixed(r.largestBytes / 1024, 1)} KiB`],
    ["CPU per part, sent one at a time: max / median", `${int(Math.max(...r.partCpuMs))} ms / ${int(median(r.partCpuMs))} ms`],
    [`largest part under ${SNAPSHOT_PART_GOAL_MS / 1000} s of CPU`, Math.max(...r.partCpuMs) < SNAPSHOT_PART_GOAL_MS ? "yes" : "no"],
    ["CPU of all parts, one at a time", s(r.partsTotalCpuMs)],
    ["the whole snapshot back to back (replacing the view): CPU / wall", `${s(r.wholeCpuMs)} / ${s(r.wholeWallMs)}`],
    ["runners in the ledger's view after each", r.viewRunners.map(int).join(" / ")],
    ...r.sweeps.map((w, i) => [
      `sweep ${i + 1} over the view: judged, deferred, GitHub calls, rows read / written, decision lines`,
      `${int(w.checked)}, ${int(w.deferred)}, ${int(w.githubCalls)}, ${int(w.rowsRead)} / ${int(w.rowsWritten)}, ${int(w.decisionLines)}; ${s(w.cpuMs)} CPU, ${s(w.wallMs)} wall`,
    ]),
    ...(r.sweepError ? [["sweeps stopped", r.sweepError]] : []),
    ["load average (start, after the parts, after the whole, after the sweeps)", r.load.join(", ")],
  ];
  return markdownTable([`${int(r.runners)} runners, agent mode`, "measured"], rows);
}

/** One alarm run over a full batch of due runners (direct mode, every watched namespace read by name). */
export const ALARM_RUN_GOAL_MS = 5_000;
export function alarmBatchTable(r: AlarmBatch): string {
  const perRun = r.cpuMs / Math.max(1, r.runs.length);
  return markdownTable(
    [
      "due runners",
      "namespaces",
      "rows in the ledger",
      "alarm runs (judged each)",
      "GETs",
      "DELETEs",
      "workerd CPU per run",
      `< ${ALARM_RUN_GOAL_MS / 1000} s`,
      "wall",
      "load average",
    ],
    [
      [
        int(r.batch),
        int(r.namespaces),
        int(r.batch + r.background),
        `${r.runs.length} (${r.runs.map((x) => int(x.judged)).join(", ")})`,
        int(r.gets),
        int(r.deletes),
        `${fixed(perRun / 1000, 2)} s`,
        perRun < ALARM_RUN_GOAL_MS ? "yes" : "no",
        `${fixed(r.wallMs / 1000, 1)} s`,
        r.load.join(", "),
      ],
    ],
    [0, 1, 2, 4, 5, 6, 8],
  );
}
