// GET /metrics (src/http/metrics-route.ts): the door's counts sent first, then the ledger's snapshot
// (and the agents' statuses in agent mode) in Prometheus text, never cached.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Settings } from "../../../src/config/settings.ts";
import { countAtDoor } from "../../../src/http/door-tally.ts";
import { serveMetrics } from "../../../src/http/metrics-route.ts";
import type { DoorBatch } from "../../../src/durable/receive-delivery.ts";
import type { LedgerSnapshot } from "../../../src/ledger/queries.ts";
import { rig, rpcTarget } from "../support/hono-rig.ts";

// Ledger names fresh on each run of the file: the door's pending counts are the module's.
const RUN = randomUUID();
const snapshot: LedgerSnapshot = {
  runners: { running: 2, finished: 1, failed: 0, stuck: 0, reaped: 7, gone: 3 },
  counters: [],
  lastSweep: null,
  paused: null,
  alarmAt: null,
};

function metrics(cluster: Settings["cluster"]) {
  const ledgerName = `metrics-${RUN}-${cluster.mode}`;
  const order: string[] = [];
  const admin = rpcTarget({
    snapshot: async () => {
      order.push("snapshot");
      return snapshot;
    },
    agentStatuses: async () => {
      order.push("agentStatuses");
      return [];
    },
  });
  const settings = { ledgerName, cluster, home: { kind: "cloudflare" } } as Settings;
  const r = rig(
    settings,
    {
      admin: () => admin,
      countBatch: async (b: DoorBatch) => {
        order.push(`countBatch ${b.counts.map((c) => `${c.event}/${c.outcome}=${c.n}`).join(",")}`);
      },
    },
    { path: "/metrics", handler: (c) => serveMetrics(c, settings) },
  );
  return { r, order, ledgerName };
}

describe("serveMetrics", () => {
  it("sends the door's counts first, then answers the snapshot as Prometheus text, not cached", async () => {
    const m = metrics({ mode: "direct", name: "kind-a" } as Settings["cluster"]);
    const c = { env: m.r.env, executionCtx: { waitUntil: () => undefined } } as unknown as Parameters<typeof countAtDoor>[0];
    countAtDoor(c, m.ledgerName, "ping", "rejected"); // sent at once (its waitUntil dropped here), so the next waits
    countAtDoor(c, m.ledgerName, "ping", "rejected");
    const res = await m.r.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const text = await res.text();
    expect(text).toContain('arc_reaper_runners{state="reaped"} 7\n');
    expect(text).toContain('cluster="kind-a"');
    expect(text).toContain('arc_reaper_sweep_every_seconds{home="cloudflare",driven_by="cron"} 60\n');
    expect(m.order).toEqual(["countBatch ping/rejected=1", "countBatch ping/rejected=1", "snapshot"]);
  });

  it("in agent mode asks the ledger for the agents' statuses too", async () => {
    const m = metrics({ mode: "agent", agentToken: "t", expectedClusters: [] } as unknown as Settings["cluster"]);
    const res = await m.r.request("/metrics");
    expect(res.status).toBe(200);
    expect([...m.order].sort()).toEqual(["agentStatuses", "snapshot"]);
    expect(await res.text()).not.toContain('cluster="kind-a"');
  });
});
