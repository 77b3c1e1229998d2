// The redelivery of failed deliveries (redeliver-failed.ts) on plain Node: which
// deliveries are asked for, when a listing runs, how a cut listing resumes, and
// what the ledger keeps.
import { describe, expect, it } from "vitest";
import { GithubError, type Github, type HookDelivery } from "../../../src/github/github-client.ts";
import type { RedeliveryRow } from "../../../src/model/redelivery.ts";
import { redeliverFailed, type DeliveriesMark, type RedeliveryOptions, type RedeliveryStore } from "../../../src/reaper/redeliver-failed.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

let ids = 100;
const delivery = (guid: string, over: Partial<HookDelivery> = {}): HookDelivery => ({
  id: String(ids++),
  guid,
  deliveredAt: iso(NOW - 60_000),
  redelivery: false,
  statusCode: 502,
  event: "workflow_job",
  action: "completed",
  ...over,
});

class Store implements RedeliveryStore {
  rows = new Map<string, RedeliveryRow>();
  receivedGuids = new Set<string>();
  puts: RedeliveryRow[] = [];
  received(guid: string) {
    return this.receivedGuids.has(guid);
  }
  get(guid: string) {
    return this.rows.get(guid);
  }
  put(row: RedeliveryRow) {
    this.puts.push(row);
    this.rows.set(row.guid, row);
  }
  pending(since: number) {
    return [...this.rows.values()].filter((r) => !r.succeeded && r.firstFailedAt >= since);
  }
}

const row = (guid: string, over: Partial<RedeliveryRow> = {}): RedeliveryRow => ({
  guid,
  event: "workflow_job",
  deliveryId: "1",
  askFailed: false,
  attempts: 0,
  lastListing: 0,
  firstFailedAt: NOW - 120_000,
  succeeded: false,
  ...over,
});

interface Listed {
  since: number;
  cursor?: string;
  status?: string;
}

function world(
  o: { pages?: { deliveries: HookDelivery[]; complete: boolean; cursor?: string }[]; failRedeliver?: Set<string>; listError?: unknown; budget?: number } = {},
) {
  const listed: Listed[] = [];
  const redelivered: string[] = [];
  const store = new Store();
  let calls = 0;
  const pages = o.pages ?? [{ deliveries: [], complete: true }];
  let listError = o.listError;
  const github = {
    async deliveriesSince(since: number, opts: { cursor?: string; status?: string }) {
      calls++;
      listed.push({ since, cursor: opts.cursor, status: opts.status });
      if (listError !== undefined) {
        const e = listError;
        listError = undefined;
        throw e;
      }
      return pages[listed.length - 1] ?? pages.at(-1)!;
    },
    async redeliver(id: string) {
      calls++;
      redelivered.push(id);
      if (o.failRedeliver?.has(id)) throw new Error(`HTTP 500 for ${id}`);
    },
  } as unknown as Github;
  const run = (mark: DeliveriesMark, over: Partial<RedeliveryOptions> = {}) =>
    redeliverFailed({ github, store, mark, now: NOW, lookbackSeconds: 3600, everySeconds: 300, maxCallsUsed: () => calls >= (o.budget ?? 100), ...over });
  return { run, listed, redelivered, store, calls: () => calls };
}

describe("when a listing runs", () => {
  it("listed less than REAPER_DELIVERIES_EVERY_SECONDS ago: skipped, the mark unchanged", async () => {
    const w = world();
    const mark = { listedUntil: NOW - 100_000, lastListingAt: NOW - 100_400 };
    const { report, mark: next } = await w.run(mark);
    expect(report).toEqual({ listed: 0, asked: [], failed: [], skipped: "listed 100s ago, every 300s" });
    expect(next).toBe(mark);
    expect(w.listed).toEqual([]);
  });

  it("listed exactly the interval ago: lists again", async () => {
    const w = world();
    await w.run({ listedUntil: NOW - 300_000, lastListingAt: NOW - 300_000 });
    expect(w.listed).toHaveLength(1);
  });

  it("the budget's share spent: skipped", async () => {
    const w = world({ budget: 0 });
    const { report } = await w.run({ listedUntil: 0 });
    expect(report.skipped).toBe("the budget's share for redelivery is spent");
    expect(w.listed).toEqual([]);
  });
});

describe("a listing", () => {
  it("lists failures since the last listing (less 2 minutes' overlap) and asks for the acted, never-received ones", async () => {
    const ok = delivery("g-ok", { statusCode: 200 });
    const failedOk = delivery("g-ok", { statusCode: 502 });
    const deliveries = [
      delivery("g-1", { id: "11" }),
      delivery("g-run", { id: "12", event: "workflow_run", action: "completed" }),
      delivery("g-queued", { action: "queued" }),
      delivery("g-requested", { event: "workflow_run", action: "requested" }),
      delivery("g-push", { event: "push", action: null }),
      delivery("g-in", { id: "13", action: "in_progress" }),
      delivery("g-recv", { id: "14" }),
      ok,
      failedOk,
    ];
    const w = world({ pages: [{ deliveries, complete: true }] });
    w.store.receivedGuids.add("g-recv");
    w.store.rows.set("g-ok", row("g-ok", { attempts: 1 }));
    const { report, mark } = await w.run({ listedUntil: NOW - 600_000, lastListingAt: NOW - 600_000 });
    expect(w.listed).toEqual([{ since: NOW - 720_000, cursor: undefined, status: "failure" }]);
    expect(report).toEqual({ listed: 9, asked: ["g-1", "g-run", "g-in"], failed: [] });
    expect(w.redelivered).toEqual(["11", "12", "13"]);
    expect(mark).toStrictEqual({ listedUntil: NOW, lastListingAt: NOW });
    expect(w.store.get("g-1")).toEqual({
      guid: "g-1",
      event: "workflow_job",
      deliveryId: "11",
      askFailed: false,
      attempts: 1,
      lastListing: NOW,
      firstFailedAt: NOW - 60_000,
      succeeded: false,
    });
    expect(w.store.get("g-run")?.event).toBe("workflow_run");
    // A delivery whose attempt succeeded is done.
    expect(w.store.get("g-ok")?.succeeded).toBe(true);
    expect(w.store.get("g-queued")).toBeUndefined();
  });

  it("never looks back further than REAPER_REDELIVERY_LOOKBACK_SECONDS", async () => {
    const w = world();
    await w.run({ listedUntil: 0 });
    expect(w.listed[0]?.since).toBe(NOW - 3_600_000);
  });

  it("asks for the latest failed attempt of a GUID; its first failure is the oldest seen", async () => {
    const w = world({
      pages: [
        {
          deliveries: [
            delivery("g-1", { id: "21", deliveredAt: iso(NOW - 300_000) }),
            delivery("g-1", { id: "23", deliveredAt: iso(NOW - 100_000) }),
            delivery("g-1", { id: "22", deliveredAt: iso(NOW - 200_000) }),
          ],
          complete: true,
        },
      ],
    });
    await w.run({ listedUntil: NOW - 600_000 });
    expect(w.redelivered).toEqual(["23"]);
    expect(w.store.get("g-1")).toMatchObject({ deliveryId: "23", firstFailedAt: NOW - 300_000 });
  });

  it("never asks twice in one listing, past 5 attempts, a GUID already succeeded, or one that first failed before the look-back", async () => {
    const w = world({ pages: [{ deliveries: ["g-same", "g-max", "g-done", "g-old", "g-4"].map((g) => delivery(g)), complete: true }] });
    w.store.rows.set("g-same", row("g-same", { attempts: 1, lastListing: NOW }));
    w.store.rows.set("g-max", row("g-max", { attempts: 5 }));
    w.store.rows.set("g-done", row("g-done", { attempts: 1, succeeded: true }));
    w.store.rows.set("g-old", row("g-old", { attempts: 1, firstFailedAt: NOW - 3_600_001 }));
    w.store.rows.set("g-4", row("g-4", { attempts: 4, firstFailedAt: NOW - 3_600_000 }));
    const { report } = await w.run({ listedUntil: NOW - 600_000 });
    expect(report.asked).toEqual(["g-4"]);
    expect(w.store.get("g-4")).toMatchObject({ attempts: 5, firstFailedAt: NOW - 3_600_000 });
  });

  it("an ask GitHub refuses: reported, kept as failed, asked again at the next listing though no new attempt is listed", async () => {
    const w = world({
      pages: [
        { deliveries: [delivery("g-1", { id: "31" })], complete: true },
        { deliveries: [], complete: true },
      ],
      failRedeliver: new Set(["31"]),
    });
    const first = await w.run({ listedUntil: NOW - 600_000 });
    expect(first.report).toMatchObject({ asked: [], failed: ["g-1: HTTP 500 for 31"] });
    expect(w.store.get("g-1")).toMatchObject({ askFailed: true, attempts: 1, lastListing: NOW });
    // The next listing (5 minutes on) shows nothing new: the refused ask is made again.
    const second = await w.run(first.mark, { now: NOW + 300_000 });
    expect(w.redelivered).toEqual(["31", "31"]);
    expect(second.report.failed).toEqual(["g-1: HTTP 500 for 31"]);
    expect(w.store.get("g-1")).toMatchObject({ attempts: 2, lastListing: NOW + 300_000 });
  });

  it("a refused ask received meanwhile is not asked again", async () => {
    const w = world();
    w.store.rows.set("g-1", row("g-1", { attempts: 1, askFailed: true }));
    w.store.receivedGuids.add("g-1");
    await w.run({ listedUntil: NOW - 600_000 });
    expect(w.redelivered).toEqual([]);
  });

  it("an ask that succeeded at an earlier listing is not made again when its GUID is not listed", async () => {
    const w = world();
    w.store.rows.set("g-1", row("g-1", { attempts: 1, askFailed: false }));
    await w.run({ listedUntil: NOW - 600_000 });
    expect(w.redelivered).toEqual([]);
  });
});

describe("what counts as a success", () => {
  it("a status code from 200 to 299 is a success; 199 and 300 are failures", async () => {
    const w = world({
      pages: [
        {
          deliveries: [
            delivery("g-199", { id: "71", statusCode: 199 }),
            delivery("g-200", { id: "72", statusCode: 200 }),
            delivery("g-299", { id: "73", statusCode: 299 }),
            delivery("g-300", { id: "74", statusCode: 300 }),
          ],
          complete: true,
        },
      ],
    });
    const { report } = await w.run({ listedUntil: NOW - 600_000 });
    expect(report.asked).toEqual(["g-199", "g-300"]);
    // Successes never known before: nothing stored for them.
    expect(w.store.puts.map((p) => p.guid)).toEqual(["g-199", "g-300"]);
  });

  it("a received GUID never known before: nothing stored, nothing asked", async () => {
    const w = world({ pages: [{ deliveries: [delivery("g-recv")], complete: true }] });
    w.store.receivedGuids.add("g-recv");
    await w.run({ listedUntil: NOW - 600_000 });
    expect(w.store.puts).toEqual([]);
    expect(w.redelivered).toEqual([]);
  });

  it("a known GUID already marked succeeded is not stored again", async () => {
    const w = world({ pages: [{ deliveries: [delivery("g-ok", { statusCode: 200 })], complete: true }] });
    w.store.rows.set("g-ok", row("g-ok", { attempts: 1, succeeded: true }));
    await w.run({ listedUntil: NOW - 600_000 });
    expect(w.store.puts).toEqual([]);
  });

  it("a GUID known from an earlier refused ask carries its count, refusal and listing", async () => {
    const w = world({ pages: [{ deliveries: [delivery("g-1", { id: "81" })], complete: true }], budget: 1 });
    w.store.rows.set("g-1", row("g-1", { attempts: 2, askFailed: true, lastListing: NOW - 300_000 }));
    // The budget is spent by the listing: no ask; the row keeps what it knew.
    const { report } = await w.run({ listedUntil: NOW - 600_000 });
    expect(report.asked).toEqual([]);
    expect(w.store.puts).toEqual([]);
  });
});

describe("the budget and a cut listing", () => {
  it("out of budget while asking: a never-asked GUID waits as a pending ask, one asked before keeps its count", async () => {
    // 1 call for the listing, 1 ask: the budget of 2 is then spent.
    const w = world({
      pages: [{ deliveries: [delivery("g-1", { id: "41" }), delivery("g-2", { id: "42" }), delivery("g-3", { id: "43" })], complete: true }],
      budget: 2,
    });
    w.store.rows.set("g-3", row("g-3", { attempts: 2, lastListing: NOW - 600_000 }));
    const { report } = await w.run({ listedUntil: NOW - 600_000 });
    expect(report.asked).toEqual(["g-1"]);
    expect(w.store.get("g-2")).toMatchObject({ attempts: 0, askFailed: true, lastListing: NOW });
    expect(w.store.get("g-3")).toMatchObject({ attempts: 2, lastListing: NOW - 600_000 });
  });

  it("pending asks left over are made at the next sweep before any listing, even when a listing is not due", async () => {
    const w = world();
    w.store.rows.set("g-p", row("g-p", { deliveryId: "51" }));
    w.store.rows.set("g-r", row("g-r", { deliveryId: "52" }));
    w.store.rows.set("g-asked", row("g-asked", { deliveryId: "53", attempts: 1, askFailed: true }));
    w.store.receivedGuids.add("g-r");
    const { report } = await w.run({ listedUntil: NOW - 10_000, lastListingAt: NOW - 10_000 });
    expect(w.redelivered).toEqual(["51"]);
    expect(report).toMatchObject({ asked: ["g-p"], skipped: "listed 10s ago, every 300s" });
    expect(w.store.get("g-r")?.succeeded).toBe(true);
    expect(w.store.get("g-p")).toMatchObject({ attempts: 1, askFailed: false });
  });

  it("a pending ask made before the listing is not made again when the listing shows its GUID", async () => {
    const w = world({ pages: [{ deliveries: [delivery("g-p", { id: "55" })], complete: true }] });
    w.store.rows.set("g-p", row("g-p", { deliveryId: "54" }));
    const { report } = await w.run({ listedUntil: NOW - 600_000 });
    expect(w.redelivered).toEqual(["54"]);
    expect(report.asked).toEqual(["g-p"]);
  });

  it("pending asks stop when the budget's share is spent", async () => {
    const w = world({ budget: 1 });
    w.store.rows.set("g-a", row("g-a", { deliveryId: "61" }));
    w.store.rows.set("g-b", row("g-b", { deliveryId: "62" }));
    const { report } = await w.run({ listedUntil: NOW - 10_000, lastListingAt: NOW - 10_000 });
    expect(w.redelivered).toEqual(["61"]);
    expect(report.asked).toEqual(["g-a"]);
    expect(w.store.get("g-b")?.attempts).toBe(0);
  });

  it("a listing cut short keeps its cursor and resumes from it at the next sweep, not moving the mark until complete", async () => {
    const w = world({
      pages: [
        { deliveries: [delivery("g-1")], complete: false, cursor: "c-2" },
        { deliveries: [delivery("g-2")], complete: true },
      ],
    });
    const first = await w.run({ listedUntil: NOW - 600_000, lastListingAt: NOW - 600_000 });
    expect(first.mark).toEqual({ listedUntil: NOW - 600_000, lastListingAt: NOW, resume: { cursor: "c-2", startedAt: NOW, since: NOW - 720_000 } });
    // A minute later: resumed at once (not held by the interval), from the same start and cursor.
    const second = await w.run(first.mark, { now: NOW + 60_000 });
    expect(w.listed[1]).toEqual({ since: NOW - 720_000, cursor: "c-2", status: "failure" });
    expect(second.mark).toStrictEqual({ listedUntil: NOW, lastListingAt: NOW });
    expect(w.store.get("g-2")?.lastListing).toBe(NOW);
  });

  it("a cut listing without a cursor is complete", async () => {
    const w = world({ pages: [{ deliveries: [], complete: false }] });
    const { mark } = await w.run({ listedUntil: 0 });
    expect(mark).toStrictEqual({ listedUntil: NOW, lastListingAt: NOW });
  });
});

describe("a server that refuses status=failure (GHES, 422)", () => {
  it("lists everything instead, for a day, remembering when it refused; a full listing's cursor says full", async () => {
    const w = world({
      listError: new GithubError(422, "status is not a known parameter"),
      pages: [{ deliveries: [delivery("g-1", { statusCode: 502 })], complete: false, cursor: "c" }],
    });
    const { mark, report } = await w.run({ listedUntil: NOW - 600_000 });
    expect(w.listed.map((l) => l.status)).toEqual(["failure", undefined]);
    expect(report.asked).toEqual(["g-1"]);
    expect(mark).toEqual({
      listedUntil: NOW - 600_000,
      lastListingAt: NOW,
      resume: { cursor: "c", startedAt: NOW, since: NOW - 720_000, full: true },
      filterRefusedAt: NOW,
    });
    // Resumed in full; then, within the day, listed in full from the start.
    await w.run(mark, { now: NOW + 60_000 });
    expect(w.listed[2]).toEqual({ since: NOW - 720_000, cursor: "c", status: undefined });
    const later = await w.run({ listedUntil: NOW, lastListingAt: NOW, filterRefusedAt: NOW }, { now: NOW + 86_399_000 });
    expect(w.listed[3]?.status).toBeUndefined();
    expect(later.mark.filterRefusedAt).toBe(NOW);
    // A day on: the filter is tried again.
    await w.run({ listedUntil: NOW, lastListingAt: NOW, filterRefusedAt: NOW }, { now: NOW + 86_400_000 });
    expect(w.listed[4]?.status).toBe("failure");
  });

  it("any other error of the listing is thrown", async () => {
    const w = world({ listError: new GithubError(500, "HTTP 500") });
    await expect(w.run({ listedUntil: 0 })).rejects.toThrow("HTTP 500");
    const plain = world({ listError: new Error("422 but not GitHub's") });
    await expect(plain.run({ listedUntil: 0 })).rejects.toThrow("422 but not GitHub's");
  });

  it("a 422 while resuming a cut listing is thrown", async () => {
    const w = world({ listError: new GithubError(422, "bad cursor") });
    await expect(w.run({ listedUntil: 0, resume: { cursor: "c", startedAt: NOW - 60_000, since: NOW - 700_000 } })).rejects.toThrow("bad cursor");
  });

  it("a 422 with the budget's share spent: not listed again", async () => {
    const w = world({ listError: new GithubError(422, "refused"), budget: 1 });
    await expect(w.run({ listedUntil: 0 })).rejects.toThrow("refused");
    expect(w.listed).toHaveLength(1);
  });
});
