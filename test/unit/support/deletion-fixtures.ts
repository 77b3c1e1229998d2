// The watched deletion the unit tests of held deletions share: ours, made
// 1,000 s before NOW for job 7, due for a look at NOW.
import type { DeletionWatch } from "../../../src/model/runner.ts";

export const NOW = Date.parse("2026-12-01T12:00:00Z");

export const heldWatch: DeletionWatch = {
  rowId: 1,
  name: "r",
  cluster: "default",
  namespace: "arc",
  uid: "u1",
  repo: "o/r",
  jobId: 7,
  installationId: 1,
  deletedAt: NOW - 1_000_000,
  dueAt: NOW,
  reason: "job 7 is over",
};
