// What the parser reads of ARC's view of a runner (src/cluster/arc-failure.ts), shared by direct mode and the agent.
import { describe, expect, it } from "vitest";
import { arcFieldsOf, latestFailure } from "../../../src/cluster/arc-failure.ts";

describe("arcFieldsOf", () => {
  it("reads phase, reason, message (cleaned), the latest failure, the scale set label and the finalizers", () => {
    const obj = {
      metadata: {
        labels: { "actions.github.com/scale-set-name": "arc-runners" },
        finalizers: ["ephemeralrunner.actions.github.com/finalizer", "ephemeralrunner.actions.github.com/runner-registration-finalizer"],
      },
      status: {
        phase: "Failed",
        reason: "PodCreateFailed",
        message: "denied\u202e by\n\twebhook",
        failures: { a: "2026-12-01T10:00:00Z", b: "2026-12-01T11:00:00Z", c: "not a time" },
      },
    };
    expect(arcFieldsOf(obj)).toEqual({
      phase: "Failed",
      arcReason: "PodCreateFailed",
      arcMessage: "denied by webhook",
      failedAt: "2026-12-01T11:00:00.000Z",
      scaleSet: "arc-runners",
      finalizers: ["ephemeralrunner.actions.github.com/finalizer", "ephemeralrunner.actions.github.com/runner-registration-finalizer"],
    });
  });

  it("answers only what is there, and nothing for a shape that is not ARC's", () => {
    expect(arcFieldsOf({ metadata: {}, status: {} })).toEqual({});
    expect(arcFieldsOf(null)).toEqual({});
    expect(arcFieldsOf({ metadata: { finalizers: ["a", 3] }, status: { phase: 7, failures: [] } })).toEqual({});
    expect(latestFailure({})).toBeUndefined();
  });

  it("bounds a long message", () => {
    expect(arcFieldsOf({ status: { message: "x".repeat(5000) } }).arcMessage).toHaveLength(1000);
  });
});
