// Randomized fleets: many runners whose real payloads arrive duplicated and shuffled across
// sweeps, whose job fields ARC's listener may write late or never (only the runner id names
// them then), while the clock steps both ways and the alarm fails for a while, end with
// exactly the finished runners deleted, once.
import { expect, it } from "vitest";
import { runFleet } from "../support/fleet.ts";
import { expectFleetSafe, expectSlotsSafe } from "../support/fleet-expect.ts";
import { report } from "../support/worker.ts";

it.each([11, 42, 2026])("duplicated and shuffled deliveries, seed %i: exactly the finished runners deleted, each once", async (seed) => {
  const figures = await runFleet({
    seed,
    lifecycles: 80,
    duplicateRate: 0.3,
    dropRate: 0,
    faultSweeps: 0,
    graceSeconds: 300,
    boundSeconds: 7200,
    githubBudget: 100,
    deliverySweeps: 5,
    maxSweeps: 60,
    clockHazards: true,
  });
  await report(`randomized figures: ${JSON.stringify(figures)}`);
  expectFleetSafe(figures);
  // The clock stepped both ways and the alarm failed for a while (issue 46): the invariants above held through them.
  expect([figures.clockSteps, figures.alarmFailures]).toEqual([2, 3]);
  // The teeth were there: twins across two namespaces, unseen runners that vanish or are explained, duplicates.
  expect(figures.twins).toBeGreaterThan(0);
  expect(figures.unseenVanishPlanned + figures.unseenExplainedPlanned).toBeGreaterThan(0);
  // What happened, not what was planned: each unseen runner held by the ledger as an unseen row, then left the cluster
  // undeleted, or was explained by its late webhook (a tracked row of its run, the unseen row ended).
  expect(figures.unseenVanished).toBe(figures.unseenVanishPlanned);
  expect(figures.unseenExplained).toBe(figures.unseenExplainedPlanned);
  expect(figures.duplicates).toBeGreaterThan(0);
  // Job fields the listener lost or wrote late, and twins only a runner id tells apart: reaped by id, never confused.
  expect(figures.jobPatchesLost).toBeGreaterThan(0);
  expect(figures.jobPatchesLate).toBeGreaterThan(0);
  expect(figures.twinsByIdOnly).toBeGreaterThan(0);
  expect(figures.nameReuses).toBeGreaterThan(0);
});

// Issue 24: Failed runners (REAPER_FAILED_SECONDS=120) and deletions ARC's finalizer holds (REAPER_FINISH_STUCK=true),
// audited against every DELETE and PATCH the stand-in recorded and GitHub's answer at that moment.
it.each([42, 2026])(
  "Failed runners and held deletions, seed %i: Failed ones freed on time and once, held ones finished only once GitHub says completed; 0 busy runners deleted, 0 finalizers removed while the job runs",
  async (seed) => {
    const figures = await runFleet({
      seed,
      lifecycles: 80,
      duplicateRate: 0.3,
      dropRate: 0,
      faultSweeps: 0,
      graceSeconds: 300,
      boundSeconds: 7200,
      githubBudget: 100,
      deliverySweeps: 5,
      maxSweeps: 60,
      slots: true,
    });
    await report(`randomized slots figures: ${JSON.stringify(figures)}`);
    expectFleetSafe(figures);
    expectSlotsSafe(figures);
    expect(figures.heldWhileRunning).toBeGreaterThan(0);
  },
);

it.each([7, 99])("agent mode, views that lag (stalled watches, relists, outages), seed %i: exactly the finished runners deleted, each once", async (seed) => {
  const figures = await runFleet({
    seed,
    lifecycles: 80,
    duplicateRate: 0.3,
    dropRate: 0,
    faultSweeps: 0,
    graceSeconds: 300,
    boundSeconds: 7200,
    githubBudget: 100,
    deliverySweeps: 5,
    maxSweeps: 60,
    agent: true,
    clockHazards: true,
    repointCluster: true,
  });
  await report(`randomized agent figures: ${JSON.stringify(figures)}`);
  expectFleetSafe(figures);
  // The clock stepped both ways, the alarm failed for a while, and the cluster's name pointed at another cluster.
  expect([figures.clockSteps, figures.alarmFailures, figures.clusterRepoints, figures.identityChanges]).toEqual([2, 3, 1, 1]);
  expect(figures.agentStalls + figures.agentRelists + figures.agentOutages).toBeGreaterThan(0);
});
