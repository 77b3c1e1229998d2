// Cloudflare keeps at most 256 KB of log events per Worker invocation and drops
// the rest. A sweep's first looks would write a decision line per runner: those
// past the pass's log budget (src/log.ts) are counted, not written, and the
// sweep line says how many (each runner's row and story keep its verdict).
import { describe, expect, it, vi } from "vitest";
import { LOG_BYTES_PER_PASS } from "../../../src/log.ts";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { NOW } from "../support/kube-calls.ts";
import { NS, REPO, stack } from "../support/stack.ts";

/** What Cloudflare keeps of one invocation's log events. */
const PLATFORM_CAP_BYTES = 256_000;
const RUNNERS = 1_500;

describe("the log budget of one invocation", () => {
  it("a sweep of many first looks logs under the platform's cap, and its sweep line says how many lines it summarized", async () => {
    const s = await stack();
    await s.kube.seedAll(
      Array.from({ length: RUNNERS }, (_, i) =>
        makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: `arc-runners-abcde-log${i}`, workflowRunId: 9000 + i, jobRepositoryName: REPO }),
      ),
    );
    const log = vi.spyOn(console, "log");
    await s.sweep(NOW);
    const written = log.mock.calls.map(([line]) => String(line));
    log.mockRestore();
    const lines = written.map((l) => JSON.parse(l) as Record<string, unknown>);
    const bytes = written.reduce((n, l) => n + new TextEncoder().encode(l).length + 64, 0);
    const decisions = lines.filter((l) => l.msg === "decision").length;
    const sweep = lines.find((l) => l.msg === "sweep") as { checked: number; logBytes: number; logSummarized?: { decision?: number } };

    expect(bytes).toBeLessThan(PLATFORM_CAP_BYTES);
    expect(sweep.logBytes).toBeLessThanOrEqual(LOG_BYTES_PER_PASS);
    // Every first look is a decision: written, or counted in the sweep line.
    expect(decisions).toBeGreaterThan(100);
    expect(sweep.logSummarized?.decision).toBeGreaterThan(0);
    expect(decisions + (sweep.logSummarized?.decision ?? 0)).toBe(RUNNERS);
  }, 120_000);
});
