// The admin page's day at a glance: runners reaped, kept and gone per hour over
// the last 24 hours and the delay after the grace, from the ledger's hourly
// counters, which every close (and every new keep of a finished runner) adds
// to; and what a page view reads, however long the history behind it.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { readDay } from "../../../src/ledger/day-at-glance.ts";
import { DELAY_BUCKETS, HOUR_MS, recordOutcome, type Outcome } from "../../../src/ledger/hourly-rollup.ts";
import { Sql } from "../../../src/ledger/sql.ts";
import { closeBySweep, jobStartedFact, recordFacts } from "../support/seed.ts";
import { before, REPO, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, call, configureLedger, ledgerOf, report, testEnv } from "../support/worker.ts";
import { NOW } from "../support/kube-calls.ts";

const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
// Sweeps run a day ahead of the clock, so that no alarm of the ledger fires while a test runs (see sweep.test.ts).

const dayOf = (env: WorkerEnv, now: number) => runInDurableObject(ledgerOf(env), (_i, state) => readDay(new Sql(state.storage.sql), now));

async function record(env: WorkerEnv, outcomes: Outcome[]): Promise<void> {
  await configureLedger(env);
  await runInDurableObject(ledgerOf(env), (_i, state) => {
    const sql = new Sql(state.storage.sql);
    for (const o of outcomes) recordOutcome(sql, o);
  });
}

interface Bar {
  hour: string;
  reaped: number;
  kept: number;
  gone: number;
  title: string;
  rects: string[];
}

/** The chart's bars, its title and the line under it, read with workerd's HTML parser. */
async function chartOf(res: Response): Promise<{ bars: Bar[]; title: string; delay: string; svgs: number }> {
  const bars: Bar[] = [];
  let title = "";
  let delay = "";
  let svgs = 0;
  let inBarTitle = false;
  await new HTMLRewriter()
    .on("svg#day-chart", { element: () => void svgs++ })
    .on("svg#day-chart > title", { text: (t) => void (title += t.text) })
    .on("g.hour", {
      element(e) {
        const n = (k: string) => Number(e.getAttribute(`data-${k}`));
        bars.push({ hour: e.getAttribute("data-hour") ?? "", reaped: n("reaped"), kept: n("kept"), gone: n("gone"), title: "", rects: [] });
      },
    })
    .on("g.hour > title", {
      element: (e) => {
        inBarTitle = true;
        e.onEndTag(() => void (inBarTitle = false));
      },
      text: (t) => void (inBarTitle && (bars.at(-1)!.title += t.text)),
    })
    .on("g.hour > rect[class]", { element: (e) => void bars.at(-1)!.rects.push(e.getAttribute("class") ?? "") })
    .on("p#delay", { text: (t) => void (delay += t.text) })
    .transform(res)
    .text();
  return { bars, title, delay: delay.replace(/\s+/g, " ").trim(), svgs };
}

describe("the day at a glance", () => {
  it("counts the closes of a real sweep in the sweep's hour, with the delay after the grace", async () => {
    const s = await stack();
    await closeBySweep(s, NOW, [
      { name: "arc-day-reaped", runId: 30, jobId: 3, by: "run-completed" }, // run completed 400s before: 100s after the grace
      { name: "arc-day-job", runId: 40, jobId: 4, by: "job-completed" }, // job completed 600s before: 300s after
      { name: "arc-day-gone", runId: 50, jobId: 5, by: "gone" },
    ]);
    const day = await dayOf(s.env, NOW);
    expect(day.hours).toHaveLength(24);
    expect(day.hours.at(-1)).toEqual({
      start: new Date(Math.floor(NOW / HOUR_MS) * HOUR_MS).toISOString(),
      reaped: 2,
      kept: 0,
      gone: 1,
      // The sweep's one GitHub request (the failed deliveries' listing), a 200: made and counted.
      githubRequests: 1,
      githubCounted: 1,
    });
    expect(day.hours.slice(0, -1).every((h) => h.reaped + h.kept + h.gone === 0)).toBe(true);
    // 100s and 300s: the buckets up to 120s and up to 300s.
    expect(day.delay).toEqual({ count: 2, p50: { atMostSeconds: 120 }, p99: { atMostSeconds: 300 } });
    // A second sweep closes nothing more and counts nothing more.
    await s.sweep(NOW + 60_000);
    expect((await dayOf(s.env, NOW)).hours.at(-1)).toMatchObject({ reaped: 2, gone: 1 });
  });

  it("counts a finished runner kept once per new reason (a dry run), not on every sweep", async () => {
    const s = await stack({ REAPER_DRY_RUN: "true" });
    // Both sweeps within one hour (ten minutes into NOW's): a run at hh:59 would put the second in the next hour's bar.
    const at = Math.floor(NOW / HOUR_MS) * HOUR_MS + 10 * 60_000;
    await closeBySweep(s, at, [{ name: "arc-day-dry", runId: 60, jobId: 6, by: "job-completed" }]);
    await s.sweep(at + 60_000);
    const day = await dayOf(s.env, at + 60_000);
    expect(day.hours.at(-1)).toMatchObject({ reaped: 0, kept: 1, gone: 0 });
    expect(day.keptWhy).toEqual([{ why: "dry run", n: 1 }]);
    expect(day.delay).toBeNull();
  });

  it("draws 24 labelled bars on /admin from the hourly counters, with p50 and p99, under the strict CSP", async () => {
    const env = testEnv();
    const now = Date.now();
    const hour = (ago: number) => now - ago * HOUR_MS;
    await record(env, [
      ...Array.from({ length: 9 }, () => ({ outcome: "reaped" as const, at: hour(0), delayAfterGraceMs: 2_000 })),
      { outcome: "reaped", at: hour(0), delayAfterGraceMs: 200_000 },
      { outcome: "gone", at: hour(0) },
      { outcome: "kept", at: hour(5), why: "paused" },
      { outcome: "reaped", at: hour(23), delayAfterGraceMs: 0 },
      { outcome: "gone", at: hour(24) }, // 24 hours ago: outside the day
    ]);
    const res = await call(env, new Request("https://arc-reaper.test/admin", { headers: bearer }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toMatch(
      /^default-src 'none'; style-src 'sha256-[^']+'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
    const body = await res.clone().text();
    expect(body).not.toMatch(/<script|style="/); // nothing the CSP would refuse
    expect(body.indexOf('id="day-chart"')).toBeLessThan(body.indexOf('id="runners"') === -1 ? body.indexOf('id="no-runners"') : body.indexOf('id="runners"'));
    const chart = await chartOf(res);
    expect(chart.svgs).toBe(1);
    expect(chart.bars).toHaveLength(24);
    expect(chart.title).toBe("Runners per hour, last 24 hours (UTC): 11 reaped, 1 kept, 1 gone in the last 24 hours");
    const last = chart.bars.at(-1)!;
    const start = new Date(Math.floor(now / HOUR_MS) * HOUR_MS);
    expect(last).toMatchObject({ hour: start.toISOString(), reaped: 10, kept: 0, gone: 1, rects: ["bar-reaped", "bar-gone"] });
    const hh = (d: Date) => d.toISOString().slice(11, 16);
    expect(last.title).toBe(`${hh(start)}–${hh(new Date(start.getTime() + HOUR_MS))} UTC: 10 reaped, 0 kept, 1 gone; GitHub requests 0 made, 0 counted`);
    expect(chart.bars.at(-6)).toMatchObject({ kept: 1, rects: ["bar-kept"] });
    expect(chart.bars[0]).toMatchObject({ reaped: 1, rects: ["bar-reaped"] });
    expect(chart.bars.filter((b) => b.rects.length === 0)).toHaveLength(21);
    // Nine of eleven within 2s, one within 1s, one past 180s.
    expect(chart.delay).toBe("Delay after the grace: p50 ≤ 2s, p99 ≤ 5m (11 reaped). Kept: 1 paused.");
  });

  it("reads the same rows per /admin view with 10,000 or 100,000 closed runners in the history", async () => {
    const env = testEnv();
    await configureLedger(env);
    await recordFacts(
      env,
      [1, 2, 3].map((i) => jobStartedFact({ runner: `arc-open-${i}`, repo: REPO, runId: 100 + i, jobId: i, startedAt: before(Date.now(), 600) })),
    );
    // A full day of counters: every hour, every delay bucket, every outcome and reason; the most a view can read of them.
    const now = Date.now();
    const full: Outcome[] = [];
    for (let h = 0; h < 24; h++) {
      const at = now - h * HOUR_MS;
      for (const [i, upper] of [...DELAY_BUCKETS, 7200].entries()) full.push({ outcome: "reaped", at, delayAfterGraceMs: upper * 1000 - (i === 0 ? 500 : 0) });
      for (const why of ["dry run", "paused", "deletion cap", "error", "being deleted", "moved on", "other"]) full.push({ outcome: "kept", at, why });
      full.push({ outcome: "gone", at });
    }
    await record(env, full);
    const views = ["", "state=reaped", "state=running", `repo=${REPO}`];
    const rowsRead = async () => {
      const read: Record<string, number> = {};
      for (const q of views) {
        const params = new URLSearchParams(q);
        const view = await ledgerOf(env)
          .admin()
          .adminView({ state: (params.get("state") ?? undefined) as "reaped" | undefined, repo: params.get("repo") ?? undefined }, Date.now());
        read[q || "(all)"] = view.rowsRead;
      }
      return read;
    };
    await ledgerOf(env).seedHistory(1, 10_000);
    const at10k = await rowsRead();
    await ledgerOf(env).seedHistory(10_001, 90_000);
    const at100k = await rowsRead();
    expect(at100k).toEqual(at10k);
    // A page of 100 rows (and the one that says whether there is a next page), the counters, the open counts and one day of hourly counters.
    for (const n of Object.values(at100k)) expect(n).toBeLessThan(1_000);
    const page = await call(env, new Request("https://arc-reaper.test/admin", { headers: bearer }));
    expect(page.status).toBe(200);
    expect((await chartOf(page)).bars).toHaveLength(24);
    await report(
      `rows read per /admin view with 100,000 closed runners (10,000 gave the same): ${JSON.stringify(at100k)}; a full day of hourly counters is ${full.length} rows`,
    );
  });
});
