// The admin page in headless Chromium against the real Worker under wrangler
// dev: log in through the form, see a reaped runner by its names (hostile ones
// too), filter by state, read the day at a glance, log out; a typed login URL
// and an unknown admin path are not dead ends. Saves docs/admin-page.png.
// Chromium is the system's (/usr/bin/chromium, Debian's package) when there is
// one, otherwise the one inside the npm package @sparticuz/chromium (a
// devDependency, so `npm ci` brings it). This test never skips.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { pickChromium } from "./pick-chromium.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { ROOT, startLocalStack, waitFor, workflowJobPayload, workflowRunPayload, type LocalStack } from "../../../scripts/lib/local-stack.ts";

const REPO = "octo-org/octo-repo";
const INSTALLATION = 4242;
const REAPED = "arc-runners-q2w9z-runner-r3ap3";
const RUNNING = "arc-runners-q2w9z-runner-b5sy7";
const KEPT = "arc-runners-q2w9z-runner-k33p1";
const SCREENSHOT = join(ROOT, "docs/admin-page.png");
/** Closed runners seeded into the history (bench hook), spread over the last 24 hours, so the day has a shape. */
const HISTORY = 1200;
const RLO = "\u202e";
// Author-written names as a hostile repository could write them.
const HOSTILE = {
  workflow_name: `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`,
  name: `deploy ${"to-prod ".repeat(40)}`,
  head_branch: `${RLO}main${RLO}"><b>x</b>`,
  html_url: "javascript:alert(3)",
};
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

let stack: LocalStack | undefined;
let context: BrowserContext | undefined;
let page: Page;
let profile: string | undefined;
const consoleErrors: string[] = [];

beforeAll(async () => {
  stack = await startLocalStack({ repositories: [REPO], installationId: INSTALLATION, settings: { REAPER_GRACE_SECONDS: "5", ARC_REAPER_TEST_HOOKS: "on" } });
  const s = stack;
  const seeded = await fetch(`${s.url}/test/seed-history?from=1&count=${HISTORY}`, { method: "POST", headers: { authorization: `Bearer ${s.adminToken}` } });
  expect(seeded.status).toBe(200);
  for (const [name, runId] of [
    [REAPED, 7001],
    [RUNNING, 7002],
  ] as const) {
    await s.kube.seed(
      makeEphemeralRunner({
        namespace: s.namespace,
        scaleSet: "arc-runners",
        name,
        workflowRunId: runId,
        jobRepositoryName: REPO,
        creationTimestamp: ago(3600),
      }),
    );
  }
  const job = (runner: string, runId: number, jobId: number, names: Record<string, unknown>) => {
    const payload = workflowJobPayload("in_progress", { runner, repo: REPO, runId, runAttempt: 1, jobId, installationId: INSTALLATION, startedAt: ago(300) });
    Object.assign(payload.workflow_job as Record<string, unknown>, names);
    return payload;
  };
  const ci = { workflow_name: "CI", name: "build (linux)", head_branch: "main", html_url: `https://github.com/${REPO}/actions/runs/7001/job/70010` };
  expect((await s.postWebhook("workflow_job", job(REAPED, 7001, 70010, ci))).status).toBe(202);
  expect((await s.postWebhook("workflow_job", job(RUNNING, 7002, 70020, HOSTILE))).status).toBe(202);
  const cancelled = workflowRunPayload({ repo: REPO, runId: 7001, runAttempt: 1, installationId: INSTALLATION, updatedAt: ago(60), conclusion: "cancelled" });
  expect((await s.postWebhook("workflow_run", cancelled)).status).toBe(202);
  // The run completed 60 s ago, past the 5 s grace: the ledger's alarm deletes its runner at once.
  await waitFor(
    "the alarm to reap the cancelled run's runner",
    async () => ((await s.kube.get(s.namespace, REAPED))?.metadata.deletionTimestamp ? true : undefined),
    10_000,
  );
  const { summary } = await s.sweep();
  expect(summary.deleted).toBe(0);

  const browser = await pickChromium();
  profile = await mkdtemp(join(tmpdir(), "arc-reaper-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: browser.executablePath,
    headless: true,
    timeout: 30_000,
    args: browser.args,
  });
  context.setDefaultTimeout(15_000);
  page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (m) => {
    // The 401s of the login steps are expected; anything else (a CSP refusal above all) is not.
    if (m.type() === "error" && !/status of 401 \(Unauthorized\)/.test(m.text())) consoleErrors.push(m.text());
  });
}, 120_000);

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await stack?.stop();
  if (profile) await rm(profile, { recursive: true, force: true });
}, 30_000);

/** The rows of this test's runners (the seeded history's aside). */
const rowStates = () =>
  page
    .locator("tr[data-runner]")
    .evaluateAll((rows) =>
      rows.map((r) => [r.getAttribute("data-runner"), r.getAttribute("data-state")]).filter(([name]) => !name?.startsWith("history-runner-")),
    );
const cellTexts = (runner: string) => page.locator(`tr[data-runner="${runner}"] td`).allTextContents();

describe("the admin page in Chromium", () => {
  it("asks for the token, logs in through the form, and keeps the Secure cookie on http://127.0.0.1", async () => {
    const s = stack!;
    const first = await page.goto(`${s.url}/admin`);
    expect(first?.status()).toBe(401);
    expect(await page.locator("form.login").count()).toBe(1);
    expect(await page.locator("tr[data-runner]").count()).toBe(0);

    await page.fill("#token", "not-the-admin-token-at-all");
    await Promise.all([page.waitForURL(`${s.url}/admin/login`), page.click("form.login button[type=submit]")]);
    expect(await page.locator("[role=alert]").textContent()).toBe("That is not the ADMIN_TOKEN.");
    expect(await context!.cookies(s.url)).toEqual([]);

    await page.fill("#token", s.adminToken);
    await Promise.all([page.waitForURL(`${s.url}/admin`), page.click("form.login button[type=submit]")]);
    expect(await page.title()).toBe("arc-reaper: runners");

    const cookies = await context!.cookies(s.url);
    expect(cookies).toEqual([expect.objectContaining({ name: "__Host-arc-reaper-admin", path: "/", httpOnly: true, secure: true, sameSite: "Strict" })]);
    expect(cookies[0]!.value).not.toContain(s.adminToken);
    expect(await page.evaluate("document.cookie")).toBe(""); // HttpOnly: no script can read it
  });

  it("shows the reaped runner with its reason and links, styled under the page's CSP", async () => {
    expect(await rowStates()).toEqual([
      [RUNNING, "running"],
      [REAPED, "reaped"],
    ]); // by name
    const row = page.locator(`tr[data-runner="${REAPED}"]`);
    expect(await row.locator("td.reason .why").textContent()).toMatch(/^run 7001 in octo-org\/octo-repo is cancelled, completed \d+s ago$/);
    expect(await row.locator("td.reason code.code").textContent()).toBe("RunCompleted"); // its decision's code, beside the words
    expect(await row.locator("a.run").getAttribute("href")).toBe(`https://github.com/${REPO}/actions/runs/7001`);
    expect(await row.locator("a.job").getAttribute("href")).toBe(`https://github.com/${REPO}/actions/runs/7001/job/70010`);
    // The alarm reaped it at the grace end; the sweep that followed had nothing left to delete.
    expect(await page.locator("#last-sweep").textContent()).toContain("0 deleted");
    // The inline stylesheet is allowed by its hash: a wrong hash would leave the table unstyled and log a CSP error.
    expect(await page.evaluate("getComputedStyle(document.querySelector('th')).backgroundColor")).toBe("rgb(246, 248, 250)");
    expect(consoleErrors).toEqual([]);
  });

  it("shows each runner by its workflow, job and branch, hostile names as text; closed rows say how they closed, open ones when they are due", async () => {
    const reaped = await cellTexts(REAPED);
    // Runner, State, Repository, Branch, Workflow · job, Run, Job, Age, Due / closed, Reason
    expect(reaped.slice(3, 5).map((t) => t.trim())).toEqual(["main", "CI · build (linux)"]);
    expect(reaped[8]).toMatch(/^reaped \d+s after the grace ended, \d+s ago$/); // not a prune time "in 6d 23h"
    expect(await page.locator(`tr[data-runner="${REAPED}"] a.run`).getAttribute("href")).toBe(`https://github.com/${REPO}/actions/runs/7001`);

    const running = await cellTexts(RUNNING);
    expect(running[3]!.trim()).toBe(`main"><b>x</b>`); // the override marks dropped, the markup shown as text
    expect(running[4]!.trim()).toBe(`${HOSTILE.workflow_name} · ${`deploy ${"to-prod ".repeat(40)}`.trim().slice(0, 199)}…`);
    expect(running[8]).toMatch(/^in \d+/);
    const cells = page.locator(`tr[data-runner="${RUNNING}"] td.names`);
    expect(await cells.locator("b, img, script").count()).toBe(0); // no element came out of a name
    expect(await page.locator(`tr[data-runner="${RUNNING}"] a.run`).getAttribute("href")).toBe(`https://github.com/${REPO}/actions/runs/7002`);
    expect(await page.locator("body").evaluate((b) => b.innerHTML.includes("\u202e"))).toBe(false);
    expect(await page.evaluate("typeof window.alert === 'function' && document.querySelectorAll('script').length")).toBe(0);
    expect(consoleErrors).toEqual([]);
  });

  it("draws the last 24 hours above the table: 24 labelled bars, the delay after the grace", async () => {
    const chart = page.locator("svg#day-chart");
    expect(await chart.count()).toBe(1);
    expect(await chart.evaluate((svg) => svg.getBoundingClientRect().top)).toBeLessThan(
      await page.locator("table#runners").evaluate((t) => t.getBoundingClientRect().top),
    );
    expect(await chart.locator("g.hour").count()).toBe(24);
    expect(await chart.locator("g.hour > title").count()).toBe(24);
    expect(await chart.locator(":scope > title").textContent()).toMatch(
      /^Runners per hour, last 24 hours \(UTC\): \d+ reaped, \d+ kept, \d+ gone in the last 24 hours$/,
    );
    const last = chart.locator("g.hour").last();
    expect(Number(await last.getAttribute("data-reaped"))).toBeGreaterThanOrEqual(1); // the runner the alarm reaped, at least
    expect(await last.locator("title").textContent()).toMatch(/^\d\d:00–\d\d:00 UTC: \d+ reaped, \d+ kept, \d+ gone; GitHub requests \d+ made, \d+ counted$/);
    // The seeded history closed in every hour: every bar has a height.
    const heights = await chart
      .locator("g.hour")
      .evaluateAll((gs) => gs.map((g) => [...g.querySelectorAll("rect[class]")].reduce((h, r) => h + r.getBoundingClientRect().height, 0)));
    expect(heights.filter((h) => h > 0).length).toBeGreaterThanOrEqual(23); // 24 unless the hour turned since the seeding
    expect(await page.locator("#delay").textContent()).toMatch(/^Delay after the grace: p50 ≤ \d+[smh], p99 ≤ \d+[smh] \(\d+ reaped\)\./);
    // GitHub's two counts apart: requests made, and those counted against the rate limit (all but 304s).
    expect(await page.locator("#github-calls").textContent()).toMatch(
      /^GitHub requests in the last 24 hours: \d+ made, \d+ counted against the rate limit \(\d+ answered 304 Not Modified\)\.$/,
    );
    expect(await chart.locator("text.axis").count()).toBeGreaterThanOrEqual(10); // hour labels and the scale
  });

  it("filters by state", async () => {
    const s = stack!;
    await Promise.all([page.waitForURL(`${s.url}/admin?state=reaped`), page.click('nav.filter a[href="/admin?state=reaped"]')]);
    expect(await rowStates()).toEqual([[REAPED, "reaped"]]);
    expect(await page.locator('nav.filter a[aria-current="page"]').textContent()).toBe(`reaped (${HISTORY / 2 + 1})`);

    await Promise.all([page.waitForURL(`${s.url}/admin?state=running`), page.click('nav.filter a[href="/admin?state=running"]')]);
    expect(await rowStates()).toEqual([[RUNNING, "running"]]);

    await Promise.all([page.waitForURL(`${s.url}/admin?state=gone`), page.click('nav.filter a[href="/admin?state=gone"]')]);
    expect(await rowStates()).toEqual([]); // only the seeded history's
    expect(await page.locator('nav.filter a[aria-current="page"]').textContent()).toBe(`gone (${HISTORY / 2})`);

    await Promise.all([page.waitForURL(`${s.url}/admin`), page.click('nav.filter a[href="/admin"]')]);
  });

  it("pauses and resumes with the page's button (a session form post with the browser's own Origin)", async () => {
    const s = stack!;
    await Promise.all([page.waitForURL(`${s.url}/admin`), page.click("button#pause")]);
    expect(await page.locator("#paused").textContent()).toMatch(/^Paused since \d{4}-.* \(by session\): nothing is deleted\./);
    // A job that ended while paused is kept (and counted kept, for the pause), then reaped on resume.
    await s.kube.seed(
      makeEphemeralRunner({
        namespace: s.namespace,
        scaleSet: "arc-runners",
        name: KEPT,
        workflowRunId: 7003,
        jobRepositoryName: REPO,
        creationTimestamp: ago(3600),
      }),
    );
    const done = workflowJobPayload("completed", {
      runner: KEPT,
      repo: REPO,
      runId: 7003,
      runAttempt: 1,
      jobId: 70030,
      installationId: INSTALLATION,
      startedAt: ago(300),
      completedAt: ago(60),
      conclusion: "success",
    });
    Object.assign(done.workflow_job as Record<string, unknown>, { workflow_name: "Release", name: "publish", head_branch: "v2.1" });
    expect((await s.postWebhook("workflow_job", done)).status).toBe(202);
    await waitFor(
      "the alarm to keep the finished runner for the pause",
      async () => ((await s.adminRunners("finished")).find((r) => r.name === KEPT && r.reason.startsWith("paused: would delete")) ? true : undefined),
      10_000,
    );
    await page.reload();
    expect(Number(await page.locator("svg#day-chart g.hour").last().getAttribute("data-kept"))).toBe(1);
    expect(await page.locator("#delay").textContent()).toContain("Kept: 1 paused.");
    await Promise.all([page.waitForURL(`${s.url}/admin`), page.click("button#resume")]);
    expect(await page.locator("#paused").count()).toBe(0);
    expect(await page.locator("button#pause").count()).toBe(1);
    await waitFor("the alarm to reap it on resume", async () => ((await s.kube.get(s.namespace, KEPT))?.metadata.deletionTimestamp ? true : undefined), 10_000);
  });

  it("takes a screenshot of the page", async () => {
    const s = stack!;
    await page.goto(`${s.url}/admin?limit=3`); // this test's runners, not the seeded history
    expect((await rowStates()).map(([name]) => name)).toEqual([KEPT, RUNNING, REAPED]);
    await page.setViewportSize({ width: 1400, height: 700 });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.goto(`${s.url}/admin`);
  });

  it("opens a runner's story from its name, under the same CSP", async () => {
    const s = stack!;
    await Promise.all([page.waitForURL(`${s.url}/admin/runners/${REAPED}?format=html`), page.click(`tr[data-runner="${REAPED}"] a.runner`)]);
    const sources = await page.locator("table.story tbody tr td:nth-child(3)").allTextContents();
    expect(sources[0]).toMatch(/^webhook delivery [0-9a-f-]{36}$/);
    expect(sources.at(-1)).toBe("alarm");
    expect(await page.evaluate("getComputedStyle(document.querySelector('th')).backgroundColor")).toBe("rgb(246, 248, 250)");
    expect(consoleErrors).toEqual([]);
    await Promise.all([page.waitForURL(`${s.url}/admin`), page.click('header a[href="/admin"]')]);
  });

  it("logs out: the cookie is cleared and the page asks for the token again", async () => {
    const s = stack!;
    await Promise.all([page.waitForURL(`${s.url}/admin`), page.click("text=Log out")]);
    expect(await context!.cookies(s.url)).toEqual([]);
    expect(await page.locator("form.login").count()).toBe(1);
    expect(await page.locator("tr[data-runner]").count()).toBe(0);
  });

  it("has no dead ends: a typed login URL shows the form (or /admin once logged in); an unknown admin path is a page with a way back", async () => {
    const s = stack!;
    const login = await page.goto(`${s.url}/admin/login`);
    expect(login?.status()).toBe(200);
    expect(await page.locator("form.login").count()).toBe(1);
    await page.fill("#token", s.adminToken);
    await Promise.all([page.waitForURL(`${s.url}/admin`), page.click("form.login button[type=submit]")]);
    await page.goto(`${s.url}/admin/login`);
    expect(page.url()).toBe(`${s.url}/admin`);

    const missing = await page.goto(`${s.url}/admin/runnres`);
    expect(missing?.status()).toBe(404);
    expect(missing?.headers()["content-type"]).toMatch(/^text\/html/);
    expect(await page.locator("[role=alert]").textContent()).toBe("Nothing here: no route for GET /admin/runnres.");
    await Promise.all([page.waitForURL(`${s.url}/admin`), page.click('a[href="/admin"]')]);
    expect(await page.locator("svg#day-chart").count()).toBe(1);
    expect(consoleErrors.filter((e) => !/status of 404/.test(e))).toEqual([]);
  });
});
