// POST /webhook (src/http/webhook-route.ts): verified, parsed, recorded; everything else answered
// with a clear error and counted at the door, nothing recorded.
import { createHmac, randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Settings } from "../../../src/config/settings.ts";
import { flushDoorCounts } from "../../../src/http/door-tally.ts";
import { receiveWebhook } from "../../../src/http/webhook-route.ts";
import type { DoorBatch } from "../../../src/durable/receive-delivery.ts";
import { rig } from "../support/hono-rig.ts";

type Json = Record<string, unknown>;
const examples = createRequire(import.meta.url)("@octokit/webhooks-examples") as { name: string; examples: Json[] }[];
const example = (name: string, action: string): Json => structuredClone(examples.find((e) => e.name === name)!.examples.find((p) => p.action === action)!);
function arcJob(): Json {
  const payload = example("workflow_job", "in_progress");
  Object.assign(payload.workflow_job as Json, { runner_name: "arc-runners-x7k2p-runner-4zq9m", runner_group_name: "arc-runners", runner_id: 23 });
  return payload;
}

const SECRET = "whsec-test";
// Ledger names fresh on each run of the file: the door's pending counts are the module's.
const RUN = randomUUID();
let ledgerCount = 0;
let lines: Json[];
beforeEach(() => {
  lines = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(JSON.parse(line) as Json));
});
afterEach(() => vi.restoreAllMocks());

function webhook(receipt: { outcome: string } = { outcome: "recorded" }) {
  const ledgerName = `wh-${RUN}-${++ledgerCount}`;
  const settings = { webhookSecret: SECRET, ledgerName } as Settings;
  const received: Json[] = [];
  const batches: DoorBatch[] = [];
  const r = rig(
    settings,
    {
      receive: async (x: Json) => {
        received.push(x);
        return receipt;
      },
      countBatch: async (b: DoorBatch) => void batches.push(b),
    },
    { path: "/webhook", handler: (c) => receiveWebhook(c, settings) },
  );
  const post = async (body: string, headers: Record<string, string | undefined>) => {
    const h = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined));
    const res = await r.request("/webhook", { method: "POST", body, headers: h });
    await Promise.all(r.waits.splice(0));
    return { status: res.status, json: (await res.json()) as Json };
  };
  const counted = async () => {
    await flushDoorCounts(r.env, ledgerName);
    return batches;
  };
  return { post, received, counted, ledgerName };
}
const signed = (body: string, event = "workflow_job", delivery = "guid-1"): Record<string, string | undefined> => ({
  "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
  "x-github-event": event,
  "x-github-delivery": delivery,
});

describe("receiveWebhook", () => {
  it("records a signed workflow_job's facts, answering 202 with the summary", async () => {
    const w = webhook();
    const body = JSON.stringify(arcJob());
    const { status, json } = await w.post(body, signed(body));
    expect(status).toBe(202);
    expect(json).toMatchObject({ outcome: "recorded", detail: expect.stringMatching(/^job \d+ of run \d+ started on arc-runners-x7k2p-runner-4zq9m$/) });
    expect(w.received).toEqual([{ event: "workflow_job", guid: "guid-1", facts: [expect.objectContaining({ type: "job-started", runnerId: 23 })] }]);
    expect(lines).toEqual([expect.objectContaining({ msg: "webhook", event: "workflow_job", delivery: "guid-1", status: 202, outcome: "recorded" })]);
    expect(await w.counted()).toEqual([]);
  });

  it("answers a delivery received before 202 duplicate, and an old one 200 stale, counting neither at the door", async () => {
    const body = JSON.stringify(arcJob());
    const dup = webhook({ outcome: "duplicate" });
    expect(await dup.post(body, signed(body))).toEqual({
      status: 202,
      json: { outcome: "duplicate", detail: "delivery guid-1 was received before: nothing recorded" },
    });
    expect(await dup.counted()).toEqual([]);
    const stale = webhook({ outcome: "stale" });
    const answer = await stale.post(body, signed(body));
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ outcome: "stale", detail: expect.stringMatching(/: older than REAPER_HISTORY_DAYS, not recorded$/) });
    expect(await stale.counted()).toEqual([]);
  });

  it("records an installation change with no facts", async () => {
    const w = webhook();
    const payload = example("installation", "deleted");
    const body = JSON.stringify(payload);
    const { status, json } = await w.post(body, signed(body, "installation"));
    expect(status).toBe(202);
    expect(json).toMatchObject({ outcome: "recorded", detail: expect.stringMatching(/^installation\.deleted: installation \d+$/) });
    expect(w.received).toEqual([{ event: "installation", guid: "guid-1", facts: [], installation: expect.any(Object) }]);
  });

  it.each([
    ["no signature", { "x-github-event": "workflow_job", "x-github-delivery": "g" }, 401, "X-Hub-Signature-256 header is missing"],
    [
      "a wrong signature",
      { "x-hub-signature-256": `sha256=${"0".repeat(64)}`, "x-github-event": "workflow_job", "x-github-delivery": "g" },
      401,
      "X-Hub-Signature-256 does not match the body (check GITHUB_WEBHOOK_SECRET)",
    ],
  ])("refuses %s with 401, counted as rejected, nothing recorded", async (_what, headers, status, error) => {
    const w = webhook();
    expect(await w.post("{}", headers)).toEqual({ status, json: { error } });
    expect(w.received).toEqual([]);
    expect((await w.counted()).flatMap((b) => b.counts)).toEqual([{ event: "workflow_job", outcome: "rejected", n: 1 }]);
    expect(lines).toEqual([expect.objectContaining({ msg: "webhook", status, outcome: "rejected", detail: error })]);
  });

  it.each([
    ["no event", { ...signed("{}"), "x-github-event": undefined }, "X-GitHub-Event header is missing"],
    ["no delivery", { ...signed("{}"), "x-github-delivery": undefined }, "X-GitHub-Delivery header is missing"],
  ])("refuses a signed delivery with %s with 400 invalid", async (_what, headers, error) => {
    const w = webhook();
    expect(await w.post("{}", headers)).toEqual({ status: 400, json: { error } });
    expect(w.received).toEqual([]);
  });

  it("refuses a body that is not JSON, naming the parse error", async () => {
    const w = webhook();
    const notJson = await w.post("{", signed("{"));
    expect(notJson.status).toBe(400);
    expect(String(notJson.json.error)).toMatch(/^body is not valid JSON: /);
    expect((await w.counted()).flatMap((b) => b.counts)).toEqual([{ event: "workflow_job", outcome: "invalid", n: 1 }]);
  });

  it("refuses a payload without the fields the facts need, with the parser's error", async () => {
    const w = webhook();
    const body = JSON.stringify([]);
    expect(await w.post(body, signed(body))).toEqual({ status: 400, json: { error: "payload must be a JSON object" } });
    expect(w.received).toEqual([]);
  });

  it("answers an ignored workflow delivery 200, unlogged, remembering its GUID and installation", async () => {
    const w = webhook();
    const payload = arcJob();
    Object.assign(payload.workflow_job as Json, { runner_name: null, runner_id: null, runner_group_name: null });
    (payload as { action: string }).action = "queued";
    const body = JSON.stringify({ ...payload, installation: { id: 42 } });
    const { status, json } = await w.post(body, signed(body, "workflow_job", "guid-ign"));
    expect(status).toBe(200);
    expect(json.outcome).toBe("ignored");
    expect(lines).toEqual([]);
    const repo = (payload.repository as { full_name: string }).full_name;
    const batches = await w.counted();
    expect(batches.flatMap((b) => b.received)).toEqual(["guid-ign"]);
    expect(batches.flatMap((b) => b.installations)).toEqual([{ repo, id: 42 }]);
  });

  it.each([
    ["no installation", {}],
    ["a zero id", { installation: { id: 0 } }],
    ["a text id", { installation: { id: "42" } }],
    ["a fractional id", { installation: { id: 4.2 } }],
  ])("remembers no installation for an ignored delivery with %s", async (_what, extra) => {
    const w = webhook();
    const payload = { ...arcJob(), action: "waiting", ...extra };
    const body = JSON.stringify(payload);
    await w.post(body, signed(body, "workflow_job", "guid-x"));
    const batches = await w.counted();
    expect(batches.flatMap((b) => b.received)).toEqual(["guid-x"]);
    expect(batches.flatMap((b) => b.installations)).toEqual([]);
  });

  it("remembers neither the GUID nor an installation of an ignored event that is not a workflow's", async () => {
    const w = webhook();
    const body = JSON.stringify({ zen: "x", hook_id: 1, installation: { id: 42 }, repository: { full_name: "octo/repo" } });
    const { status, json } = await w.post(body, signed(body, "ping", "guid-ping"));
    expect(status).toBe(200);
    expect(json).toEqual({ outcome: "ignored", detail: "ping is not something arc-reaper acts on" });
    const batches = await w.counted();
    expect(batches.flatMap((b) => [...b.received, ...b.installations])).toEqual([]);
    expect(batches.flatMap((b) => b.counts)).toEqual([{ event: "ping", outcome: "ignored", n: 1 }]);
  });
});
