import { beforeEach, describe, expect, it } from "vitest";
import { sessionValue } from "../../src/http/admin-session.ts";
import type { Fact } from "../../src/store/facts.ts";
import { writeFact } from "../../src/store/kv-facts.ts";
import { writeSweepSummary } from "../../src/store/sweep-summary.ts";
import { ADMIN_TOKEN, call, clearKv, testEnv } from "./support/worker.ts";

beforeEach(clearKv);

const BASE = "https://arc-reaper.test";
const REPO = "octo-org/example-workflow";
const COOKIE = "__Host-arc-reaper-admin";
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();

const get = (path: string, headers: Record<string, string> = {}, env = testEnv()) => call(env, new Request(`${BASE}${path}`, { headers }));
const login = (token: string, env = testEnv()) =>
  call(
    env,
    new Request(`${BASE}/admin/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }).toString(),
      redirect: "manual",
    }),
  );

interface Row {
  runner: string;
  state: string;
  cells: string[];
  runHref?: string;
  jobHref?: string;
}

/** The runner rows of a page, read with workerd's own HTML parser. */
async function rowsOf(res: Response): Promise<Row[]> {
  const rows: Row[] = [];
  let current: Row | undefined;
  let cell: string[] | undefined;
  await new HTMLRewriter()
    .on("tr[data-runner]", {
      element(e) {
        current = { runner: e.getAttribute("data-runner") ?? "", state: e.getAttribute("data-state") ?? "", cells: [] };
        rows.push(current);
      },
    })
    .on("tr[data-runner] td", {
      element() {
        cell = [];
        current?.cells.push("");
      },
      text(t) {
        if (current && cell) current.cells[current.cells.length - 1] += t.text;
      },
    })
    .on("tr[data-runner] a.run", { element: (e) => void (current && (current.runHref = e.getAttribute("href") ?? "")) })
    .on("tr[data-runner] a.job", { element: (e) => void (current && (current.jobHref = e.getAttribute("href") ?? "")) })
    .transform(res)
    .text();
  return rows.map((r) => ({ ...r, cells: r.cells.map(unescapeText) }));
}

const unescapeText = (s: string) =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ").trim();

const started = (runner: string, jobId: number, repo = REPO, startedSecondsAgo = 600): Fact => ({
  type: "job-started", runner, repo, runId: jobId * 10, runAttempt: 1, jobId, startedAt: ago(startedSecondsAgo), source: "test",
});

async function seed(): Promise<void> {
  const kv = testEnv().FACTS;
  const facts: Fact[] = [
    started("arc-running", 1),
    started("arc-finished", 2),
    { type: "job-completed", runner: "arc-finished", repo: REPO, runId: 20, runAttempt: 1, jobId: 2, completedAt: ago(30), conclusion: "cancelled", source: "test" },
    started("arc-reaped", 3),
    { type: "runner-closed", runner: "arc-reaped", jobId: 3, outcome: "reaped", at: ago(5), reason: "run 30 in octo-org/example-workflow is cancelled, completed 400s ago", cause: "run-completed" },
  ];
  for (const f of facts) await writeFact(kv, f, 600_000);
}

describe("GET /admin auth", () => {
  it("answers 401 with the login form and no runner data without a token or cookie", async () => {
    await seed();
    const res = await get("/admin");
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const body = await res.text();
    expect(body).toContain('<form class="login" method="post" action="/admin/login">');
    expect(body).not.toContain("arc-running");
  });

  it.each([
    ["a wrong bearer token", { authorization: "Bearer wrong-token-wrong-token" }],
    ["the raw token as the cookie", { cookie: `${COOKIE}=${ADMIN_TOKEN}` }],
    ["a forged cookie", { cookie: `${COOKIE}=${Math.floor(Date.now() / 1000) + 3600}.${"A".repeat(43)}` }],
    ["the session cookie without its __Host- prefix", { cookie: "arc-reaper-admin=SESSION" }],
  ])("answers 401 with %s", async (_what, headers) => {
    const h: Record<string, string> = { ...headers };
    if (h.cookie?.includes("SESSION")) h.cookie = h.cookie.replace("SESSION", await sessionValue(ADMIN_TOKEN, Date.now()));
    const res = await get("/admin", h);
    expect(res.status).toBe(401);
  });

  it("refuses an expired session and one made with another ADMIN_TOKEN", async () => {
    const expired = await sessionValue(ADMIN_TOKEN, Date.now() - 13 * 3600_000);
    expect((await get("/admin", { cookie: `${COOKIE}=${expired}` })).status).toBe(401);
    const other = await sessionValue("another-admin-token-0123456789", Date.now());
    expect((await get("/admin", { cookie: `${COOKIE}=${other}` })).status).toBe(401);
    const fresh = await sessionValue(ADMIN_TOKEN, Date.now());
    expect((await get("/admin", { cookie: `${COOKIE}=${fresh}` })).status).toBe(200);
  });

  it("takes the bearer token and sends a strict CSP", async () => {
    const res = await get("/admin", bearer);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'; frame-ancestors 'none'/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).not.toContain("Log out"); // nothing to log out of with a bearer header
  });

  it("refuses a wrong token at the login form and sets no cookie", async () => {
    const res = await login("wrong-token-wrong-token");
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await res.text()).toContain("That is not the ADMIN_TOKEN.");
  });

  it("logs in with the form: an HttpOnly, Secure, SameSite=Strict cookie that is not the token; logout clears it", async () => {
    await seed();
    const res = await login(ADMIN_TOKEN);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/admin");
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^__Host-arc-reaper-admin=\d+\.[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    expect(setCookie).not.toContain(ADMIN_TOKEN);
    const cookie = setCookie.split(";")[0]!;

    const page = await get("/admin", { cookie });
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain("arc-running");
    expect(body).toContain('<form method="post" action="/admin/logout">');

    const out = await call(testEnv(), new Request(`${BASE}/admin/logout`, { method: "POST", headers: { cookie }, redirect: "manual" }));
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(/^__Host-arc-reaper-admin=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
  });

  it("refuses an oversized login form", async () => {
    const res = await login(`${ADMIN_TOKEN}${"x".repeat(5000)}`);
    expect(res.status).toBe(413);
    expect(res.headers.get("set-cookie")).toBeNull();
  });
});

describe("GET /admin content", () => {
  it("lists every tracked runner with state, repository, links, age, due time and reason", async () => {
    await seed();
    const rows = await rowsOf(await get("/admin", bearer));
    expect(rows.map((r) => [r.runner, r.state])).toEqual([
      ["arc-finished", "finished"],
      ["arc-reaped", "reaped"],
      ["arc-running", "running"],
    ]);
    const finished = rows[0]!;
    expect(finished.runHref).toBe(`https://github.com/${REPO}/actions/runs/20`);
    expect(finished.jobHref).toBe(`https://github.com/${REPO}/actions/runs/20/job/2`);
    // Runner, State, Repository, Run, Job, Age, Due, Reason
    expect(finished.cells).toEqual([
      "arc-finished",
      "finished cancelled",
      REPO,
      "20",
      "2",
      expect.stringMatching(/^10m \ds$/),
      expect.stringMatching(/^in 4m \d+s$/), // grace 300s from a completion 30s ago
      expect.stringMatching(/^waiting for the grace: job 2 in octo-org\/example-workflow is cancelled, completed \d+s ago; grace 300s$/),
    ]);
    expect(rows[1]!.cells[7]).toBe("run 30 in octo-org/example-workflow is cancelled, completed 400s ago");
    expect(rows[2]!.cells[6]).toMatch(/^in 4d 23h$/); // the 5-day bound from a start 10 minutes ago
  });

  it("filters by state, with counts in the filter links", async () => {
    await seed();
    const res = await get("/admin?state=reaped", bearer);
    const body = await res.clone().text();
    expect((await rowsOf(res)).map((r) => r.runner)).toEqual(["arc-reaped"]);
    expect(body).toContain('<a href="/admin?state=reaped" aria-current="page">reaped (1)</a>');
    expect(body).toContain('<a href="/admin">all (3)</a>');
    expect((await rowsOf(await get("/admin?state=gone", bearer))).map((r) => r.runner)).toEqual([]);
    expect(await (await get("/admin?state=gone", bearer)).text()).toContain("No runners in this state.");
  });

  it("refuses an unknown state with 400, escaped", async () => {
    const res = await get(`/admin?state=${encodeURIComponent("<b>stuck</b>")}`, bearer);
    expect(res.status).toBe(400);
    const body = await res.text();
    expect(body).toContain("state must be one of running, finished, reaped, gone, got &quot;&lt;b&gt;stuck&lt;/b&gt;&quot;");
    expect(body).not.toContain("<b>stuck");
  });

  it("escapes a hostile repository name in text and links", async () => {
    const hostile = `<script>alert(1)</script>/x"><img src=x onerror=alert(2)>`;
    await writeFact(testEnv().FACTS, started("arc-hostile", 9, hostile), 600_000);
    const res = await get("/admin", bearer);
    const body = await res.clone().text();
    expect(body).not.toContain("<script>alert(1)");
    expect(body).not.toContain("<img src=x");
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;/x&quot;&gt;&lt;img src=x onerror=alert(2)&gt;");
    const [row] = await rowsOf(res);
    expect(row!.cells[2]).toBe(hostile);
    const path = hostile.split("/").map(encodeURIComponent).join("/");
    expect(row!.runHref).toBe(`https://github.com/${path}/actions/runs/90`);
    expect(new URL(row!.runHref!).origin).toBe("https://github.com");
  });

  it("shows the last sweep's summary", async () => {
    expect(await (await get("/admin", bearer)).text()).toContain("No sweep summary recorded yet.");
    await writeSweepSummary(testEnv().FACTS, {
      type: "sweep-summary", at: ago(42), durationMs: 87, checked: 4, deleted: 1, kept: 2, waiting: 1, gone: 0,
      errors: { cluster: 0, github: 2, redelivery: 0 }, githubCalls: 5, rateLimitRemaining: 4990, dryRun: false,
    });
    const text = unescapeText((await (await get("/admin", bearer)).text()).replace(/<[^>]+>/g, " "));
    expect(text).toMatch(/at 4\ds ago \(\d{4}-/);
    expect(text).toContain("took 87 ms");
    expect(text).toContain("runners 4 checked: 1 deleted, 2 kept, 1 waiting, 0 gone");
    expect(text).toContain("errors cluster 0, github 2, redelivery 0");
    expect(text).toContain("GitHub requests 5, rate limit left 4990");
  });

  it("links to a GitHub Enterprise Server's web host when GITHUB_API_URL is one", async () => {
    await writeFact(testEnv().FACTS, started("arc-ghes", 4), 600_000);
    const env = testEnv({ GITHUB_API_URL: "https://ghes.example.com/api/v3" });
    const [row] = await rowsOf(await get("/admin", bearer, env));
    expect(row!.jobHref).toBe(`https://ghes.example.com/${REPO}/actions/runs/40/job/4`);
  });
});
