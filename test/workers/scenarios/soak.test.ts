// Issue 4's soak: a few thousand randomized job lifecycles (duplicates,
// reordering, dropped deliveries, API faults on both stand-ins, re-runs)
// through intake and many sweeps. With issue 10's teeth: names that come back
// while their facts are open, Access-style answers on list, read and delete,
// completions lost beyond the look-back, 403 secondary rate limits. It prints
// its figures.
import { expect, inject, it } from "vitest";
import { runFleet } from "../support/fleet.ts";
import { expectFleetSafe, expectSlotsSafe } from "../support/fleet-expect.ts";
import { report } from "../support/worker.ts";

const SEED = Number(inject("soakSeed") ?? 20261130);

it(`soak: 2,000 lifecycles with drops and faults, Failed runners and held deletions, seed ${SEED}`, { timeout: 600_000 }, async () => {
  const figures = await runFleet({
    seed: SEED,
    lifecycles: 2000,
    duplicateRate: 0.1,
    dropRate: 0.08,
    faultSweeps: 10,
    graceSeconds: 300,
    boundSeconds: 7200,
    githubBudget: 100,
    deliverySweeps: 8,
    maxSweeps: 80,
    slots: true,
    clockHazards: true,
    // Every 4th hung runner held: each held one whose job runs costs a GitHub read every REAPER_STUCK_SECONDS.
    heldHungEvery: 4,
  });
  // Printed whatever the outcome: the closing note quotes these.
  await report(`soak figures: ${JSON.stringify(figures)}`);
  expectFleetSafe(figures);
  // One reconcile (issue 15): twins across two namespaces, unseen runners that vanish or are explained.
  expect(figures.twins).toBeGreaterThan(0);
  expect(figures.unseenVanishPlanned + figures.unseenExplainedPlanned).toBeGreaterThan(0);
  // What happened, not what was planned: each unseen runner held by the ledger as an unseen row, then left the cluster
  // undeleted, or was explained by its late webhook (a tracked row of its run, the unseen row ended). The fleet plays
  // them after the fault sweeps, whose failing lists would hide them.
  expect(figures.unseenVanished).toBe(figures.unseenVanishPlanned);
  expect(figures.unseenExplained).toBe(figures.unseenExplainedPlanned);
  expect(figures.githubCallsDuringBackOff).toBe(0);
  expect(figures.credentialsToOtherHosts).toBe(0);
  // The teeth were there: at least 1% of new runners took a name with open facts, and every fault kind came.
  expect(figures.nameReuses).toBeGreaterThanOrEqual(figures.runners / 100);
  expect(figures.lostCompletions).toBeGreaterThan(0);
  expect(figures.accessFaults).toBeGreaterThan(0);
  expect(figures.accessAnsweredDeletes).toBeGreaterThan(0);
  // A broken proxy's lists (issue 46): read as unreadable namespaces, never as runners absent or idle.
  expect(figures.malformedTables).toBeGreaterThan(0);
  // The clock stepped both ways and the alarm failed for a while.
  expect([figures.clockSteps, figures.alarmFailures]).toEqual([2, 3]);
  expect(figures.shortPages).toBeGreaterThan(0);
  expect(figures.secondaryLimits).toBeGreaterThan(0);
  expect(figures.mostGithubCallsInOneSweep).toBeLessThanOrEqual(figures.githubBudget);
  expect(figures.drops).toBeGreaterThan(0);
  expect(figures.redelivered).toBe(figures.drops); // every dropped delivery asked for again, once
  expect(figures.faultsInjected).toBeGreaterThan(0);
  // Issue 24: 0 busy runners deleted, 0 finalizers removed while GitHub says the job runs; Failed runners freed, held deletions finished.
  expectSlotsSafe(figures);
  expect(figures.heldWhileRunning).toBeGreaterThan(0);
});

it(`soak in agent mode: 600 lifecycles, views that lag, drops and faults, seed ${SEED}`, { timeout: 600_000 }, async () => {
  const figures = await runFleet({
    seed: SEED,
    lifecycles: 600,
    duplicateRate: 0.1,
    dropRate: 0.08,
    faultSweeps: 6,
    graceSeconds: 300,
    boundSeconds: 7200,
    githubBudget: 100,
    deliverySweeps: 6,
    maxSweeps: 80,
    clockHazards: true,
    repointCluster: true,
    agent: true,
  });
  await report(`soak agent figures: ${JSON.stringify(figures)}`);
  expectFleetSafe(figures);
  expect(figures.githubCallsDuringBackOff).toBe(0);
  expect(figures.redelivered).toBe(figures.drops);
  expect([figures.clockSteps, figures.alarmFailures, figures.clusterRepoints, figures.identityChanges]).toEqual([2, 3, 1, 1]);
  expect(figures.agentStalls + figures.agentRelists + figures.agentOutages).toBeGreaterThan(0);
  expect(figures.unseenVanishPlanned + figures.unseenExplainedPlanned).toBeGreaterThan(0);
  expect(figures.unseenVanished).toBe(figures.unseenVanishPlanned);
  expect(figures.unseenExplained).toBe(figures.unseenExplainedPlanned);
});
