// The tracked runners a sweep-cost run seeds: a realistic mix, as webhooks
// (for arc-reaper's KV), EphemeralRunners (for the cluster stand-in) and, for
// runners past the bound, the job on the GitHub stand-in.
export type Role = "running" | "waiting" | "finished" | "cancelled" | "gone" | "over-bound";

/** Share of the tracked runners per role; "running" takes what the others leave. */
export const MIX: Record<Exclude<Role, "running">, number> = {
  waiting: 0.05, // job completed < grace ago: wait
  finished: 0.05, // job completed > grace ago, runner still there (hung): delete
  cancelled: 0.02, // run cancelled > grace ago (workflow_run only): delete
  gone: 0.05, // job completed, ARC already removed the runner: close the facts
  "over-bound": 0.01, // started 6 days ago, still in_progress on GitHub: ask GitHub, delete
};

export interface SeedRunner {
  index: number;
  role: Role;
  runner: string;
  runId: number;
  jobId: number;
  startedAt: string;
  completedAt?: string;
  inCluster: boolean;
}

const MIN = 60_000;

export function mixFor(count: number, now: number): SeedRunner[] {
  const roles: Role[] = [];
  for (const [role, share] of Object.entries(MIX) as [Role, number][]) {
    for (let i = 0; i < Math.round(count * share); i++) roles.push(role);
  }
  while (roles.length < count) roles.push("running");
  // Spread the roles over the names, as a real list would interleave them.
  const spread = roles.map((role, i) => ({ role, key: (i * 2_654_435_761) % 4_294_967_296 })).sort((a, b) => a.key - b.key);
  return spread.map(({ role }, index) => {
    const iso = (ms: number) => new Date(now - ms).toISOString();
    const base = { index, role, runner: `arc-runners-x-runner-${index}`, runId: 100_000 + index, jobId: 500_000 + index };
    switch (role) {
      case "running":
        return { ...base, startedAt: iso(MIN + ((index * 7919) % 60) * MIN), inCluster: true };
      case "waiting":
        return { ...base, startedAt: iso(20 * MIN), completedAt: iso(0), inCluster: true };
      case "finished":
        return { ...base, startedAt: iso(30 * MIN), completedAt: iso(10 * MIN), inCluster: true };
      case "cancelled":
        return { ...base, startedAt: iso(30 * MIN), completedAt: iso(10 * MIN), inCluster: true };
      case "gone":
        return { ...base, startedAt: iso(40 * MIN), completedAt: iso(20 * MIN), inCluster: false };
      case "over-bound":
        return { ...base, startedAt: iso(6 * 24 * 60 * MIN), inCluster: true };
    }
  });
}
