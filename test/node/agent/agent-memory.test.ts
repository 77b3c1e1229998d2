// The agent's view of 50,000 runners stays small: its heap a runner, measured as bench/agent-memory.ts
// measures it (the agent's own list through client-node from a page server, in a node under --expose-gc),
// under a bound far below what one listed object takes. Holding the objects, or even their pod templates,
// would break it; a few more fields would not. Heap only: nothing here is timed.
import { describe, expect, it } from "vitest";
import { AGENT_MEMORY_RUNNERS, measureAgentMemory } from "../../../bench/agent-memory.ts";

/** Bytes of heap a runner the view may take: the bench measures about 400; one object as listed takes over 6 KiB parsed. */
const BOUND_BYTES_PER_RUNNER = 1024;

describe("the agent's memory", () => {
  it(`keeps a view of ${AGENT_MEMORY_RUNNERS.toLocaleString("en-US")} runners under ${BOUND_BYTES_PER_RUNNER} bytes of heap a runner`, {
    timeout: 180_000,
  }, async () => {
    const m = await measureAgentMemory(AGENT_MEMORY_RUNNERS, { quick: true });
    expect(m.runners).toBe(AGENT_MEMORY_RUNNERS);
    // A view that let its runners go would measure nothing: the bound has a floor too.
    expect(m.keptBytesPerRunner).toBeGreaterThan(100);
    expect(m.keptBytesPerRunner).toBeLessThan(BOUND_BYTES_PER_RUNNER);
  });
});
