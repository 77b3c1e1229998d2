// One synthetic day of GitHub Actions jobs on an ARC scale set: what GitHub
// knows (when each job started and completed, each run completed) and what the
// cluster shows (when each EphemeralRunner is busy and when ARC removes it).
// Both reaper models replay this same trace.
import { seededRng } from "./prng.ts";

export interface DaySpec {
  seed: number;
  jobs: number;
  /** The scale set's maxRunners; the trace is sized so that jobs never wait for one. */
  maxRunners: number;
  cancelledShare: number; // of jobs: their run is cancelled while they run
  hungShare: number; // of jobs: the runner process hangs after the job completed
  /** Job duration: log-normal median and sigma. */
  medianJobSeconds: number;
  jobSigma: number;
  /** Of runs: every job of the run takes longSeconds (uniform), like game, ML or mobile builds. */
  longShare?: number;
  longSeconds?: readonly [number, number];
}

export const DEFAULT_DAY: DaySpec = {
  seed: 20261102,
  jobs: 20_000,
  maxRunners: 500,
  cancelledShare: 0.03,
  hungShare: 0.005,
  medianJobSeconds: 360,
  jobSigma: 0.9,
};

/** The second fleet (issue 25): the same day's shape, a quarter of the runs are builds of 2 to 6 hours. */
export const LONG_JOBS_DAY: DaySpec = {
  ...DEFAULT_DAY,
  seed: 20261103,
  maxRunners: 5_000,
  longShare: 0.25,
  longSeconds: [2 * 3600, 6 * 3600],
};

export type Stuck = "cancelled" | "hung" | null;

export interface TraceJob {
  index: number;
  id: number;
  run: number; // index into runs
  runner: string;
  queuedAt: number; // ms since the day's start
  startedAt: number;
  /** GitHub's completed_at: for a cancelled job, when the cancellation completed it. */
  completedAt: number;
  conclusion: "success" | "failure" | "cancelled";
  /** The runner stays Running after completedAt until a reaper deletes it. */
  stuck: Stuck;
  /** For a runner that is not stuck: when ARC's controller removes it by itself. */
  arcRemovesAt: number | null;
}

export interface TraceRun {
  index: number;
  id: number;
  repo: string;
  queuedAt: number;
  jobs: number[]; // job indexes
  completedAt: number;
  conclusion: "success" | "failure" | "cancelled";
}

export type DeliveryKind = "job-queued" | "job-in_progress" | "job-completed" | "run-requested" | "run-in_progress" | "run-completed";

export interface TraceDelivery {
  /** When GitHub sent it (ms since the day's start). */
  at: number;
  kind: DeliveryKind;
  job: number | null;
  run: number;
}

export interface Trace {
  spec: DaySpec;
  /** Epoch ms of the day's start (a Monday, 00:00 UTC): facts carry real ISO times. */
  epoch: number;
  jobs: TraceJob[];
  runs: TraceRun[];
  deliveries: TraceDelivery[]; // sorted by `at`
  /** Most jobs running at once (stuck runners come on top, and depend on the reaper). */
  peakRunning: number;
}

const DAY_MS = 86_400_000;
const REPOS = ["octo-org/api", "octo-org/web", "octo-org/infra", "octo-org/mobile", "octo-org/docs"];
// Jobs per run: most runs are one or two jobs, some are matrices.
const JOBS_PER_RUN = [
  [1, 50],
  [2, 20],
  [3, 10],
  [4, 10],
  [8, 10],
] as const;

// Pushes at office hours (peak 14:00 UTC), a quiet night; relative rate per hour of the day.
const diurnal = (hour: number): number => 0.15 + Math.exp(-(((hour - 14) / 3.5) ** 2));

export function generateDay(spec: DaySpec = DEFAULT_DAY): Trace {
  const rng = seededRng(spec.seed);
  const epoch = Date.parse("2026-11-02T00:00:00Z");

  // Run arrivals over the day, by rejection sampling of the diurnal rate.
  const runSizes: number[] = [];
  for (let total = 0; total < spec.jobs; ) {
    const size = Math.min(rng.pick(JOBS_PER_RUN), spec.jobs - total);
    runSizes.push(size);
    total += size;
  }
  const maxRate = diurnal(14);
  const arrivals: number[] = [];
  while (arrivals.length < runSizes.length) {
    const t = rng.next() * DAY_MS;
    if (rng.next() * maxRate < diurnal(t / 3_600_000)) arrivals.push(Math.floor(t));
  }
  arrivals.sort((a, b) => a - b);

  const runs: TraceRun[] = [];
  const jobs: TraceJob[] = [];
  for (const [r, size] of runSizes.entries()) {
    const queuedAt = arrivals[r]!;
    const run: TraceRun = {
      index: r,
      id: 7_000_000_000 + r,
      repo: REPOS[Math.floor(rng.next() * REPOS.length)]!,
      queuedAt,
      jobs: [],
      completedAt: 0,
      conclusion: "success",
    };
    // Drawn only when the spec has long runs, so the first fleet's random stream is unchanged.
    const long = spec.longShare !== undefined && spec.longSeconds !== undefined && rng.next() < spec.longShare ? spec.longSeconds : undefined;
    for (let j = 0; j < size; j++) {
      const index = jobs.length;
      const seconds = long ? rng.between(long[0], long[1]) : Math.min(6 * 3600, Math.max(20, rng.logNormal(spec.medianJobSeconds, spec.jobSigma)));
      // ARC scales up a runner per job: pod start takes a few seconds to half a minute.
      const startedAt = queuedAt + Math.floor(rng.between(3_000, 30_000));
      jobs.push({
        index,
        id: 30_000_000_000 + index,
        run: r,
        runner: `arc-runners-x7k2p-runner-${index.toString(36).padStart(5, "0")}`,
        queuedAt,
        startedAt,
        completedAt: startedAt + Math.floor(seconds * 1000),
        conclusion: rng.next() < 0.1 ? "failure" : "success",
        stuck: null,
        arcRemovesAt: null,
      });
      run.jobs.push(index);
    }
    runs.push(run);
  }

  // Cancel whole runs, in random order, until the cancelled jobs reach their share:
  // a cancellation completes every job still running at that moment, and those runners stay.
  const order = runs.map((r) => r.index);
  for (let i = order.length - 1; i > 0; i--) {
    const k = Math.floor(rng.next() * (i + 1));
    [order[i], order[k]] = [order[k]!, order[i]!];
  }
  let cancelled = 0;
  for (const r of order) {
    if (cancelled >= spec.cancelledShare * spec.jobs) break;
    const run = runs[r]!;
    const members = run.jobs.map((i) => jobs[i]!);
    const firstStart = Math.min(...members.map((j) => j.startedAt));
    const lastEnd = Math.max(...members.map((j) => j.completedAt));
    const cancelAt = firstStart + Math.floor(rng.between(0.1, 0.9) * (lastEnd - firstStart));
    for (const job of members) {
      if (job.startedAt <= cancelAt && job.completedAt > cancelAt) {
        job.completedAt = cancelAt + Math.floor(rng.between(1_000, 8_000)); // the runner acknowledges the cancel
        job.conclusion = "cancelled";
        job.stuck = "cancelled";
        cancelled++;
      }
    }
    if (members.some((j) => j.stuck === "cancelled")) run.conclusion = "cancelled";
  }
  // Hung runners: the job completed on GitHub, the runner process never exited.
  const candidates = jobs.filter((j) => j.stuck === null);
  for (let hung = 0; hung < Math.round(spec.hungShare * spec.jobs); ) {
    const job = candidates[Math.floor(rng.next() * candidates.length)]!;
    if (job.stuck !== null) continue;
    job.stuck = "hung";
    hung++;
  }
  for (const job of jobs) {
    // A runner that exits normally is removed by ARC's controller within seconds.
    if (job.stuck === null) job.arcRemovesAt = job.completedAt + Math.floor(rng.between(3_000, 15_000));
  }
  for (const run of runs) {
    const members = run.jobs.map((i) => jobs[i]!);
    run.completedAt = Math.max(...members.map((j) => j.completedAt)) + 2_000;
    if (run.conclusion !== "cancelled" && members.some((j) => j.conclusion === "failure")) run.conclusion = "failure";
  }

  const deliveries: TraceDelivery[] = [];
  for (const run of runs) {
    deliveries.push({ at: run.queuedAt, kind: "run-requested", job: null, run: run.index });
    deliveries.push({ at: Math.min(...run.jobs.map((i) => jobs[i]!.startedAt)), kind: "run-in_progress", job: null, run: run.index });
    deliveries.push({ at: run.completedAt, kind: "run-completed", job: null, run: run.index });
  }
  for (const job of jobs) {
    deliveries.push({ at: job.queuedAt, kind: "job-queued", job: job.index, run: job.run });
    deliveries.push({ at: job.startedAt, kind: "job-in_progress", job: job.index, run: job.run });
    deliveries.push({ at: job.completedAt, kind: "job-completed", job: job.index, run: job.run });
  }
  deliveries.sort((a, b) => a.at - b.at);

  const peakRunning = peakConcurrency(jobs);
  if (peakRunning > spec.maxRunners) throw new Error(`day: ${peakRunning} jobs run at once, over maxRunners ${spec.maxRunners}: jobs would wait`);
  return { spec, epoch, jobs, runs, deliveries, peakRunning };
}

function peakConcurrency(jobs: readonly TraceJob[]): number {
  const edges: [number, number][] = [];
  for (const j of jobs) {
    edges.push([j.startedAt, 1]);
    edges.push([j.completedAt, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let busy = 0;
  let peak = 0;
  for (const [, d] of edges) peak = Math.max(peak, (busy += d));
  return peak;
}
