// The live runners a sweep-cost run seeds: a mix as the sweep meets it once the
// alarm has done its work, as webhooks (for the ledger), EphemeralRunners (for
// the cluster stand-in). Completions past the grace are due at once, so the
// alarm reaps ("finished") or closes ("gone") them before the sweep runs.
export type Role = "running" | "waiting" | "finished" | "gone";

/** Share of the live runners per role; "running" takes what the others leave. */
export const MIX: Record<Exclude<Role, "running">, number> = {
  waiting: 0.05, // job completed < grace ago, runner still there: the alarm is due later; the sweep keeps it open
  finished: 0.005, // job completed 10 minutes ago, runner still there (hung): the alarm deletes it before the sweep
  gone: 0.05, // job completed 20 minutes ago, ARC already removed the runner: the alarm closes it before the sweep
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

export function mixFor(count: number, now: number, mix: Record<Exclude<Role, "running">, number> = MIX): SeedRunner[] {
  const roles: Role[] = [];
  for (const [role, share] of Object.entries(mix) as [Role, number][]) {
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
        // 1 to 45 minutes old: none reaches the hourly recheck (REAPER_RECHECK_SECONDS=3600) while the bench runs.
        return { ...base, startedAt: iso(MIN + ((index * 7919) % 45) * MIN), inCluster: true };
      case "waiting":
        return { ...base, startedAt: iso(20 * MIN), completedAt: iso(0), inCluster: true };
      case "finished":
        return { ...base, startedAt: iso(30 * MIN), completedAt: iso(10 * MIN), inCluster: true };
      case "gone":
        return { ...base, startedAt: iso(40 * MIN), completedAt: iso(20 * MIN), inCluster: false };
    }
  });
}

/**
 * Every runner busy (the fleet's table): at 50,000 the usual mix leaves the alarm 2,750 runners to delete at
 * 50 a minute and 2,500 to close, each read in every namespace, for most of an hour. (With every runner busy the
 * first sweep over 50,000 still did not answer its trigger within 300 s, three times: an open question of issue 25.)
 */
export const ALL_RUNNING: Record<Exclude<Role, "running">, number> = { waiting: 0, finished: 0, gone: 0 };
