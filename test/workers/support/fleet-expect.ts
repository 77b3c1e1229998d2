// What every randomized and soak fleet must show, whatever its mode and faults.
import { expect } from "vitest";
import type { FleetFigures } from "./fleet-types.ts";

export function expectFleetSafe(f: FleetFigures): void {
  expect(f.wrongfulDeletions).toBe(0);
  expect(f.deletions).toBeGreaterThan(0);
  expect(f.deletedTwice).toBe(0);
  expect(f.goneWhileInCluster).toBe(0);
  // ...and the audit that counts it saw runners close as gone (a zero over nothing proves nothing).
  expect(f.goneRightly).toBeGreaterThan(0);
  expect(f.leftBehind).toBe(0);
  // One reconcile (issue 15): a runner a webhook explained is never asked about.
  expect(f.githubCallsForExplained).toBe(0);
  expect(f.sweepsToConverge).toBeGreaterThan(0);
  // Every sweep ran, whatever the clock did (a sweep runs once a minute and the fleet's come a minute apart).
  expect(f.sweepsSkipped).toBe(0);
  // The twins happened, not only were planned: each busy twin reaped, each idle twin kept.
  expect(f.twinsReaped).toBe(f.twins);
  expect(f.idleTwinsKept).toBe(f.twins);
  // Alarm runs follow the runners due (100 a run), never faults: two alarm times a minute.
  expect(f.mostAlarmRunsInAMinute).toBeLessThanOrEqual(2 * (1 + Math.ceil(f.runners / 100)));
}

/** With `slots` (issue 24): Failed runners freed on time and once, held deletions finished only once GitHub says completed. */
export function expectSlotsSafe(f: FleetFigures): void {
  expect(f.busyDeleted).toBe(0);
  expect(f.finalizersRemovedWhileRunning).toBe(0);
  expect(f.failedDeletedEarly).toBe(0);
  expect(f.failedDeletedTwice).toBe(0);
  // The teeth were there: Failed runners freed, held deletions finished, hung runners held while their job runs.
  expect(f.failedDeleted).toBe(f.failedRunners);
  expect(f.failedDeleted).toBeGreaterThan(0);
  expect(f.heldFinished).toBe(f.heldDeletions);
  expect(f.heldFinished).toBeGreaterThan(0);
}
