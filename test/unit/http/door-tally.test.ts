// Answers given without the ledger, counted in the isolate and sent in batches (src/http/door-tally.ts).
// Each test uses ledger names of its own, fresh on each run of the file: the pending counts are the
// isolate's, per ledger name, and a Stryker run may reuse the module between runs.
const RUN = randomUUID();
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { countAgentRefusal, countAtDoor, flushDoorCounts, type DoorExtras } from "../../../src/http/door-tally.ts";
import type { DeliveryOutcome } from "../../../src/ledger/count-delivery.ts";
import type { DoorBatch } from "../../../src/durable/receive-delivery.ts";
import { rig } from "../support/hono-rig.ts";

let fail = false;
function door() {
  const batches: DoorBatch[] = [];
  const ledger = {
    countBatch: async (b: DoorBatch) => {
      if (fail) throw new Error("ledger down");
      batches.push(b);
    },
  };
  const r = rig({}, ledger, { path: "/x" });
  // countAtDoor reads only the bindings and waitUntil of its context: a request per count would take 13 s for 10,000.
  const c = { env: r.env, executionCtx: { waitUntil: (p: Promise<unknown>) => void r.waits.push(p) } } as unknown as Parameters<typeof countAtDoor>[0];
  const count = async (ledgerName: string, event: string, outcome: DeliveryOutcome, extras?: DoorExtras) => {
    countAtDoor(c, ledgerName, event, outcome, extras);
    await Promise.all(r.waits.splice(0));
  };
  const refuse = async (ledgerName: string, cluster: string) => {
    countAgentRefusal(c, ledgerName, cluster);
    await Promise.all(r.waits.splice(0));
  };
  return { r, c, batches, count, refuse };
}
let now = 1_700_000_000_000;
beforeEach(() => {
  fail = false;
  now += 1_000_000;
  vi.useFakeTimers({ now, toFake: ["Date"] });
});
afterEach(() => vi.useRealTimers());

describe("countAtDoor", () => {
  it("sends the first count at once, then at most every 10 s, adding up each event and outcome", async () => {
    const d = door();
    await d.count(`${RUN}-t1`, "workflow_job", "rejected");
    expect(d.batches).toEqual([{ counts: [{ event: "workflow_job", outcome: "rejected", n: 1 }], received: [], installations: [], agentRefusals: [] }]);
    expect(d.r.names).toEqual([`${RUN}-t1`]);
    vi.setSystemTime(now + 9_999);
    await d.count(`${RUN}-t1`, "workflow_job", "rejected");
    await d.count(`${RUN}-t1`, "workflow_job", "rejected");
    await d.count(`${RUN}-t1`, "ping", "rejected");
    await d.count(`${RUN}-t1`, "workflow_job", "too_large");
    expect(d.batches).toHaveLength(1);
    vi.setSystemTime(now + 10_000);
    await d.count(`${RUN}-t1`, "workflow_job", "rejected");
    expect(d.batches[1]?.counts).toEqual([
      { event: "workflow_job", outcome: "rejected", n: 3 },
      { event: "ping", outcome: "rejected", n: 1 },
      { event: "workflow_job", outcome: "too_large", n: 1 },
    ]);
  });

  it("sends a signed delivery's GUID and installation at once, with whatever was pending", async () => {
    const d = door();
    await d.count(`${RUN}-t2`, "ping", "invalid");
    vi.setSystemTime(now + 1);
    await d.count(`${RUN}-t2`, "ping", "invalid");
    await d.count(`${RUN}-t2`, "workflow_job", "ignored", { guid: "g-1", installation: { repo: "octo/repo", id: 7 } });
    expect(d.batches[1]).toEqual({
      counts: [
        { event: "ping", outcome: "invalid", n: 1 },
        { event: "workflow_job", outcome: "ignored", n: 1 },
      ],
      received: ["g-1"],
      installations: [{ repo: "octo/repo", id: 7 }],
      agentRefusals: [],
    });
    await d.count(`${RUN}-t2`, "workflow_job", "ignored", { guid: "g-2" });
    await d.count(`${RUN}-t2`, "workflow_job", "ignored", { installation: { repo: "octo/other", id: 8 } });
    expect(d.batches.slice(2).map((b) => [b.received, b.installations])).toEqual([
      [["g-2"], []],
      [[], [{ repo: "octo/other", id: 8 }]],
    ]);
  });

  it("past 1000 distinct events counts the rest under the outcome alone", async () => {
    const d = door();
    await d.count(`${RUN}-t3`, "e-first", "ignored");
    vi.setSystemTime(now + 1);
    for (let i = 0; i < 1002; i++) await d.count(`${RUN}-t3`, `e-${i}`, "rejected");
    vi.setSystemTime(now + 20_000);
    await flushDoorCounts(d.r.env, `${RUN}-t3`);
    const counts = d.batches[1]?.counts ?? [];
    expect(counts).toHaveLength(1001);
    expect(counts.at(-2)).toEqual({ event: "e-999", outcome: "rejected", n: 1 });
    expect(counts.at(-1)).toEqual({ event: "", outcome: "rejected", n: 2 });
  });

  it("keeps at most 10,000 GUIDs pending", async () => {
    const d = door();
    fail = true;
    // Each count sends at once and fails; the failed sends put their GUIDs back, up to the bound.
    for (let i = 0; i < 10_001; i++) countAtDoor(d.c, `${RUN}-t4`, "workflow_job", "ignored", { guid: `g-${i}` });
    await Promise.all(d.r.waits.splice(0));
    fail = false;
    await flushDoorCounts(d.r.env, `${RUN}-t4`);
    expect(d.batches[0]?.received).toHaveLength(10_000);
    expect(d.batches[0]?.received.at(-1)).toBe("g-9999");
    expect(d.batches[0]?.counts).toEqual([{ event: "workflow_job", outcome: "ignored", n: 10_001 }]);
  });
});

describe("countAgentRefusal", () => {
  it("counts refused agents per cluster, sent like the door's counts", async () => {
    const d = door();
    await d.refuse(`${RUN}-t5`, "eu-west");
    vi.setSystemTime(now + 5_000);
    await d.refuse(`${RUN}-t5`, "eu-west");
    await d.refuse(`${RUN}-t5`, "other");
    await d.refuse(`${RUN}-t5`, "eu-west");
    expect(d.batches).toHaveLength(1);
    await flushDoorCounts(d.r.env, `${RUN}-t5`);
    expect(d.batches.map((b) => b.agentRefusals)).toEqual([
      [{ cluster: "eu-west", n: 1 }],
      [
        { cluster: "eu-west", n: 2 },
        { cluster: "other", n: 1 },
      ],
    ]);
    expect(d.batches[1]?.counts).toEqual([]);
  });
});

describe("flushDoorCounts", () => {
  it("calls the ledger not at all when nothing is pending", async () => {
    const d = door();
    await flushDoorCounts(d.r.env, `${RUN}-t6`);
    expect(d.r.names).toEqual([]);
    expect(d.batches).toEqual([]);
  });

  it("keeps what the ledger failed to take for the next send, merged with what came since", async () => {
    const d = door();
    fail = true;
    await d.count(`${RUN}-t7`, "ping", "ignored", { guid: "g-1", installation: { repo: "octo/repo", id: 7 } });
    await d.refuse(`${RUN}-t7`, "eu-west");
    await flushDoorCounts(d.r.env, `${RUN}-t7`);
    vi.setSystemTime(now + 1);
    fail = false;
    // Nothing sent yet: a later count of the same key adds to the kept one; a newer installation wins.
    fail = true;
    await d.count(`${RUN}-t7`, "ping", "ignored", { installation: { repo: "octo/repo", id: 9 } });
    fail = false;
    await d.refuse(`${RUN}-t7`, "eu-west");
    await flushDoorCounts(d.r.env, `${RUN}-t7`);
    expect(d.batches).toEqual([
      {
        counts: [{ event: "ping", outcome: "ignored", n: 2 }],
        received: ["g-1"],
        installations: [{ repo: "octo/repo", id: 9 }],
        agentRefusals: [{ cluster: "eu-west", n: 2 }],
      },
    ]);
    await flushDoorCounts(d.r.env, `${RUN}-t7`);
    expect(d.batches).toHaveLength(1);
  });
});
