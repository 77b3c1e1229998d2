// Floods shed per client address before any work (src/http/shed-floods.ts).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { shedFloods } from "../../../src/http/shed-floods.ts";
import { flushDoorCounts } from "../../../src/http/door-tally.ts";
import type { DoorBatch } from "../../../src/durable/receive-delivery.ts";
import { rig } from "../support/hono-rig.ts";

// Ledger names fresh on each run of the file: the door's pending counts are the module's.
const RUN = randomUUID();

function shed(success: boolean, vars: Record<string, unknown> = {}) {
  const keys: string[] = [];
  const batches: DoorBatch[] = [];
  const limiter = {
    limit: async ({ key }: { key: string }) => {
      keys.push(key);
      return { success };
    },
  };
  const r = rig({}, { countBatch: async (b: DoorBatch) => void batches.push(b) }, { path: "*", middleware: [shedFloods] }, { FRONT_DOOR: limiter, ...vars });
  return { r, keys, batches };
}

describe("shedFloods", () => {
  it("lets a request under the limit through, counted by its address", async () => {
    const { r, keys } = shed(true);
    const res = await r.request("/webhook", { method: "POST", headers: { "cf-connecting-ip": "203.0.113.9" } });
    expect([res.status, await res.text()]).toEqual([200, "passed"]);
    expect(keys).toEqual(["203.0.113.9"]);
  });

  it("answers 429 over the limit, without the route, with Retry-After 10", async () => {
    const { r, keys } = shed(false);
    const res = await r.request("/agent", { headers: { "cf-connecting-ip": "203.0.113.9" } });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("10");
    expect(await res.json()).toEqual({ error: "too many requests from this address: slow down" });
    expect(keys).toEqual(["203.0.113.9"]);
    expect(r.waits).toEqual([]); // GET /agent shed: no count
  });

  it("counts a shed delivery as shed, by its event, on the ledger's raw name", async () => {
    const { r, batches } = shed(false, { LEDGER_NAME: `shed-1-${RUN}` });
    const res = await r.request("/webhook", { method: "POST", headers: { "cf-connecting-ip": "203.0.113.10", "x-github-event": "workflow_job" } });
    expect(res.status).toBe(429);
    await Promise.all(r.waits);
    await flushDoorCounts(r.env, `shed-1-${RUN}`);
    expect(batches.flatMap((b) => b.counts)).toEqual([{ event: "workflow_job", outcome: "shed", n: 1 }]);
    expect(r.names).toEqual([`shed-1-${RUN}`]);
  });

  it("counts a shed delivery without an event under the empty event", async () => {
    const { r, batches } = shed(false, { LEDGER_NAME: `shed-2-${RUN}` });
    await r.request("/webhook", { method: "POST", headers: { "cf-connecting-ip": "203.0.113.11" } });
    await Promise.all(r.waits);
    await flushDoorCounts(r.env, `shed-2-${RUN}`);
    expect(batches.flatMap((b) => b.counts)).toEqual([{ event: "", outcome: "shed", n: 1 }]);
  });

  it("never sheds an exempt client (loopback on Cloudflare's side) nor without a limiter", async () => {
    const exempt = shed(false);
    expect((await exempt.r.request("/webhook", { headers: { "cf-connecting-ip": "127.0.0.1" } })).status).toBe(200);
    expect(exempt.keys).toEqual([]);
    for (const FRONT_DOOR of [undefined, null, {}, { limit: "no" }]) {
      const r = rig({}, {}, { path: "*", middleware: [shedFloods] }, { FRONT_DOOR });
      expect((await r.request("/webhook", { headers: { "cf-connecting-ip": "203.0.113.9" } })).status).toBe(200);
    }
  });

  it("sheds the cluster's shared bucket too (never exempt)", async () => {
    const { r, keys } = shed(false, { ARC_REAPER_HOME: "cluster" });
    expect((await r.request("/agent")).status).toBe(429);
    expect(keys).toEqual(["unknown"]);
  });

  it("never sheds the kubelet's probe (GET /healthz from no named address), and sheds /healthz from a named one", async () => {
    const { r, keys } = shed(false, { ARC_REAPER_HOME: "cluster" });
    expect((await r.request("/healthz")).status).toBe(200);
    expect((await r.request("/healthz", { method: "POST" })).status).toBe(429);
    expect(keys).toEqual(["unknown"]);
    const named = shed(false, { ARC_REAPER_HOME: "cluster", REAPER_CLIENT_ADDRESS_HEADER: "X-Forwarded-For", REAPER_TRUSTED_PROXIES: "1" });
    expect((await named.r.request("/healthz", { headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(429);
    expect(named.keys).toEqual(["203.0.113.9"]);
  });
});
