// GET /agent (src/http/agent-route.ts): the cluster's name and bearer checked before the upgrade, a
// refusal counted per known cluster and logged without the token; the upgrade is the ledger's.
import { createHmac, randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Settings } from "../../../src/config/settings.ts";
import { agentUpgrade } from "../../../src/http/agent-route.ts";
import { flushDoorCounts } from "../../../src/http/door-tally.ts";
import type { DoorBatch } from "../../../src/durable/receive-delivery.ts";
import { rig } from "../support/hono-rig.ts";

const SECRET = "agent-secret-0123456789abcdef";
const tokenFor = (cluster: string): string => createHmac("sha256", SECRET).update(cluster).digest("hex");
// Ledger names fresh on each run of the file: the door's pending counts are the module's.
const RUN = randomUUID();
let n = 0;
let lines: Record<string, unknown>[];
beforeEach(() => {
  lines = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>));
});
afterEach(() => vi.restoreAllMocks());
const logged = () => lines.map(({ at: _at, ...rest }) => rest);

function agent(mode: "agent" | "direct" = "agent") {
  const ledgerName = `agent-${RUN}-${++n}`;
  const settings = {
    ledgerName,
    cluster: mode === "agent" ? { mode, agentToken: SECRET, expectedClusters: ["eu-west"] } : { mode, name: "c" },
  } as unknown as Settings;
  const upgrades: Request[] = [];
  const batches: DoorBatch[] = [];
  const r = rig(
    settings,
    {
      fetch: async (req: Request) => {
        upgrades.push(req);
        return new Response("upgraded by the ledger", { status: 200 });
      },
      countBatch: async (b: DoorBatch) => void batches.push(b),
    },
    { path: "/agent", handler: (c) => agentUpgrade(c, settings) },
  );
  const get = async (headers: Record<string, string>) => {
    const res = await r.request("https://reaper.example.com/agent", { headers: { "cf-connecting-ip": "203.0.113.9", ...headers } });
    await Promise.all(r.waits.splice(0));
    return { status: res.status, body: await res.text(), www: res.headers.get("www-authenticate"), upgrade: res.headers.get("upgrade") };
  };
  const refusals = async () => {
    await flushDoorCounts(r.env, ledgerName);
    return batches.flatMap((b) => b.agentRefusals ?? []);
  };
  return { get, upgrades, refusals, r };
}
const refused = (error: string) => ({ status: 401, body: JSON.stringify({ error }), www: "Bearer", upgrade: null });
const WANTS = (cluster: string) =>
  `a valid agent token for cluster ${cluster} is required (AGENT_TOKEN admits only default; another cluster needs the token made for it)`;

describe("agentUpgrade", () => {
  it("answers 404 in direct mode", async () => {
    const a = agent("direct");
    const res = await a.get({ authorization: `Bearer ${SECRET}` });
    expect(res).toMatchObject({
      status: 404,
      body: JSON.stringify({ error: "GET /agent is for CLUSTER_MODE=agent; this arc-reaper runs CLUSTER_MODE=direct" }),
    });
  });

  it("hands a cluster's upgrade to the ledger, tagged with the cluster as checked", async () => {
    const a = agent();
    const res = await a.get({ authorization: `Bearer ${tokenFor("eu-west")}`, "x-arc-reaper-cluster": " eu-west ", upgrade: "WebSocket" });
    expect(res).toMatchObject({ status: 200, body: "upgraded by the ledger" });
    expect(a.upgrades.map((q) => [q.method, q.url, q.headers.get("x-arc-reaper-cluster"), q.headers.get("upgrade")])).toEqual([
      ["GET", "https://reaper.example.com/agent", "eu-west", "WebSocket"],
    ]);
    expect(a.r.names).toEqual([`agent-${RUN}-${n}`]);
  });

  it("takes the default cluster when none is named, admitting AGENT_TOKEN itself", async () => {
    for (const headers of [{}, { "x-arc-reaper-cluster": "  " }] as Record<string, string>[]) {
      const a = agent();
      const res = await a.get({ ...headers, authorization: `Bearer ${SECRET}`, upgrade: "websocket" });
      expect(res.status).toBe(200);
      expect(a.upgrades[0]?.headers.get("x-arc-reaper-cluster")).toBe("default");
    }
  });

  it("answers 426 to an admitted agent that does not ask for a WebSocket", async () => {
    const a = agent();
    expect(await a.get({ authorization: `Bearer ${SECRET}` })).toEqual({
      status: 426,
      body: JSON.stringify({ error: "GET /agent expects a WebSocket upgrade" }),
      www: null,
      upgrade: "websocket",
    });
    expect(a.upgrades).toEqual([]);
  });

  it("refuses no bearer, naming the cluster, logged and counted under it", async () => {
    const a = agent();
    expect(await a.get({ "x-arc-reaper-cluster": "eu-west", upgrade: "websocket" })).toEqual(refused(WANTS("eu-west")));
    expect(logged()).toEqual([{ msg: "agent refused", cluster: "eu-west", why: "no bearer token", client: "203.0.113.9" }]);
    expect(await a.refusals()).toEqual([{ cluster: "eu-west", n: 1 }]);
    expect(a.upgrades).toEqual([]);
  });

  it("refuses another cluster's token, and AGENT_TOKEN for a cluster not default", async () => {
    const a = agent();
    expect(await a.get({ "x-arc-reaper-cluster": "eu-west", authorization: `Bearer ${tokenFor("us-east")}`, upgrade: "websocket" })).toEqual(
      refused(WANTS("eu-west")),
    );
    expect(await a.get({ "x-arc-reaper-cluster": "eu-west", authorization: `Bearer ${SECRET}`, upgrade: "websocket" })).toEqual(refused(WANTS("eu-west")));
    expect(logged().map((l) => l.why)).toEqual(["the token does not admit this cluster", "the token does not admit this cluster"]);
    expect(lines.join("")).not.toContain(SECRET);
    // The first refusal is sent at once, the second within 10 s.
    expect(await a.refusals()).toEqual([
      { cluster: "eu-west", n: 1 },
      { cluster: "eu-west", n: 1 },
    ]);
  });

  it("counts a refused unknown cluster as other, and default under its name", async () => {
    const a = agent();
    await a.get({ "x-arc-reaper-cluster": "stranger", authorization: "Bearer x" });
    await a.get({ authorization: "Bearer x" });
    expect(logged().map((l) => l.cluster)).toEqual(["stranger", "default"]);
    expect(await a.refusals()).toEqual([
      { cluster: "other", n: 1 },
      { cluster: "default", n: 1 },
    ]);
  });

  it("refuses a cluster name that is not a DNS label, without echoing it", async () => {
    const a = agent();
    expect(await a.get({ "x-arc-reaper-cluster": "EU_West", authorization: `Bearer ${SECRET}`, upgrade: "websocket" })).toEqual(
      refused("x-arc-reaper-cluster must be a cluster name (DNS label)"),
    );
    expect(logged()).toEqual([{ msg: "agent refused", cluster: "(invalid)", why: "the cluster is not a DNS label", client: "203.0.113.9" }]);
    expect(await a.refusals()).toEqual([{ cluster: "other", n: 1 }]);
  });
});
