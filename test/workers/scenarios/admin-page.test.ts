import { describe, expect, it } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { runInDurableObject } from "cloudflare:test";
import { workflowJobPayload, workflowRunPayload } from "../support/payloads.ts";
import { closeBySweep, jobStartedFact, lastSweep, recordFacts, writeLastSweep } from "../support/seed.ts";
import { before, INSTALLATION, NS, REPO, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call, deliver, ledgerOf, testEnv } from "../support/worker.ts";
import { NOW } from "../support/kube-calls.ts";

const BASE = "https://arc-reaper.test";
const COOKIE = "__Host-arc-reaper-admin";
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
// Sweeps run a day ahead of the clock, so that no alarm of the ledger (which
// fires on the real clock) is due while a test runs; see sweep.test.ts.

const get = (env: WorkerEnv, path: string, headers: Record<string, string> = {}) => call(env, new Request(`${BASE}${path}`, { headers }));
const login = (env: WorkerEnv, token: string, headers: Record<string, string> = {}) =>
  call(
    env,
    new Request(`${BASE}/admin/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, ...headers },
      body: new URLSearchParams({ token }).toString(),
      redirect: "manual",
    }),
  );

/** Logs in with the form and answers the session cookie (`name=value`). */
async function sessionCookie(env: WorkerEnv, token = ADMIN_TOKEN): Promise<string> {
  const res = await login(env, token);
  expect(res.status).toBe(303);
  return (res.headers.get("set-cookie") ?? "").split(";")[0]!;
}

interface Row {
  runner: string;
  state: string;
  cells: string[];
  runHref?: string;
  jobHref?: string;
}

/** The runner rows of a page, read with workerd's own HTML parser. */
async function rowsOf(res: Response): Promise<Row[]> {
  return (await pageOf(res)).rows;
}

/** The runner rows and the next-page link of a page. */
async function pageOf(res: Response): Promise<{ rows: Row[]; next?: string }> {
  const rows: Row[] = [];
  let next: string | undefined;
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
    .on("a#next-page", { element: (e) => void (next = unescapeText(e.getAttribute("href") ?? "")) })
    .transform(res)
    .text();
  return { rows: rows.map((r) => ({ ...r, runner: unescapeText(r.runner), cells: r.cells.map(unescapeText) })), next };
}

const unescapeText = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();

/** Visible text of a page, tags dropped. */
const textOf = async (res: Response) => unescapeText((await res.text()).replace(/<[^>]+>/g, " "));

/** A job started on `runner` `secondsAgo` ago (real clock), through a signed delivery. */
async function started(env: WorkerEnv, runner: string, jobId: number, o: { repo?: string; secondsAgo?: number; delivery?: string } = {}): Promise<void> {
  const payload = workflowJobPayload("in_progress", {
    runner,
    jobId,
    runId: jobId * 10,
    runAttempt: 1,
    repo: o.repo ?? REPO,
    startedAt: ago(o.secondsAgo ?? 600),
    installationId: INSTALLATION,
  });
  const res = await deliver(env, "workflow_job", payload, { delivery: o.delivery });
  expect(res.status).toBe(202);
}

/**
 * One runner in each state: reaped and gone by a real sweep against the
 * stand-ins, then a running and a finished one delivered on the real clock (so
 * their reasons and due times are the facts' own). Listed newest first:
 * arc-finished, arc-running, arc-gone, arc-reaped.
 */
async function world(): Promise<WorkerEnv> {
  const s = await stack();
  await closeBySweep(s, NOW, [
    { name: "arc-reaped", runId: 30, jobId: 3, by: "run-completed" },
    { name: "arc-gone", runId: 50, jobId: 5, by: "gone" },
  ]);
  await started(s.env, "arc-running", 1);
  const done = await s.jobCompleted({ runner: "arc-finished", runId: 20, jobId: 2, startedAt: ago(600), completedAt: ago(30), conclusion: "cancelled" });
  expect(done.status).toBe(202);
  return s.env;
}

describe("GET /admin auth", () => {
  it("answers 401 with the login form and no runner data without a token or cookie", async () => {
    const env = testEnv();
    await started(env, "arc-running", 1);
    const res = await get(env, "/admin");
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const body = await res.text();
    expect(body).toContain('<form class="login" method="post" action="/admin/login">');
    expect(body).not.toContain("arc-running");
    expect((await get(env, "/admin", bearer)).status).toBe(200); // the runner is there for the admin
  });

  it.each([
    ["a wrong bearer token", { authorization: "Bearer wrong-token-wrong-token" }],
    ["the raw token as the cookie", { cookie: `${COOKIE}=${ADMIN_TOKEN}` }],
    ["a forged cookie of the right shape", { cookie: `${COOKIE}=${"A".repeat(43)}` }],
    ["the old HMAC cookie shape", { cookie: `${COOKIE}=${Math.floor(Date.now() / 1000) + 3600}.${"A".repeat(43)}` }],
    ["the session cookie without its __Host- prefix", { cookie: "arc-reaper-admin=SESSION" }],
  ])("answers 401 with %s", async (_what, headers) => {
    const env = testEnv();
    const h: Record<string, string> = { ...headers };
    if (h.cookie?.includes("SESSION")) h.cookie = h.cookie.replace("SESSION", (await sessionCookie(env)).split("=")[1]!);
    const res = await get(env, "/admin", h);
    expect(res.status).toBe(401);
  });

  it("refuses an expired session and one made with another ADMIN_TOKEN (rotating the token ends every session)", async () => {
    const env = testEnv();
    const cookie = await sessionCookie(env);
    expect((await get(env, "/admin", { cookie })).status).toBe(200);
    // The same ledger, after ADMIN_TOKEN was rotated: the session was made with the old token.
    const rotated = { ...env, ADMIN_TOKEN: "another-admin-token-0123456789" } as WorkerEnv;
    expect((await get(rotated, "/admin", { cookie })).status).toBe(401);
    expect((await get(rotated, "/admin", { cookie: await sessionCookie(rotated, "another-admin-token-0123456789") })).status).toBe(200);
    // A session past its 12 hours.
    const late = await sessionCookie(env);
    await runInDurableObject(ledgerOf(env), (_i, state) => void state.storage.sql.exec("UPDATE sessions SET expires_at = ?", Date.now() - 1));
    expect((await get(env, "/admin", { cookie: late })).status).toBe(401);
  });

  it("takes the bearer token and sends a strict CSP", async () => {
    const res = await get(testEnv(), "/admin", bearer);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    // Not no-referrer: browsers would then send "Origin: null" on the page's own forms, and the Origin check refuse them.
    expect(res.headers.get("referrer-policy")).toBe("same-origin");
    expect(await res.text()).not.toContain("Log out"); // nothing to log out of with a bearer header
  });

  it("refuses a wrong token at the login form and sets no cookie", async () => {
    const res = await login(testEnv(), "wrong-token-wrong-token");
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await res.text()).toContain("That is not the ADMIN_TOKEN.");
  });

  it("logs in with the form: an HttpOnly, Secure, SameSite=Strict cookie that is a random session id; logout revokes it, copies included", async () => {
    const env = testEnv();
    await started(env, "arc-running", 1);
    const res = await login(env, ADMIN_TOKEN);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/admin");
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^__Host-arc-reaper-admin=[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    expect(setCookie).not.toContain(ADMIN_TOKEN);
    const cookie = setCookie.split(";")[0]!;
    // The ledger holds the session, by the hash of its id only.
    const rows = await runInDurableObject(ledgerOf(env), (_i, state) => state.storage.sql.exec<{ id_hash: string }>("SELECT id_hash FROM sessions").toArray());
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id_hash).not.toBe(cookie.split("=")[1]);

    const page = await get(env, "/admin", { cookie });
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain("arc-running");
    expect(body).toContain('<form method="post" action="/admin/logout">');

    const out = await call(env, new Request(`${BASE}/admin/logout`, { method: "POST", headers: { cookie, origin: BASE }, redirect: "manual" }));
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(/^__Host-arc-reaper-admin=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    // A copy of the cookie taken before the logout no longer works.
    expect((await get(env, "/admin", { cookie })).status).toBe(401);
    expect(await runInDurableObject(ledgerOf(env), (_i, state) => state.storage.sql.exec("SELECT * FROM sessions").toArray())).toEqual([]);
  });

  it("refuses an oversized login form", async () => {
    const res = await login(testEnv(), `${ADMIN_TOKEN}${"x".repeat(5000)}`);
    expect(res.status).toBe(413);
    expect(res.headers.get("set-cookie")).toBeNull();
  });
});

describe("GET /admin content", () => {
  it("lists every runner in the ledger, newest first, with state, repository, names, links, age, due time (open rows only) and the stored reason", async () => {
    const env = await world();
    const rows = await rowsOf(await get(env, "/admin", bearer));
    expect(rows.map((r) => [r.runner, r.state])).toEqual([
      ["arc-finished", "finished"],
      ["arc-running", "running"],
      ["arc-gone", "gone"],
      ["arc-reaped", "reaped"],
    ]);
    const [finished, running, gone, reaped] = rows as [Row, Row, Row, Row];
    const { runners } = await adminRunners(env);
    const json = Object.fromEntries(runners.map((r) => [r.name, r]));
    // The Reason cell shows the row's reason as the ledger stored it, and its code beside it (none until judged).
    const shown = (name: string) => [json[name]!["reason"], json[name]!["code"]].filter((x) => x !== null).join(" ");
    expect(Object.fromEntries(runners.map((r) => [r.name, r["code"]]))).toEqual({
      // The open rows' reasons are the facts' own schedule: not judged yet.
      "arc-finished": null,
      "arc-running": null,
      "arc-gone": "Gone",
      "arc-reaped": "RunCompleted",
    });
    expect(finished.runHref).toBe(`https://github.com/${REPO}/actions/runs/20`);
    expect(finished.jobHref).toBe(`https://github.com/${REPO}/actions/runs/20/job/2`);
    // Runner, State, Repository, Branch, Workflow · job, Run, Job, Age, Due / closed, Reason, Cluster (/ namespace, once an object was seen doing the job)
    expect(finished.cells).toEqual([
      "arc-finished",
      "finished cancelled",
      REPO,
      "main", // the completed example's head_branch, workflow_name and name
      "CodeQL · linters",
      "20",
      "2",
      expect.stringMatching(/^10m \d+s$/),
      expect.stringMatching(/^in 4m \d+s$/), // grace 300s from a completion 30s ago
      shown("arc-finished"),
      "—",
    ]);
    // The in_progress example names its job but not its workflow or branch.
    expect(running.cells.slice(3, 5)).toEqual(["—", "— · Test workflow"]);
    expect(reaped.cells[10]).toBe(`default / ${NS}`);
    expect(running.cells.slice(7, 10)).toEqual([
      expect.stringMatching(/^10m \d+s$/),
      expect.stringMatching(/^in 49m \d+s$/), // re-read from GitHub an hour after its start
      shown("arc-running"),
    ]);
    // The closed runners' reasons are the sweep's verdicts, as the ledger stored them.
    expect(reaped.cells[1]).toBe("reaped cancelled");
    expect(reaped.cells[9]).toBe(shown("arc-reaped"));
    expect(gone.cells[1]).toBe("gone");
    expect(gone.cells[9]).toBe(shown("arc-gone"));
    // Closed rows have nothing due: they say when and how they closed. The run completed 400s before
    // the sweep, so the runner went 100s after the 300s grace (the sweep ran a day ahead of the clock).
    expect(reaped.cells[8]).toMatch(/^reaped 1m 40s after the grace ended, in 23h 59m$/);
    expect(gone.cells[8]).toMatch(/^gone, in 23h 59m$/);
    for (const closed of [reaped, gone]) expect(closed.cells[8]).not.toMatch(/7d|6d/);

    const closedAt = new Date(NOW).toISOString();
    expect(json["arc-reaped"]).toMatchObject({ dueAt: null, closedAt, cause: "run-completed", prunedAt: new Date(NOW + 7 * 86_400_000).toISOString() });
    expect(json["arc-gone"]).toMatchObject({ dueAt: null, closedAt, cause: null });
    expect(json["arc-finished"]).toMatchObject({
      dueAt: expect.any(String),
      closedAt: null,
      prunedAt: null,
      workflow: "CodeQL",
      job: "linters",
      branch: "main",
    });
    // The run's page from workflow_run.html_url; the ids-built link stays for runs without one.
    expect(json["arc-reaped"]).toMatchObject({
      workflow: "Manually triggered workflow",
      branch: "main",
      runUrl: "https://github.com/octo-org/octo-repo/actions/runs/30",
    });
    expect(reaped.runHref).toBe("https://github.com/octo-org/octo-repo/actions/runs/30");
  });

  it("filters by state, with the ledger's counts in the filter links", async () => {
    const env = await world();
    const res = await get(env, "/admin?state=reaped", bearer);
    const body = await res.clone().text();
    expect((await rowsOf(res)).map((r) => r.runner)).toEqual(["arc-reaped"]);
    expect(body).toContain('<a href="/admin?state=reaped" aria-current="page">reaped (1)</a>');
    expect(body).toContain('<a href="/admin">all (4)</a>');
    for (const state of ["running", "finished", "gone"]) expect(body).toContain(`<a href="/admin?state=${state}">${state} (1)</a>`);
    expect((await rowsOf(await get(env, "/admin?state=gone", bearer))).map((r) => r.runner)).toEqual(["arc-gone"]);
    expect((await rowsOf(await get(env, "/admin?state=running", bearer))).map((r) => r.runner)).toEqual(["arc-running"]);
    const empty = testEnv();
    expect(await (await get(empty, "/admin?state=gone", bearer)).text()).toContain("No runners in this state.");
  });

  it("shows what the last real sweep did", async () => {
    const env = await world();
    const text = await textOf(await get(env, "/admin", bearer));
    expect(text).toContain(`(${new Date(NOW).toISOString()})`);
    expect(text).toContain("runners 2 checked: 1 deleted, 0 kept, 0 waiting, 1 gone");
    expect(text).toContain("errors cluster 0, github 0, redelivery 0");
  });

  it("pages with a next-page link that keeps the state filter and the page size", async () => {
    const env = testEnv();
    for (let i = 1; i <= 3; i++) await started(env, `arc-page-${i}`, i);
    const first = await pageOf(await get(env, "/admin?limit=2", bearer));
    expect(first.rows.map((r) => r.runner)).toEqual(["arc-page-3", "arc-page-2"]);
    expect(first.next).toMatch(/^\/admin\?limit=2&cursor=\d+$/);
    const second = await pageOf(await get(env, first.next!, bearer));
    expect(second.rows.map((r) => r.runner)).toEqual(["arc-page-1"]);
    expect(second.next).toBeUndefined();

    const byState = await pageOf(await get(env, "/admin?state=running&limit=1", bearer));
    expect(byState.next).toMatch(/^\/admin\?state=running&limit=1&cursor=\d+$/);
    expect((await pageOf(await get(env, "/admin", bearer))).next).toBeUndefined(); // 3 rows fit the default page
  });

  // The next-page link keeps ?repo= and ?limit= too: page 2 of /admin?repo=X lists only X's runners.
  it("keeps the repository filter in the next-page link", async () => {
    const env = testEnv();
    await started(env, "arc-a-1", 1, { repo: "octo-org/a" });
    await started(env, "arc-b-1", 2, { repo: "octo-org/b" });
    await started(env, "arc-a-2", 3, { repo: "octo-org/a" });
    const first = await pageOf(await get(env, "/admin?repo=octo-org/a&limit=1", bearer));
    expect(first.rows.map((r) => r.runner)).toEqual(["arc-a-2"]);
    const second = await pageOf(await get(env, first.next!, bearer));
    expect(second.rows.map((r) => r.runner)).toEqual(["arc-a-1"]);
  });

  it("refuses an unknown state or a bad cursor with 400, escaped", async () => {
    const env = testEnv();
    const res = await get(env, `/admin?state=${encodeURIComponent("<b>stuck</b>")}`, bearer);
    expect(res.status).toBe(400);
    const body = await res.text();
    expect(body).toContain("state must be one of running, finished, failed, stuck, reaped, gone, got &quot;&lt;b&gt;stuck&lt;/b&gt;&quot;");
    expect(body).not.toContain("<b>stuck");
    const cursor = await get(env, `/admin?cursor=${encodeURIComponent("<i>1</i>")}`, bearer);
    expect(cursor.status).toBe(400);
    const cursorBody = await cursor.text();
    expect(cursorBody).toContain("cursor must be the nextCursor of a previous page, got &quot;&lt;i&gt;1&lt;/i&gt;&quot;");
    expect(cursorBody).not.toContain("<i>1");
  });

  it("escapes a hostile repository and runner name in text, attributes and links", async () => {
    const env = testEnv();
    const hostile = `<script>alert(1)</script>/x"><img src=x onerror=alert(2)>`;
    const hostileRunner = `arc"><script>alert(3)</script>`;
    await recordFacts(env, [
      jobStartedFact({ runner: "arc-hostile", repo: hostile, runId: 90, jobId: 9, startedAt: ago(600) }),
      jobStartedFact({ runner: hostileRunner, repo: REPO, runId: 80, jobId: 8, startedAt: ago(600) }),
    ]);
    const res = await get(env, "/admin", bearer);
    const body = await res.clone().text();
    expect(body).not.toContain("<script>alert(");
    expect(body).not.toContain("<img src=x");
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;/x&quot;&gt;&lt;img src=x onerror=alert(2)&gt;");
    const rows = await rowsOf(res);
    expect(rows.map((r) => r.runner)).toEqual([hostileRunner, "arc-hostile"]);
    const row = rows[1]!;
    expect(row.cells[2]).toBe(hostile);
    const path = hostile.split("/").map(encodeURIComponent).join("/");
    expect(row.runHref).toBe(`https://github.com/${path}/actions/runs/90`);
    expect(new URL(row.runHref!).origin).toBe("https://github.com");
    expect(rows[0]!.cells[0]).toBe(hostileRunner);
  });

  it("shows hostile workflow, job and branch names escaped, bounded and isolated, in the page, the listing and the story", async () => {
    const env = testEnv();
    const RLO = "\u202e"; // RIGHT-TO-LEFT OVERRIDE: would show "main" as "niam" and reverse what follows
    const markup = `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`;
    const long = `build ${"x".repeat(500)}`;
    const job = workflowJobPayload("in_progress", {
      runner: "arc-names",
      jobId: 61,
      runId: 610,
      runAttempt: 1,
      repo: REPO,
      startedAt: ago(600),
      installationId: INSTALLATION,
      fields: { workflow_name: markup, name: long, head_branch: `${RLO}main${RLO}"><b>x</b>`, html_url: "javascript:alert(3)//actions/runs/610/job/61" },
    });
    expect((await deliver(env, "workflow_job", job)).status).toBe(202);

    const res = await get(env, "/admin", bearer);
    const body = await res.clone().text();
    expect(body).not.toContain("<script>alert(1)");
    expect(body).not.toContain("<img src=x");
    expect(body).not.toContain("<b>x</b>");
    expect(body).not.toContain("javascript:");
    expect(body).not.toContain(RLO);
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x onerror=alert(2)&gt;");
    expect(body).toContain('<bdi class="workflow">'); // isolated: its text direction stays inside
    const [row] = await rowsOf(res);
    const bounded = `build ${"x".repeat(193)}…`; // 200 characters, the last an ellipsis
    expect(Array.from(bounded)).toHaveLength(200);
    expect(row!.cells[3]).toBe(`main"><b>x</b>`);
    expect(row!.cells[4]).toBe(`${markup} · ${bounded}`);
    expect(row!.runHref).toBe(`https://github.com/${REPO}/actions/runs/610`); // not the javascript: URL

    const [listed] = (await adminRunners(env)).runners;
    expect(listed).toMatchObject({ workflow: markup, job: bounded, branch: `main"><b>x</b>`, runUrl: null });

    const story = await get(env, "/admin/runners/arc-names?format=html", bearer);
    const storyBody = await story.text();
    expect(storyBody).not.toContain("<script>alert(1)");
    expect(storyBody).not.toContain(RLO);
    expect(storyBody).toContain('<bdi class="name-workflow">&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(storyBody).toContain(`<bdi class="name-job">${bounded}</bdi>`);
    expect(storyBody).toContain('<bdi class="name-branch">main&quot;&gt;&lt;b&gt;x&lt;/b&gt;</bdi>');
  });

  it("links the run to the page GitHub named, https only, and keeps the names a later delivery adds", async () => {
    const env = testEnv();
    const base = { runner: "arc-linked", jobId: 62, runId: 620, runAttempt: 1, repo: REPO, startedAt: ago(600), installationId: INSTALLATION };
    const runPage = `https://github.com/${REPO}/actions/runs/620`;
    expect(
      (
        await deliver(
          env,
          "workflow_job",
          workflowJobPayload("in_progress", {
            ...base,
            fields: { workflow_name: "CI", name: "build (linux)", head_branch: "main", html_url: `${runPage}/job/62` },
          }),
        )
      ).status,
    ).toBe(202);
    const [row] = await rowsOf(await get(env, "/admin", bearer));
    expect(row!.cells.slice(3, 5)).toEqual(["main", "CI · build (linux)"]);
    expect(row!.runHref).toBe(runPage);
    // An http:// page is never a link, and a page of another run is not this run's.
    const other = testEnv();
    expect(
      (
        await deliver(
          other,
          "workflow_job",
          workflowJobPayload("in_progress", { ...base, fields: { html_url: `http://github.com/${REPO}/actions/runs/620/job/62` } }),
        )
      ).status,
    ).toBe(202);
    expect(
      (
        await deliver(
          other,
          "workflow_run",
          workflowRunPayload({
            runId: 620,
            runAttempt: 1,
            repo: REPO,
            updatedAt: ago(60),
            conclusion: "success",
            installationId: INSTALLATION,
            fields: { html_url: `https://github.com/${REPO}/actions/runs/999` },
          }),
        )
      ).status,
    ).toBe(202);
    expect((await adminRunners(other)).runners[0]).toMatchObject({ runUrl: null, workflow: "Manually triggered workflow" });
  });

  it("shows a cluster that could not be listed as a cluster error, with where and why, though nothing is tracked", async () => {
    const env = testEnv();
    const why =
      "arc-runners: Network connection lost (GET https://kube.example.invalid/apis/actions.github.com/v1alpha1/namespaces/arc-runners/ephemeralrunners)";
    await writeLastSweep(env, lastSweep({ at: ago(5), checked: 0, errors: { cluster: 1, github: 0 }, unreadable: [why] }));
    const text = await textOf(await get(env, "/admin", bearer));
    expect(text).toContain(`errors cluster 1, github 0; could not list ${why}`);
  });

  it("shows the last sweep's summary", async () => {
    const env = testEnv();
    expect(await (await get(env, "/admin", bearer)).text()).toContain("No sweep summary recorded yet.");
    await writeLastSweep(
      env,
      lastSweep({
        at: ago(42),
        durationMs: 87,
        checked: 4,
        deleted: 1,
        kept: 2,
        waiting: 1,
        gone: 0,
        errors: { cluster: 0, github: 2, redelivery: 0 },
        githubCalls: 5,
        rateLimitRemaining: 4990,
        rateLimitLimit: 5000,
      }),
    );
    const res = await get(env, "/admin", bearer);
    const body = await res.clone().text();
    const text = await textOf(res);
    expect(text).toMatch(/at 4\ds ago \(\d{4}-/);
    expect(text).toContain("took 87 ms");
    expect(text).toContain("runners 4 checked: 1 deleted, 2 kept, 1 waiting, 0 gone");
    expect(text).not.toContain("(dry run)");
    expect(text).toContain("errors cluster 0, github 2, redelivery 0");
    expect(body).toMatch(/<dd class="error">\s*cluster 0, github 2, redelivery 0/);
    expect(text).toContain("GitHub requests 5, rate limit left 4990");
  });

  it("shows the last sweep's GitHub requests made and those counted against the rate limit apart (a 304 is not counted)", async () => {
    const env = testEnv();
    await writeLastSweep(env, lastSweep({ githubCalls: 5, githubCounted: 3, rateLimitRemaining: 4990, rateLimitLimit: 5000 }));
    const text = await textOf(await get(env, "/admin", bearer));
    expect(text).toContain("GitHub requests 5 made, 3 counted against the rate limit, rate limit left 4990");
  });

  it.each([
    ["a GitHub Enterprise Server", "https://ghes.example.com/api/v3", "https://ghes.example.com"],
    ["GHE.com", "https://api.acme.ghe.com", "https://acme.ghe.com"],
    ["github.com", "https://api.github.com", "https://github.com"],
  ])("links to %s's web host when GITHUB_API_URL is its API", async (_what, api, web) => {
    const env = testEnv({ GITHUB_API_URL: api });
    await started(env, "arc-ghes", 4);
    const [row] = await rowsOf(await get(env, "/admin", bearer));
    expect(row!.runHref).toBe(`${web}/${REPO}/actions/runs/40`);
    expect(row!.jobHref).toBe(`${web}/${REPO}/actions/runs/40/job/4`);
  });
});

describe("no dead ends", () => {
  it("GET /admin/login shows the login form, or sends a logged-in admin to /admin", async () => {
    const env = testEnv();
    const res = await get(env, "/admin/login", { accept: "text/html" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toMatch(/^default-src 'none'; style-src 'sha256-/);
    expect(await res.text()).toContain('<form class="login" method="post" action="/admin/login">');
    const cookie = await sessionCookie(env);
    for (const headers of [{ cookie }, bearer]) {
      const again = await call(env, new Request(`${BASE}/admin/login`, { headers, redirect: "manual" }));
      expect(again.status).toBe(303);
      expect(again.headers.get("location")).toBe("/admin");
    }
  });

  it.each([
    ["GET", "/admin/nope"],
    ["GET", "/admin/"],
    ["GET", "/admin/logout"], // a form's target, typed into the address bar
    ["GET", "/admin/runners/arc-x/more"],
    ["POST", "/admin/nope"],
  ])("%s %s: a page with a way back in the browser, JSON to Accept: application/json", async (method, path) => {
    const env = testEnv();
    const page = await call(env, new Request(`${BASE}${path}`, { method, headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } }));
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'none'; style-src 'sha256-/);
    const body = await page.text();
    expect(body).toContain(`no route for ${method} ${path}`);
    expect(body).toContain('<a href="/admin">Back to all runners</a>');
    const json = await call(env, new Request(`${BASE}${path}`, { method, headers: { accept: "application/json" } }));
    expect(json.status).toBe(404);
    expect(await json.json()).toEqual({ error: `no route for ${method} ${path}` });
  });

  it("escapes a hostile unknown path on its page", async () => {
    const res = await get(testEnv(), `/admin/${encodeURIComponent("<img src=x onerror=alert(1)>")}`, { accept: "text/html" });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("<img");
  });
});

describe("GET /admin/runners pages and stories", () => {
  const A = "octo-org/a";
  const B = "octo-org/b";
  async function five(): Promise<WorkerEnv> {
    const env = testEnv();
    const repos = [A, B, A, B, A];
    for (const [i, repo] of repos.entries()) await started(env, `arc-p-${i + 1}`, i + 1, { repo });
    return env;
  }
  const names = (page: { runners: Record<string, unknown>[] }) => page.runners.map((r) => r.name);

  it("pages newest first: limit=2 over 5 runners gives 2, 2, 1, each but the last with a nextCursor", async () => {
    const env = await five();
    const first = await adminRunners(env, "?limit=2");
    expect(names(first)).toEqual(["arc-p-5", "arc-p-4"]);
    expect(first.nextCursor).toMatch(/^\d+$/);
    const second = await adminRunners(env, `?limit=2&cursor=${first.nextCursor}`);
    expect(names(second)).toEqual(["arc-p-3", "arc-p-2"]);
    expect(second.nextCursor).toMatch(/^\d+$/);
    const third = await adminRunners(env, `?limit=2&cursor=${second.nextCursor}`);
    expect(names(third)).toEqual(["arc-p-1"]);
    expect(third.nextCursor).toBeNull();
    expect(await adminRunners(env)).toMatchObject({ nextCursor: null, runners: { length: 5 } });
    expect(first.runners[0]).toMatchObject({
      name: "arc-p-5",
      state: "running",
      repository: A,
      runId: 50,
      runAttempt: 1,
      jobId: 5,
      completedAt: null,
      conclusion: null,
    });
  });

  it("filters by repository, and pages within the filter", async () => {
    const env = await five();
    expect(names(await adminRunners(env, `?repo=${A}`))).toEqual(["arc-p-5", "arc-p-3", "arc-p-1"]);
    expect(names(await adminRunners(env, `?repo=${encodeURIComponent(B)}`))).toEqual(["arc-p-4", "arc-p-2"]);
    const first = await adminRunners(env, `?repo=${A}&limit=2`);
    expect(names(first)).toEqual(["arc-p-5", "arc-p-3"]);
    const second = await adminRunners(env, `?repo=${A}&limit=2&cursor=${first.nextCursor}`);
    expect(second).toMatchObject({ nextCursor: null });
    expect(names(second)).toEqual(["arc-p-1"]);
    expect(await adminRunners(env, "?repo=octo-org/none")).toEqual({ runners: [], nextCursor: null });
    expect(names(await adminRunners(env, `?repo=${A}&state=finished`))).toEqual([]);
  });

  it.each([
    ["limit", "limit=0"],
    ["limit", "limit=501"],
    ["limit", "limit=two"],
    ["limit", "limit=-1"],
    ["cursor", "cursor=abc"],
    ["cursor", "cursor=0"],
    ["cursor", "cursor=-5"],
    ["repo", "repo=no-slash"],
    ["repo", "repo=a/b/c"],
    ["repo", `repo=${encodeURIComponent("octo org/x")}`],
  ])("answers 400 naming %s for ?%s", async (param, query) => {
    const res = await get(testEnv(), `/admin/runners?${query}`, bearer);
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toMatch(new RegExp(`^${param} must `));
  });

  it("tells one runner's story: its facts in order with their delivery GUIDs, then the sweep's verdict", async () => {
    const s = await stack();
    const name = "arc-story-1";
    await s.runner({ name, workflowRunId: 710 });
    const [d1, d2, d3] = ["11111111-aaaa-11e3-81ab-000000000001", "11111111-aaaa-11e3-81ab-000000000002", "11111111-aaaa-11e3-81ab-000000000003"];
    const startedAt = before(NOW, 1200);
    const completedAt = before(NOW, 600);
    const updatedAt = before(NOW, 500);
    const job = { runner: name, runId: 710, runAttempt: 1, jobId: 71, repo: REPO, installationId: INSTALLATION, startedAt };
    expect((await deliver(s.env, "workflow_job", workflowJobPayload("in_progress", job), { delivery: d1 })).status).toBe(202);
    expect(
      (await deliver(s.env, "workflow_job", workflowJobPayload("completed", { ...job, completedAt, conclusion: "cancelled" }), { delivery: d2 })).status,
    ).toBe(202);
    expect(
      (
        await deliver(
          s.env,
          "workflow_run",
          workflowRunPayload({ runId: 710, runAttempt: 1, repo: REPO, updatedAt, conclusion: "success", installationId: INSTALLATION }),
          { delivery: d3 },
        )
      ).status,
    ).toBe(202);
    await s.sweep(NOW);

    const res = await get(s.env, `/admin/runners/${name}`, bearer);
    expect(res.status).toBe(200);
    const story = (await res.json()) as {
      runner: string;
      jobs: { name: string; state: string; story: { at: string; what: string; source: string; code?: string }[] }[];
    };
    expect(story.runner).toBe(name);
    expect(story.jobs).toHaveLength(1);
    expect(story.jobs[0]).toMatchObject({ name, state: "reaped", jobId: 71, code: "JobCompleted" });
    // The facts' entries in their words; the decision's by its code.
    expect(story.jobs[0]!.story.map(({ what, source, code }) => (code === undefined ? { what, source } : { source, code }))).toEqual([
      { what: `job 71 of run 710 (attempt 1) in ${REPO} started on ${name} (runner id 1) at ${startedAt}`, source: d1 },
      { what: `job 71 of run 710 (attempt 1) in ${REPO} is cancelled, completed at ${completedAt}`, source: d2 },
      { what: `run 710 in ${REPO} is success, completed at ${updatedAt}`, source: d3 },
      { source: "sweep", code: "JobCompleted" },
    ]);
    expect(story.jobs[0]!.story.at(-1)!.at).toBe(new Date(NOW).toISOString());
  });

  it("explains a runner on a page linked from /admin: every fact and verdict change in order, with time and source", async () => {
    const s = await stack();
    const name = "arc-story-2";
    await s.runner({ name, workflowRunId: 720 });
    const [d1, d2] = ["11111111-bbbb-11e3-81ab-000000000001", "11111111-bbbb-11e3-81ab-000000000002"];
    const job = { runner: name, runId: 720, runAttempt: 1, jobId: 72, repo: REPO, installationId: INSTALLATION, startedAt: before(NOW, 1200) };
    expect((await deliver(s.env, "workflow_job", workflowJobPayload("in_progress", job), { delivery: d1 })).status).toBe(202);
    expect(
      (
        await deliver(s.env, "workflow_job", workflowJobPayload("completed", { ...job, completedAt: before(NOW, 600), conclusion: "failure" }), {
          delivery: d2,
        })
      ).status,
    ).toBe(202);
    await s.sweep(NOW);

    const listing = await (await get(s.env, "/admin", bearer)).text();
    const href = `/admin/runners/${name}?format=html`;
    expect(listing).toContain(`<a class="runner" href="${href}">`);

    const json = (await (await get(s.env, `/admin/runners/${name}`, bearer)).json()) as {
      jobs: { story: { at: string; what: string; source: string; code?: string }[] }[];
    };
    // The decision's entry names its code; the facts' entries have none.
    expect(json.jobs[0]!.story.map((e) => e.code ?? null)).toEqual([null, null, "JobCompleted"]);
    const cookie = await sessionCookie(s.env);
    for (const headers of [bearer, { cookie }]) {
      const res = await get(s.env, href, headers);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("content-security-policy")).toMatch(/^default-src 'none'; style-src 'sha256-/);
      const rows: string[][] = [];
      await new HTMLRewriter()
        .on("table.story tbody tr", { element: () => void rows.push([]) })
        .on("table.story tbody td", { element: () => void rows.at(-1)!.push(""), text: (t) => void (rows.at(-1)![rows.at(-1)!.length - 1] += t.text) })
        .transform(res)
        .text();
      expect(rows.map((r) => r.map(unescapeText))).toEqual(
        // What happened, in words, and a decision's code beside it.
        json.jobs[0]!.story.map((e, i) => [e.at, e.code ? `${e.what} ${e.code}` : e.what, [`webhook delivery ${d1}`, `webhook delivery ${d2}`, "sweep"][i]]),
      );
      expect(rows.map((r) => unescapeText(r[1]!))).toEqual([
        `job 72 of run 720 (attempt 1) in ${REPO} started on ${name} (runner id 1) at ${job.startedAt}`,
        `job 72 of run 720 (attempt 1) in ${REPO} is failure, completed at ${before(NOW, 600)}`,
        `${json.jobs[0]!.story[2]!.what} JobCompleted`,
      ]);
    }
    const anonymous = await get(s.env, href);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toContain('action="/admin/login"');
    expect((await get(s.env, "/admin/runners/arc-nobody?format=html", bearer)).status).toBe(404);
    expect((await get(s.env, "/admin/runners/Arc_Bad?format=html", bearer)).status).toBe(400);
  });

  it("answers 404 for a runner the ledger does not know, 400 for a name no runner can have, and 401 without the token", async () => {
    const env = testEnv();
    await started(env, "arc-known", 1);
    expect((await get(env, "/admin/runners/arc-known", bearer)).status).toBe(200);
    const unknown = await get(env, "/admin/runners/arc-unknown", bearer);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "no runner named arc-unknown in the ledger" });
    expect((await get(env, "/admin/runners/Arc_Known", bearer)).status).toBe(400);
    expect((await get(env, "/admin/runners/arc-known")).status).toBe(401);
  });
});
