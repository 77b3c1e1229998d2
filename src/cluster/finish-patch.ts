// The JSON patch that finishes a deletion ARC holds (REAPER_FINISH_STUCK): it
// tests the object's uid and the very finalizers we saw, then removes them; the
// API server applies all of it or none (a failed test answers 422, a changed
// uid 409). Only ARC's own finalizers are ever removed. Pure: the agent shares it
// (.dockerignore); the call that sends it, and what its answer means, is
// finish-deletion.ts, for direct mode and the agent alike.

/** ARC's finalizers on an EphemeralRunner are in its API group (e.g. ephemeralrunner.actions.github.com/finalizer). */
export const isArcFinalizer = (f: string): boolean => /^([a-z0-9-]+\.)*actions\.github\.com\/[A-Za-z0-9._-]+$/.test(f);

/**
 * A held deletion finished, as the Cluster interface reports it (REAPER_FINISH_STUCK): ARC's finalizers removed by a
 * JSON patch that tests the uid and the finalizers first. gone: 404. refused: 403 (the Role lacks `patch`: the overlay is not applied).
 * conflict: 409 or 422 (a test failed: the object changed). failed: anything else.
 */
export type FinishOutcome =
  | { kind: "finished" }
  | { kind: "gone" }
  | { kind: "refused"; why: string }
  | { kind: "conflict"; why: string }
  | { kind: "failed"; status: number | null; why: string };

export function finishPatch(uid: string, finalizers: readonly string[]): unknown[] {
  return [
    { op: "test", path: "/metadata/uid", value: uid },
    { op: "test", path: "/metadata/finalizers", value: [...finalizers] },
    { op: "remove", path: "/metadata/finalizers" },
  ];
}
