// One invocation's log budget: lines are written while they fit (each with the
// platform's overhead per event), then only counted by msg.
import { describe, expect, it } from "vitest";
import { logBudget } from "../../src/log.ts";

describe("logBudget", () => {
  it("writes lines while they fit, then counts the rest by msg; a later small line is counted too", () => {
    const written: string[] = [];
    const logs = logBudget(500, (l) => void written.push(l));
    logs.line({ msg: "decision", reason: "a".repeat(100) });
    logs.line({ msg: "decision", reason: "b".repeat(100) });
    expect(written).toHaveLength(2);
    const spent = logs.spent().bytes;
    expect(spent).toBe(written.reduce((n, l) => n + new TextEncoder().encode(l).length + 64, 0));
    logs.line({ msg: "decision", reason: "c".repeat(100) });
    logs.line({ msg: "other" });
    logs.line({});
    expect(written).toHaveLength(2);
    expect(logs.spent()).toEqual({ bytes: spent, summarized: { decision: 1, other: 1, line: 1 } });
  });

  it("counts bytes, not characters: a line of emoji costs what it weighs", () => {
    const written: string[] = [];
    const logs = logBudget(300, (l) => void written.push(l));
    logs.line({ msg: "decision", reason: "😀".repeat(60) }); // 240 bytes of emoji, 120 UTF-16 units: over 300 only by bytes
    expect(written).toHaveLength(0);
    expect(logs.spent().summarized).toEqual({ decision: 1 });
  });
});
