// The Failed runner the unit tests of the Failed look share: one object ARC
// marked Failed 600 s before NOW, and the open row the ledger keeps for it.
import type { FailedRunner } from "../../../src/model/failed.ts";
import type { ClusterRunner } from "../../../src/model/runner.ts";

export const NOW = Date.parse("2026-12-01T12:00:00Z");
export const iso = (ms: number): string => new Date(ms).toISOString();

export const failedObject = (over: Partial<ClusterRunner> = {}): ClusterRunner => ({
  cluster: "default",
  namespace: "arc",
  name: "f-1",
  uid: "u-1",
  phase: "Failed",
  arcReason: "PodCreateFailed",
  arcMessage: "denied",
  failedAt: iso(NOW - 600_000),
  createdAt: iso(NOW - 700_000),
  scaleSet: "set-a",
  ...over,
});

export const failedRow = (over: Partial<FailedRunner> = {}): FailedRunner => ({
  id: 1,
  cluster: "default",
  namespace: "arc",
  name: "f-1",
  uid: "u-1",
  scaleSet: "set-a",
  arcReason: "PodCreateFailed",
  arcMessage: "denied",
  failedAt: NOW - 600_000,
  firstSeen: NOW - 600_000,
  state: "failed",
  reason: "",
  story: [{ at: iso(NOW - 60_000), what: "seen Failed", source: "sweep" }],
  ...over,
});
