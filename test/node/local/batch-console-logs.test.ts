// The bench's log sink (test/hooks/batch-console-logs.ts): lines reach the
// console in order, several to a call, none lost, and anything else at once.
import { afterAll, describe, expect, it, vi } from "vitest";
import { batchConsoleLogs, flushConsoleLogs, heldConsoleLines } from "../../hooks/batch-console-logs.ts";

describe("batchConsoleLogs", () => {
  const original = console.log;
  afterAll(() => {
    console.log = original;
    vi.useRealTimers();
  });

  it("writes lines in batches, flushes the rest after 20 ms, and keeps the order around other calls", () => {
    vi.useFakeTimers();
    const calls: unknown[][] = [];
    console.log = (...args: unknown[]) => void calls.push(args);
    expect(batchConsoleLogs(1)).toBe(false); // one line a call is no batch: nothing installed
    expect(batchConsoleLogs(3)).toBe(true);
    for (const line of ["a", "b", "c", "d"]) console.log(line);
    expect(calls).toEqual([["a\nb\nc"]]);
    vi.advanceTimersByTime(20);
    expect(calls).toEqual([["a\nb\nc"], ["d"]]);
    console.log("e");
    console.log("f", 1); // not a single string: the buffer first, then this call as it was
    expect(calls).toEqual([["a\nb\nc"], ["d"], ["e"], ["f", 1]]);
    vi.advanceTimersByTime(100);
    expect(calls).toHaveLength(4);
    batchConsoleLogs(2); // installed once per isolate: a second call changes nothing
    console.log("g");
    console.log("h");
    expect(calls).toHaveLength(4);
    vi.advanceTimersByTime(20);
    expect(calls.at(-1)).toEqual(["g\nh"]);
    console.log("i");
    expect(heldConsoleLines()).toBe(1);
    flushConsoleLogs();
    expect(heldConsoleLines()).toBe(0); // a request's waitUntil: at once, without the timer
    expect(calls.at(-1)).toEqual(["i"]);
    vi.advanceTimersByTime(100);
    expect(calls).toHaveLength(6);
  });
});
