// The agent reports ARC fields: a Failed runner's (issue 24) in full, an idle one's scale set and version only; the ledger's parser checks them.
import { describe, expect, it } from "vitest";
import { toAgentRunner } from "../../../src/agent/runner-view.ts";
import { parseAgentRunner } from "../../../src/cluster/parse-agent-message.ts";

const obj = (status: Record<string, unknown>) => ({
  metadata: {
    namespace: "arc-runners",
    name: "set-runner-abcde",
    uid: "u-1",
    creationTimestamp: "2026-12-01T10:00:00Z",
    labels: { "actions.github.com/scale-set-name": "set" },
    finalizers: ["ephemeralrunner.actions.github.com/finalizer"],
  },
  status,
});

describe("the agent's arc field", () => {
  it("carries phase, reason, message (cleaned), the latest failure and the scale set of a Failed runner", () => {
    expect(toAgentRunner(obj({ phase: "Failed", reason: "PodCreateFailed", message: "denied\u202e", failures: { a: "2026-12-01T10:05:00Z" } })).arc).toEqual({
      phase: "Failed",
      reason: "PodCreateFailed",
      message: "denied",
      failedAt: "2026-12-01T10:05:00.000Z",
      scaleSet: "set",
    });
  });

  it("a long ARC message with emoji is cut to what the ledger's parser takes (one length rule: UTF-16 units), never dropped", () => {
    const message = `admission webhook denied 🚫: ${"quota exceeded 📦 ".repeat(80)}`;
    expect(Array.from(message).length).toBeLessThan(2000);
    const runner = toAgentRunner(obj({ phase: "Failed", reason: "PodCreateFailed", message }));
    const sent = runner.arc?.message ?? "";
    expect(sent.length).toBeLessThanOrEqual(1000);
    expect(sent.length).toBeGreaterThanOrEqual(998);
    expect(sent.endsWith("…")).toBe(true);
    expect(encodeURIComponent(sent)).toBeTruthy(); // no half surrogate pair
    expect(parseAgentRunner(JSON.parse(JSON.stringify(runner)), "snapshot.runners[0]").arc?.message).toBe(sent);
    // 1000 code points of emoji alone (2000 units): still cut to fit, not refused.
    expect(toAgentRunner(obj({ phase: "Failed", message: "😀".repeat(1000) })).arc?.message).toBe(`${"😀".repeat(499)}…`);
  });

  it("is absent for a busy runner, and carries no other phase (ARC 0.15's listener-owned Running included)", () => {
    expect(toAgentRunner(obj({ phase: "Running", workflowRunId: 5 }))).not.toHaveProperty("arc");
    // An idle runner carries only what the count of runners that never work needs: its scale set, and its version if told.
    expect(toAgentRunner(obj({ phase: "Pending" })).arc).toEqual({ scaleSet: "set" });
  });

  it("is refused by the ledger's parser when it is not what the agent sends", () => {
    const base = { namespace: "arc-runners", name: "n", uid: "u", creationTimestamp: "2026-12-01T10:00:00Z" };
    expect(() => parseAgentRunner({ ...base, arc: { phase: "Failed", extra: "x" } }, "upsert.runner")).toThrow(
      /upsert\.runner\.arc\.extra: expected no such field/,
    );
    expect(() => parseAgentRunner({ ...base, arc: { reason: "x" } }, "upsert.runner")).toThrow(
      /upsert\.runner\.arc\.phase: expected the phase that reason, message or failedAt come with, got/,
    );
    expect(() => parseAgentRunner({ ...base, arc: { phase: "Failed", message: "x".repeat(1001) } }, "upsert.runner")).toThrow(
      /arc\.message: expected a string of 1 to 1000 characters/,
    );
    expect(() => parseAgentRunner({ ...base, arc: { phase: "Failed", failedAt: "soon" } }, "upsert.runner")).toThrow(
      /arc\.failedAt: expected a time, got "soon"/,
    );
  });
});
