// An agent's snapshot replaces the cluster's view only when every part came, in
// order: a part lost in the middle, a part of another snapshot, or a changed
// count leaves the view as it was (a partial view never reads as runners gone).
import { describe, expect, it } from "vitest";
import type { Attachment } from "../../../src/agent-link/attachment.ts";
import { takeSnapshotPart } from "../../../src/agent-link/snapshot.ts";
import type { AgentMessage } from "../../../src/cluster/agent-protocol.ts";
import type { AgentViewTable } from "../../../src/agent-link/agent-view-table.ts";

type Snapshot = Extract<AgentMessage, { type: "snapshot" }>;

function fakeView() {
  const calls: string[] = [];
  let gathered = 0;
  const view = {
    startSnapshot: () => {
      calls.push("start");
      gathered = 0;
    },
    addToSnapshot: (runners: readonly unknown[]) => {
      calls.push(`add ${runners.length}`);
      gathered += runners.length;
    },
    finishSnapshot: () => {
      calls.push("finish");
      return gathered;
    },
    setNamespaces: () => {
      calls.push("namespaces");
      return [];
    },
    clearNamespaces: () => void calls.push("clear namespaces"),
  };
  return { view: view as unknown as AgentViewTable, calls };
}

const part = (id: string, n: number, parts: number): Snapshot => ({ type: "snapshot", id, part: n, parts, runners: [{} as never] }) as Snapshot;

function take(parts: Snapshot[]) {
  const at: Attachment = { conn: "c", connectedAt: 0 };
  const { view, calls } = fakeView();
  const logs: object[] = [];
  const done = parts.map((m) => takeSnapshotPart(at, view, m, (l) => void logs.push(l), 1_000));
  return { done, calls, logs, at };
}

describe("snapshot parts", () => {
  it("all parts in order: the view is replaced with the last", () => {
    const { done, calls, at } = take([part("s", 1, 3), part("s", 2, 3), part("s", 3, 3)]);
    expect(done).toEqual([false, false, true]);
    expect(calls).toEqual(["start", "add 1", "add 1", "add 1", "finish", "clear namespaces"]);
    expect(at.completeAt).toBe(1_000);
  });

  it("the namespaces' ages date from part 1's arrival, not the last's (a long transfer adds no freshness)", () => {
    const at: Attachment = { conn: "c", connectedAt: 0 };
    const arrived: number[] = [];
    const { view } = fakeView();
    (view as unknown as { setNamespaces: (s: unknown, t: number) => string[] }).setNamespaces = (_s, t) => {
      arrived.push(t);
      return [];
    };
    const last = { ...part("s", 2, 2), namespaces: [{ namespace: "arc-runners", wholeMsAgo: 100 }] } as Snapshot;
    // 50,000 runners take 9-10 s to arrive: part 1 at 1 000, the last at 11 000.
    expect(takeSnapshotPart(at, view, part("s", 1, 2), () => undefined, 1_000)).toBe(false);
    expect(takeSnapshotPart(at, view, last, () => undefined, 11_000)).toBe(true);
    expect(arrived).toEqual([1_000]);
    expect(at.completeAt).toBe(11_000);
  });

  it.each([
    ["the middle part lost", [part("s", 1, 3), part("s", 3, 3)]],
    ["a part sent twice", [part("s", 1, 3), part("s", 2, 3), part("s", 2, 3), part("s", 3, 3)]],
    ["a part of another snapshot", [part("s", 1, 3), part("t", 2, 3), part("s", 3, 3)]],
    ["a changed count of parts", [part("s", 1, 3), part("s", 2, 2)]],
    ["no first part", [part("s", 2, 2)]],
  ])("%s: the view is never replaced, and the break is logged", (_what, parts) => {
    const { done, calls, logs, at } = take(parts);
    expect(done.every((d) => !d)).toBe(true);
    expect(calls).not.toContain("finish");
    expect(logs).toContainEqual(expect.objectContaining({ msg: "agent snapshot part out of order: ignored" }));
    expect(at.completeAt).toBeUndefined();
  });
});

describe("snapshot: the last part's namespaces", () => {
  it("replace how whole each namespace is, as of part 1, and the unreadable ones are named in the log", () => {
    const at: Attachment = { conn: "c", cluster: "east", connectedAt: 0 };
    const calls: unknown[] = [];
    const { view } = fakeView();
    const v = view as unknown as Record<string, unknown>;
    v.setNamespaces = (states: unknown, t: number, replace: boolean) => calls.push({ states, t, replace });
    v.clearNamespaces = () => calls.push("clear");
    const namespaces = [
      { namespace: "arc-runners", wholeMsAgo: 100 },
      { namespace: "locked", unreadable: "403 forbidden" },
    ];
    const logs: object[] = [];
    const log = (l: object) => void logs.push(l);
    expect(takeSnapshotPart(at, view, part("s", 1, 2), log, 1_000)).toBe(false);
    expect(at.incoming).toEqual({ id: "s", next: 2, parts: 2, startedAt: 1_000 });
    expect(takeSnapshotPart(at, view, { ...part("s", 2, 2), namespaces } as Snapshot, log, 5_000)).toBe(true);
    expect(calls).toEqual([{ states: namespaces, t: 1_000, replace: true }]);
    expect(at.incoming).toBeUndefined();
    expect(logs).toEqual([{ msg: "agent snapshot", cluster: "east", id: "s", parts: 2, runners: 2, unreadable: ["locked"] }]);
  });

  it("none said (an older agent): the namespaces' freshness is cleared, and the log says absence waits for reads", () => {
    const { logs, calls } = take([part("s", 1, 1)]);
    expect(calls).toEqual(["start", "add 1", "finish", "clear namespaces"]);
    expect(logs).toEqual([
      { msg: "agent snapshot", cluster: "default", id: "s", parts: 1, runners: 1, namespaces: "not said (an older agent): absence waits for reads" },
    ]);
  });

  it("a break forgets the snapshot in progress: its later parts do not complete it", () => {
    const { done, logs, at } = take([part("s", 1, 3), part("s", 3, 3), part("s", 2, 3), part("s", 3, 3)]);
    expect(done).toEqual([false, false, false, false]);
    expect(at.incoming).toBeUndefined();
    expect(logs[0]).toEqual({
      msg: "agent snapshot part out of order: ignored",
      cluster: "default",
      id: "s",
      part: 3,
      parts: 3,
      expected: { id: "s", next: 2, parts: 3, startedAt: 1_000 },
    });
    expect(logs[1]).toMatchObject({ part: 2, expected: null });
  });

  it("a new part 1 starts over: the earlier snapshot's parts are dropped from the gathering", () => {
    const { done, calls } = take([part("s", 1, 2), part("t", 1, 1)]);
    expect(done).toEqual([false, true]);
    expect(calls).toEqual(["start", "add 1", "start", "add 1", "finish", "clear namespaces"]);
  });
});
