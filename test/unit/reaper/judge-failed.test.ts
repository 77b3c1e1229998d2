// Row 15 of the decision table: a runner ARC marked Failed (src/reaper/judge-failed.ts).
import { describe, expect, it } from "vitest";
import { judgeFailed, type FailedInput } from "../../../src/reaper/judge-failed.ts";
import type { FailedRunner } from "../../../src/model/failed.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const row = (o: Partial<FailedRunner> = {}): FailedRunner => ({
  cluster: "default",
  namespace: "arc",
  name: "set-abc-runner-xyz12",
  uid: "u1",
  scaleSet: "set",
  arcReason: "PodCreateFailed",
  arcMessage: "quota exceeded",
  failedAt: NOW - 3_600_000,
  firstSeen: NOW - 3_000_000,
  createdAt: NOW - 3_700_000,
  state: "failed",
  reason: "",
  story: [],
  ...o,
});
const input = (o: Partial<FailedInput> = {}): FailedInput => ({
  row: row(),
  runner: { namespace: "arc", name: "set-abc-runner-xyz12", uid: "u1", phase: "Failed" },
  now: NOW,
  failedSeconds: 600,
  recentlyDeleted: 0,
  ...o,
});

describe("judgeFailed", () => {
  it("keeps and shows it when REAPER_FAILED_SECONDS is unset, whatever its age", () => {
    expect(judgeFailed(input({ failedSeconds: undefined }))).toEqual({
      verdict: "keep",
      code: "NeverDeleted",
      reason:
        "ARC marked it Failed 3600s ago (PodCreateFailed: quota exceeded); it holds a slot of scale set set; REAPER_FAILED_SECONDS is unset: never deleted",
    });
  });

  it("deletes it REAPER_FAILED_SECONDS after it failed, quoting ARC's message", () => {
    expect(judgeFailed(input())).toEqual({
      verdict: "delete",
      code: "FailedLong",
      reason:
        "ARC marked it Failed 3600s ago (PodCreateFailed: quota exceeded); it holds a slot of scale set set; failed at least REAPER_FAILED_SECONDS=600 ago: deleted so ARC can make a new one",
    });
    expect(judgeFailed(input({ row: row({ failedAt: NOW - 599_000 }) }))).toMatchObject({ verdict: "keep", code: "NotDue", dueAt: NOW + 1000 });
    expect(judgeFailed(input({ row: row({ failedAt: NOW - 600_000 }) }))).toMatchObject({ verdict: "delete", code: "FailedLong" });
  });

  it("a replacement waits REAPER_FAILED_SECONDS from its creation too (once per that time per slot), and says its scale set keeps failing", () => {
    const v = judgeFailed(input({ row: row({ failedAt: NOW - 3_600_000, createdAt: NOW - 60_000 }), recentlyDeleted: 2 }));
    expect(v).toMatchObject({ verdict: "keep", code: "NotDue", dueAt: NOW + 540_000 });
    expect(v.reason).toMatch(/; replacements keep failing: 2 of scale set set deleted in the last 600s$/);
  });

  it("never deletes one carrying a run, one being deleted, or one already deleted", () => {
    expect(judgeFailed(input({ runner: { namespace: "arc", name: "n", uid: "u1", phase: "Failed", workflowRunId: 5 } }))).toMatchObject({
      verdict: "keep",
      code: "CarriesRun",
    });
    expect(
      judgeFailed(input({ runner: { namespace: "arc", name: "n", uid: "u1", phase: "Failed", deletionTimestamp: "2026-12-01T11:00:00Z" } })),
    ).toMatchObject({ verdict: "keep", code: "BeingDeleted" });
    expect(judgeFailed(input({ row: row({ deletedAt: NOW - 120_000 }) }))).toMatchObject({ verdict: "keep", code: "AlreadyDeleted" });
    // A run outranks an earlier delete of ours; that delete outranks a deletionTimestamp.
    expect(judgeFailed(input({ runner: { namespace: "arc", name: "n", uid: "u1", workflowRunId: 5 }, row: row({ deletedAt: NOW - 1 }) })).code).toBe(
      "CarriesRun",
    );
    expect(
      judgeFailed(input({ runner: { namespace: "arc", name: "n", uid: "u1", deletionTimestamp: "2026-12-01T11:00:00Z" }, row: row({ deletedAt: NOW - 1 }) }))
        .code,
    ).toBe("AlreadyDeleted");
  });
});
