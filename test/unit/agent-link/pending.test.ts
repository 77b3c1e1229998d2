// Requests awaiting their answer (src/agent-link/pending.ts): an answer settles
// its request once; only the connection asked (and, for an order, the same uid)
// may answer it; a request unanswered in time resolves with undefined and says
// so once; a connection that goes settles what it was asked, and nothing else.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PendingRequests } from "../../../src/agent-link/pending.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** Whether the promise has settled yet, and with what (microtasks flushed). */
async function state<T>(p: Promise<T>): Promise<{ settled: boolean; value?: T }> {
  let out: { settled: boolean; value?: T } = { settled: false };
  void p.then((value) => {
    out = { settled: true, value };
  });
  await vi.advanceTimersByTimeAsync(0);
  return out;
}

describe("PendingRequests", () => {
  it("an answer resolves its request once; a second answer, or one to no request, finds nothing", async () => {
    const pending = new PendingRequests<string>();
    const answer = pending.wait("r1", "c1", 1_000);
    expect(pending.size).toBe(1);
    expect(pending.settle("r1", "deleted")).toBe(true);
    expect(await answer).toBe("deleted");
    expect(pending.size).toBe(0);
    expect(pending.settle("r1", "gone")).toBe(false);
    expect(pending.settle("never-sent", "gone")).toBe(false);
  });

  it("unanswered: resolves with undefined exactly at its timeout, and onTimeout runs once", async () => {
    const pending = new PendingRequests<string>();
    const onTimeout = vi.fn();
    const answer = pending.wait("r1", "c1", 1_000, { onTimeout });
    await vi.advanceTimersByTimeAsync(999);
    expect(await state(answer)).toEqual({ settled: false });
    expect(onTimeout).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(await state(answer)).toEqual({ settled: true, value: undefined });
    expect(onTimeout).toHaveBeenCalledTimes(1);
    expect(pending.size).toBe(0);
    // An answer after the timeout is no answer: nothing awaits it.
    expect(pending.awaits("r1", "c1")).toBe(false);
    expect(pending.settle("r1", "deleted")).toBe(false);
  });

  it("answered in time: its timeout never fires (no onTimeout, the answer stands)", async () => {
    const pending = new PendingRequests<string>();
    const onTimeout = vi.fn();
    const answer = pending.wait("r1", "c1", 1_000, { onTimeout });
    pending.settle("r1", "deleted");
    expect(vi.getTimerCount()).toBe(0); // its timer is cleared, not left to fire
    await vi.advanceTimersByTimeAsync(5_000);
    expect(onTimeout).not.toHaveBeenCalled();
    expect(await answer).toBe("deleted");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("unanswered without an onTimeout: still resolves with undefined", async () => {
    const pending = new PendingRequests<string>();
    const answer = pending.wait("r1", "c1", 10);
    await vi.advanceTimersByTimeAsync(10);
    expect(await state(answer)).toEqual({ settled: true, value: undefined });
  });

  it("awaits only the connection asked and the key it was asked with", () => {
    const pending = new PendingRequests<string>();
    void pending.wait("order", "c1", 1_000, { key: "uid-1" });
    void pending.wait("read", "c1", 1_000);
    expect(pending.awaits("order", "c1", "uid-1")).toBe(true);
    expect(pending.awaits("order", "c2", "uid-1")).toBe(false);
    expect(pending.awaits("order", "c1", "uid-2")).toBe(false);
    expect(pending.awaits("order", "c1")).toBe(false);
    expect(pending.awaits("read", "c1")).toBe(true);
    expect(pending.awaits("read", "c1", "uid-1")).toBe(false);
    expect(pending.awaits("read", "c2")).toBe(false);
    expect(pending.awaits("other", "c1")).toBe(false);
  });

  it("a connection that goes settles every request sent on it, and only those", async () => {
    const pending = new PendingRequests<string>();
    const a = pending.wait("a", "c1", 1_000);
    const b = pending.wait("b", "c1", 1_000, { key: "uid-b" });
    const other = pending.wait("c", "c2", 1_000);
    pending.settleConn("c1", "failed: the agent disconnected");
    expect(await a).toBe("failed: the agent disconnected");
    expect(await b).toBe("failed: the agent disconnected");
    expect(pending.size).toBe(1);
    expect(await state(other)).toEqual({ settled: false });
    expect(pending.awaits("c", "c2")).toBe(true);
    pending.settleConn("c3", "nothing there");
    expect(pending.size).toBe(1);
  });
});
