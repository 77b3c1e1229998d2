// Tests of the stand-in GitHub API itself, in Node, partly through the real
// @octokit/app + @octokit/core that the product uses.
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGithubTenant, type GithubTenant } from "../../standins/github/control.ts";
import { startGithubStandin, type GithubStandin } from "../../standins/github/server.ts";

let standin: GithubStandin;

beforeAll(async () => {
  standin = await startGithubStandin();
});
afterAll(async () => {
  await standin.close();
});

const REPO = "octo-org/octo-repo";
const INSTALLATION = 4242;

async function tenantWithInstallation(): Promise<GithubTenant> {
  const tenant = await createGithubTenant(standin.url);
  await tenant.addInstallation({ id: INSTALLATION, repositories: [REPO] });
  return tenant;
}

function signJwt(payload: Record<string, unknown>, key: string | KeyObject): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const data = `${part({ alg: "RS256", typ: "JWT" })}.${part(payload)}`;
  return `${data}.${sign("RSA-SHA256", Buffer.from(data), key).toString("base64url")}`;
}

function minutesAgo(minutes: number): string {
  return new Date(Date.now() - minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}

async function get(tenant: GithubTenant, path: string, auth?: string): Promise<Response> {
  return fetch(`${tenant.baseUrl}${path}`, { headers: auth ? { authorization: auth } : {} });
}

async function mintToken(tenant: GithubTenant, permissions: Record<string, string> = { actions: "read" }): Promise<string> {
  const jwt = signJwt({ iat: now() - 30, exp: now() + 540, iss: tenant.appId }, tenant.privateKeyPkcs1);
  const response = await fetch(`${tenant.baseUrl}/app/installations/${INSTALLATION}/access_tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json" },
    body: JSON.stringify({ permissions }),
  });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { token: string };
  return body.token;
}

function appFor(tenant: GithubTenant, privateKey = tenant.privateKeyPkcs1): App {
  return new App({ appId: tenant.appId, privateKey, Octokit: Octokit.defaults({ baseUrl: tenant.baseUrl }) });
}

describe("tenants", () => {
  it("gives each tenant its own app id and base URL, and the server's keys in both PEM forms", async () => {
    const a = await createGithubTenant(standin.url);
    const b = await createGithubTenant(standin.url);
    expect(a.appId).not.toBe(b.appId);
    expect(a.baseUrl).toBe(`${standin.url}/t/${a.id}`);
    expect(a.privateKeyPkcs1).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(a.privateKeyPkcs8).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });
});

describe("through @octokit/app", () => {
  it("finds the installation with the App JWT and reads a run and its jobs with an installation token", async () => {
    const tenant = await tenantWithInstallation();
    await tenant.putJob({ repo: REPO, id: 501, run_id: 77, status: "in_progress", runner_name: "arc-abc-runner-x1" });
    const app = appFor(tenant);
    const { data: installation } = await app.octokit.request("GET /repos/{owner}/{repo}/installation", { owner: "octo-org", repo: "octo-repo" });
    expect(installation.id).toBe(INSTALLATION);
    expect(installation.app_id).toBe(tenant.appId);

    const octokit = await app.getInstallationOctokit(INSTALLATION);
    const { data: run, headers } = await octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}", {
      owner: "octo-org",
      repo: "octo-repo",
      run_id: 77,
    });
    expect(run).toMatchObject({ id: 77, status: "in_progress", conclusion: null, run_attempt: 1 });
    expect(run.repository.full_name).toBe(REPO);
    expect(run.url).toBe(`${tenant.baseUrl}/repos/${REPO}/actions/runs/77`);
    expect(headers["x-ratelimit-limit"]).toBe("5000");
    expect(headers["x-ratelimit-resource"]).toBe("core");
    expect(headers["x-github-request-id"]).toBeTruthy();

    const { data: job } = await octokit.request("GET /repos/{owner}/{repo}/actions/jobs/{job_id}", { owner: "octo-org", repo: "octo-repo", job_id: 501 });
    expect(job).toMatchObject({ id: 501, run_id: 77, status: "in_progress", runner_name: "arc-abc-runner-x1", completed_at: null });

    const requests = await tenant.tokenRequests();
    expect(requests).toEqual([{ installationId: INSTALLATION, permissions: null, repositories: null, status: 201 }]);
    const calls = await tenant.calls();
    expect(calls.map((c) => [c.method, c.path, c.auth, c.status])).toEqual([
      ["GET", "/repos/octo-org/octo-repo/installation", "jwt", 200],
      ["POST", `/app/installations/${INSTALLATION}/access_tokens`, "jwt", 201],
      ["GET", "/repos/octo-org/octo-repo/actions/runs/77", "installation", 200],
      ["GET", "/repos/octo-org/octo-repo/actions/jobs/501", "installation", 200],
    ]);
    expect(JSON.stringify(calls)).not.toMatch(/ghs_|eyJ/);
  });

  it("accepts the PKCS#8 key and records the permissions asked at mint time", async () => {
    const tenant = await tenantWithInstallation();
    const app = appFor(tenant, tenant.privateKeyPkcs8);
    const { status, data } = await app.octokit.request("POST /app/installations/{installation_id}/access_tokens", {
      installation_id: INSTALLATION,
      permissions: { actions: "read" },
    });
    expect(status).toBe(201);
    expect(data.token).toMatch(/^ghs_[A-Za-z0-9]{36}$/);
    expect(data.permissions).toEqual({ actions: "read" });
    expect(Date.parse(data.expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    expect((await tenant.tokenRequests())[0]?.permissions).toEqual({ actions: "read" });
  });

  it("refuses a permission the installation was not granted, and refuses on demand", async () => {
    const tenant = await tenantWithInstallation();
    const app = appFor(tenant);
    const mint = (permissions: Record<string, "read" | "write">) =>
      app.octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: INSTALLATION, permissions });
    await expect(mint({ actions: "write" })).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining("The permissions requested are not granted to this installation."),
    });
    await tenant.setRefuseTokens(403);
    await expect(mint({ actions: "read" })).rejects.toMatchObject({ status: 403 });
    await tenant.setRefuseTokens(null);
    await expect(mint({ actions: "read" })).resolves.toMatchObject({ status: 201 });
    await expect(app.octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: 999 })).rejects.toMatchObject({
      status: 404,
    });
    expect((await tenant.tokenRequests()).map((r) => r.status)).toEqual([422, 403, 201]);
  });

  it("shows an installation with the App JWT: suspended_at and suspended_by once suspended (no token minted then), 404 once uninstalled", async () => {
    const tenant = await tenantWithInstallation();
    const app = appFor(tenant);
    const read = () => app.octokit.request("GET /app/installations/{installation_id}", { installation_id: INSTALLATION });
    expect((await read()).data).toMatchObject({ id: INSTALLATION, suspended_at: null, suspended_by: null });
    await tenant.suspend(INSTALLATION);
    const { data } = await read();
    expect(data.suspended_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(data.suspended_by).toMatchObject({ login: "octocat", type: "User" });
    await expect(app.octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: INSTALLATION })).rejects.toMatchObject({
      status: 403,
      response: { data: { message: "This installation has been suspended" } },
    });
    await tenant.unsuspend(INSTALLATION);
    expect((await read()).data.suspended_at).toBeNull();
    await tenant.uninstall(INSTALLATION);
    await expect(read()).rejects.toMatchObject({ status: 404 });
  });

  it("answers 404 for a repository no installation covers", async () => {
    const tenant = await tenantWithInstallation();
    const app = appFor(tenant);
    await expect(app.octokit.request("GET /repos/{owner}/{repo}/installation", { owner: "other", repo: "repo" })).rejects.toMatchObject({ status: 404 });
  });
});

describe("App JWT", () => {
  it("refuses a JWT signed with another key, for another app, expired, or too long-lived, with GitHub's messages", async () => {
    const tenant = await tenantWithInstallation();
    const { privateKey: otherKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const t = now();
    const cases: [string, string][] = [
      [signJwt({ iat: t - 30, exp: t + 500, iss: tenant.appId }, otherKey), "A JSON web token could not be decoded"],
      [signJwt({ iat: t - 30, exp: t + 500, iss: tenant.appId + 1 }, tenant.privateKeyPkcs1), "A JSON web token could not be decoded"],
      [
        signJwt({ iat: t - 700, exp: t - 100, iss: tenant.appId }, tenant.privateKeyPkcs1),
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
      ],
      [signJwt({ iat: t, exp: t + 660, iss: tenant.appId }, tenant.privateKeyPkcs1), "'Expiration time' claim ('exp') is too far in the future"],
      [
        signJwt({ iat: t + 120, exp: t + 500, iss: tenant.appId }, tenant.privateKeyPkcs1),
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      ],
      ["not.a.jwt", "A JSON web token could not be decoded"],
    ];
    for (const [jwt, message] of cases) {
      const response = await get(tenant, "/app/hook/deliveries", `Bearer ${jwt}`);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ message, documentation_url: expect.stringContaining("https://docs.github.com/rest"), status: "401" });
      expect(response.headers.get("x-ratelimit-remaining")).toBeTruthy();
    }
    // iss as a string is accepted, as GitHub does.
    const ok = await get(tenant, "/app/hook/deliveries", `Bearer ${signJwt({ iat: t - 30, exp: t + 570, iss: String(tenant.appId) }, tenant.privateKeyPkcs1)}`);
    expect(ok.status).toBe(200);
    // An installation token is not an App JWT.
    const token = await mintToken(tenant);
    expect((await get(tenant, "/app/hook/deliveries", `token ${token}`)).status).toBe(401);
  });
});

describe("installation-token endpoints", () => {
  it("answers 401 Bad credentials for unknown, expired or other tenants' tokens and 404 for repositories outside the installation", async () => {
    const tenant = await tenantWithInstallation();
    const other = await tenantWithInstallation();
    await tenant.putJob({ repo: REPO, id: 1, run_id: 10 });
    await tenant.putJob({ repo: "elsewhere/repo", id: 2, run_id: 20 });
    const token = await mintToken(tenant);
    expect((await get(tenant, `/repos/${REPO}/actions/jobs/1`, `token ${token}`)).status).toBe(200);
    expect((await get(tenant, `/repos/${REPO}/actions/jobs/1`, `Bearer ${token}`)).status).toBe(200);
    expect((await get(tenant, "/repos/elsewhere/repo/actions/jobs/2", `token ${token}`)).status).toBe(404);
    expect((await get(tenant, `/repos/${REPO}/actions/jobs/999`, `token ${token}`)).status).toBe(404);
    const foreign = await get(tenant, `/repos/${REPO}/actions/jobs/1`, `token ${await mintToken(other)}`);
    expect(foreign.status).toBe(401);
    expect(await foreign.json()).toMatchObject({ message: "Bad credentials", status: "401" });
    expect((await get(tenant, `/repos/${REPO}/actions/jobs/1`, "token ghs_unknown")).status).toBe(401);
    expect((await get(tenant, `/repos/${REPO}/actions/jobs/1`)).status).toBe(401);
    await tenant.expireTokens();
    expect((await get(tenant, `/repos/${REPO}/actions/jobs/1`, `token ${token}`)).status).toBe(401);
  });

  it("derives a run's status from its jobs and lets a test complete a job later", async () => {
    const tenant = await tenantWithInstallation();
    const token = `token ${await mintToken(tenant)}`;
    const job = await tenant.putJob({ repo: REPO, run_id: 300, status: "in_progress", labels: ["arc-set"] });
    expect(job.runner_name).toMatch(/^arc-set-/);
    expect(job.steps.length).toBeGreaterThan(0);
    let run = (await (await get(tenant, `/repos/${REPO}/actions/runs/300`, token)).json()) as { status: string; conclusion: string | null; updated_at: string };
    expect(run).toMatchObject({ status: "in_progress", conclusion: null });

    const completedAt = "2030-01-01T00:00:00Z";
    const done = await tenant.putJob({ repo: REPO, id: job.id, status: "completed", conclusion: "cancelled", completed_at: completedAt });
    expect(done).toMatchObject({ id: job.id, run_id: 300, runner_name: job.runner_name, conclusion: "cancelled", completed_at: completedAt });
    run = (await (await get(tenant, `/repos/${REPO}/actions/runs/300`, token)).json()) as typeof run;
    expect(run).toMatchObject({ status: "completed", conclusion: "cancelled", updated_at: completedAt });

    // Times come from the jobs: a run seeded through its jobs is as old as they are.
    const started = minutesAgo(6 * 24 * 60);
    const ended = minutesAgo(10);
    await tenant.putJob({ repo: REPO, run_id: 302, status: "completed", conclusion: "success", started_at: started, completed_at: ended });
    const old = (await (await get(tenant, `/repos/${REPO}/actions/runs/302`, token)).json()) as {
      created_at: string;
      run_started_at: string;
      updated_at: string;
    };
    expect(Date.parse(old.run_started_at)).toBeLessThan(Date.parse(started));
    expect(old.updated_at).toBe(ended);

    // A job cancelled while queued never had a runner.
    const queued = await tenant.putJob({ repo: REPO, run_id: 301, status: "queued" });
    expect((await tenant.putJob({ repo: REPO, id: queued.id, status: "completed", conclusion: "cancelled" })).runner_name).toBeNull();

    // Explicit run fields win over derived ones.
    const explicit = await tenant.putRun({ repo: REPO, id: 300, status: "completed", conclusion: "failure", updated_at: "2030-01-02T00:00:00Z" });
    expect(explicit).toMatchObject({ status: "completed", conclusion: "failure", updated_at: "2030-01-02T00:00:00Z" });
  });

  it("lists jobs of the latest attempt by default, all attempts with filter=all, and one attempt by path", async () => {
    const tenant = await tenantWithInstallation();
    const token = `token ${await mintToken(tenant)}`;
    await tenant.putJob({ repo: REPO, id: 11, run_id: 400, run_attempt: 1, status: "completed", conclusion: "failure" });
    await tenant.putJob({ repo: REPO, id: 12, run_id: 400, run_attempt: 2, status: "in_progress" });
    const ids = async (path: string) => ((await (await get(tenant, path, token)).json()) as { jobs: { id: number }[] }).jobs.map((j) => j.id);
    expect(await ids(`/repos/${REPO}/actions/runs/400/jobs`)).toEqual([12]);
    expect(await ids(`/repos/${REPO}/actions/runs/400/jobs?filter=all`)).toEqual([11, 12]);
    expect(await ids(`/repos/${REPO}/actions/runs/400/attempts/1/jobs`)).toEqual([11]);
    const latest = (await (await get(tenant, `/repos/${REPO}/actions/runs/400`, token)).json()) as { run_attempt: number; previous_attempt_url: string };
    expect(latest.run_attempt).toBe(2);
    expect(latest.previous_attempt_url).toBe(`${tenant.baseUrl}/repos/${REPO}/actions/runs/400/attempts/1`);
    const first = (await (await get(tenant, `/repos/${REPO}/actions/runs/400/attempts/1`, token)).json()) as { status: string; conclusion: string };
    expect(first).toMatchObject({ status: "completed", conclusion: "failure" });
    expect((await get(tenant, `/repos/${REPO}/actions/runs/400/attempts/3`, token)).status).toBe(404);
    expect((await get(tenant, `/repos/${REPO}/actions/runs/999/jobs`, token)).status).toBe(404);
  });

  it("pages jobs 30 at a time by default with Link rel=next and rel=last, at most 100 per page", async () => {
    const tenant = await tenantWithInstallation();
    const token = `token ${await mintToken(tenant)}`;
    for (let i = 1; i <= 35; i++) await tenant.putJob({ repo: REPO, id: 1000 + i, run_id: 500 });
    const first = await get(tenant, `/repos/${REPO}/actions/runs/500/jobs`, token);
    const body = (await first.json()) as { total_count: number; jobs: { id: number }[] };
    expect(body.total_count).toBe(35);
    expect(body.jobs).toHaveLength(30);
    const link = first.headers.get("link") ?? "";
    const base = `${tenant.baseUrl}/repos/${REPO}/actions/runs/500/jobs`;
    expect(link).toBe(`<${base}?per_page=30&page=2>; rel="next", <${base}?per_page=30&page=2>; rel="last"`);
    const second = await get(tenant, `/repos/${REPO}/actions/runs/500/jobs?page=2`, token);
    expect(((await second.json()) as typeof body).jobs.map((j) => j.id)).toEqual([1031, 1032, 1033, 1034, 1035]);
    expect(second.headers.get("link")).toContain('rel="prev"');
    const all = await get(tenant, `/repos/${REPO}/actions/runs/500/jobs?per_page=500`, token);
    expect(((await all.json()) as typeof body).jobs).toHaveLength(35);
    expect(all.headers.get("link")).toBeNull();

    // octokit follows the same Link header.
    const octokit = await appFor(tenant).getInstallationOctokit(INSTALLATION);
    const page = await octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs", {
      owner: "octo-org",
      repo: "octo-repo",
      run_id: 500,
      per_page: 20,
    });
    expect(page.data.jobs).toHaveLength(20);
    expect(page.headers.link).toContain("page=2");
  });
});

describe("webhook deliveries", () => {
  it("filters by status: failure is 400-599, success 200-399, a delivery without a status code is in neither; 422 when the filter is off", async () => {
    const tenant = await tenantWithInstallation();
    for (const [guid, statusCode] of [
      ["g-200", 200],
      ["g-302", 302],
      ["g-404", 404],
      ["g-502", 502],
      ["g-0", 0],
    ] as const) {
      await tenant.addDelivery({ guid, event: "workflow_job", action: "completed", statusCode, deliveredAt: minutesAgo(10) });
    }
    const jwt = () => `Bearer ${signJwt({ iat: now() - 30, exp: now() + 570, iss: tenant.appId }, tenant.privateKeyPkcs1)}`;
    const guids = async (query: string) =>
      ((await (await get(tenant, `/app/hook/deliveries${query}`, jwt())).json()) as { guid: string }[]).map((d) => d.guid).sort();
    expect(await guids("?status=failure")).toEqual(["g-404", "g-502"]);
    expect(await guids("?status=success")).toEqual(["g-200", "g-302"]);
    expect(await guids("")).toEqual(["g-0", "g-200", "g-302", "g-404", "g-502"]);
    expect((await get(tenant, "/app/hook/deliveries?status=broken", jwt())).status).toBe(422);
    await tenant.setDeliveriesStatusFilter(false);
    expect((await get(tenant, "/app/hook/deliveries?status=failure", jwt())).status).toBe(422);
    expect(await guids("")).toHaveLength(5);
  });

  it("lists deliveries newest first with bare ids above 2^53, pages by cursor, and redelivers by the exact id", async () => {
    const tenant = await tenantWithInstallation();
    const a = await tenant.addDelivery({
      guid: "guid-a",
      event: "workflow_job",
      action: "completed",
      statusCode: 503,
      deliveredAt: minutesAgo(30),
      installationId: INSTALLATION,
    });
    const b = await tenant.addDelivery({ guid: "guid-b", event: "workflow_run", action: "completed", deliveredAt: minutesAgo(20) });
    const c = await tenant.addDelivery({ guid: "guid-c", event: "workflow_job", action: "in_progress", deliveredAt: minutesAgo(10) });
    expect(BigInt(a.id) > 2n ** 53n).toBe(true);
    expect(a.status).toBe("Invalid HTTP Response: 503");

    const jwt = () => `Bearer ${signJwt({ iat: now() - 30, exp: now() + 570, iss: tenant.appId }, tenant.privateKeyPkcs1)}`;
    const first = await get(tenant, "/app/hook/deliveries?per_page=2", jwt());
    const text = await first.text();
    // Bare numbers on the wire, exactly as GitHub writes them.
    expect([...text.matchAll(/"id":(\d+)/g)].map((m) => m[1])).toEqual([c.id, b.id]);
    const link = first.headers.get("link") ?? "";
    expect(link).toBe(`<${tenant.baseUrl}/app/hook/deliveries?per_page=2&cursor=v1_${b.id}>; rel="next"`);
    const next = await get(tenant, link.slice(1, link.indexOf(">")).slice(tenant.baseUrl.length), jwt());
    const nextText = await next.text();
    expect([...nextText.matchAll(/"id":(\d+)/g)].map((m) => m[1])).toEqual([a.id]);
    expect(next.headers.get("link")).toBeNull();
    expect(JSON.parse(nextText)).toEqual([
      {
        id: expect.any(Number),
        guid: "guid-a",
        delivered_at: a.delivered_at,
        redelivery: false,
        duration: expect.any(Number),
        status: "Invalid HTTP Response: 503",
        status_code: 503,
        event: "workflow_job",
        action: "completed",
        installation_id: INSTALLATION,
        repository_id: null,
        throttled_at: null,
      },
    ]);

    // Plain JSON.parse loses digits; @octokit/request parses with json-with-bigint,
    // so through octokit the ids arrive as bigints (typed as number) with every digit.
    expect(JSON.parse(text).map((d: { id: number }) => String(d.id))).not.toEqual([c.id, b.id]);
    const app = appFor(tenant);
    const { data } = await app.octokit.request("GET /app/hook/deliveries");
    expect(data.map((d) => typeof d.id)).toEqual(["bigint", "bigint", "bigint"]);
    expect(data.map((d) => String(d.id))).toEqual([c.id, b.id, a.id]);

    const redelivered = await app.octokit.request("POST /app/hook/deliveries/{delivery_id}/attempts", { delivery_id: a.id as unknown as number });
    expect(redelivered.status).toBe(202);
    const redeliveries = await tenant.redeliveries();
    expect(redeliveries).toEqual([{ deliveryId: a.id, guid: "guid-a", newDeliveryId: expect.any(String), statusCode: 200 }]);
    const newest = (await tenant.deliveries())[0];
    expect(newest).toMatchObject({
      id: redeliveries[0]?.newDeliveryId,
      guid: "guid-a",
      redelivery: true,
      status: "OK",
      status_code: 200,
      installation_id: INSTALLATION,
    });

    // An id rounded through a double names no delivery.
    const exact = new Set([a.id, b.id, c.id]);
    const rounded = [a, b, c].map((d) => String(Number(d.id))).find((id) => !exact.has(id));
    expect(rounded).toBeDefined();
    await expect(app.octokit.request("POST /app/hook/deliveries/{delivery_id}/attempts", { delivery_id: Number(rounded) })).rejects.toMatchObject({
      status: 404,
    });

    await tenant.setRedeliveryStatus(502);
    await app.octokit.request("POST /app/hook/deliveries/{delivery_id}/attempts", { delivery_id: b.id as unknown as number });
    expect((await tenant.deliveries())[0]).toMatchObject({ guid: "guid-b", redelivery: true, status_code: 502, status: "Invalid HTTP Response: 502" });
  });
});

describe("faults and rate limits", () => {
  it("answers injected 5xx a given number of times, then normally", async () => {
    const tenant = await tenantWithInstallation();
    const token = `token ${await mintToken(tenant)}`;
    await tenant.putJob({ repo: REPO, id: 7, run_id: 70 });
    await tenant.addFault({ match: { method: "GET", pathIncludes: "/actions/jobs/" }, status: 502, times: 1 });
    const failed = await get(tenant, `/repos/${REPO}/actions/jobs/7`, token);
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ message: "Server Error", status: "502" });
    expect((await get(tenant, `/repos/${REPO}/actions/jobs/7`, token)).status).toBe(200);
    expect((await tenant.calls()).slice(-2).map((c) => c.status)).toEqual([502, 200]);
  });

  it("answers secondary and primary rate limits with retry-after and x-ratelimit headers", async () => {
    const tenant = await tenantWithInstallation();
    const token = `token ${await mintToken(tenant)}`;
    await tenant.putJob({ repo: REPO, id: 7, run_id: 70 });
    await tenant.addFault({ status: 429, retryAfterSeconds: 30, times: 1 });
    const secondary = await get(tenant, `/repos/${REPO}/actions/jobs/7`, token);
    expect(secondary.status).toBe(429);
    expect(secondary.headers.get("retry-after")).toBe("30");
    expect(((await secondary.json()) as { message: string }).message).toMatch(/secondary rate limit/);

    await tenant.addFault({ status: 403, rateLimitResetInSeconds: 120, times: 1 });
    const primary = await get(tenant, `/repos/${REPO}/actions/jobs/7`, token);
    expect(primary.status).toBe(403);
    expect(primary.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(primary.headers.get("x-ratelimit-reset")) - now()).toBeGreaterThan(100);
    expect(await primary.json()).toMatchObject({ message: `API rate limit exceeded for installation ID ${INSTALLATION}.` });
    await tenant.clearFaults();
  });

  it("spends a per-tenant budget and refuses with 403 when it is exhausted", async () => {
    const tenant = await tenantWithInstallation();
    const token = `token ${await mintToken(tenant)}`;
    await tenant.putJob({ repo: REPO, id: 7, run_id: 70 });
    await tenant.setRateLimit({ remaining: 1 });
    const last = await get(tenant, `/repos/${REPO}/actions/jobs/7`, token);
    expect(last.status).toBe(200);
    expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(last.headers.get("x-ratelimit-used")).toBe("5000");
    const refused = await get(tenant, `/repos/${REPO}/actions/jobs/7`, token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ message: `API rate limit exceeded for installation ID ${INSTALLATION}.`, status: "403" });
    expect(await tenant.rateLimit()).toMatchObject({ limit: 5000, remaining: 0 });
  });

  it("delays answers, and close() does not wait for a pending delayed answer", async () => {
    const own = await startGithubStandin();
    const tenant = await createGithubTenant(own.url);
    // Longer than the test may take: a close() that waited for the answer would fail it by its timeout.
    await tenant.addFault({ delayMs: 600_000 });
    const pending = fetch(`${tenant.baseUrl}/app`).then(
      (r) => r.status,
      () => "aborted",
    );
    await expect.poll(async () => (await tenant.calls()).length).toBe(1);
    expect((await tenant.calls())[0]?.status).toBe(0);
    await own.close();
    expect(await pending).toBe("aborted");
  });
});

describe("conditional requests, as GitHub answers them", () => {
  const JOBS = `/repos/${REPO}/actions/runs/900/attempts/1/jobs?per_page=100`;
  const conditional = (tenant: GithubTenant, token: string, etag?: string) =>
    fetch(`${tenant.baseUrl}${JOBS}`, { headers: { authorization: `token ${token}`, ...(etag ? { "if-none-match": etag } : {}) } });

  it("a weak, quoted ETag that changes with the body and differs per token; a 304 with no body that spends no rate limit", async () => {
    const tenant = await tenantWithInstallation();
    const job = await tenant.putJob({ repo: REPO, run_id: 900, status: "in_progress", runner_name: "arc-cond-1" });
    const [one, two] = [await mintToken(tenant), await mintToken(tenant)];
    const first = await conditional(tenant, one);
    const etag = first.headers.get("etag")!;
    expect(first.status).toBe(200);
    expect(etag).toMatch(/^W\/"[0-9a-f]+"$/);
    // No Last-Modified: GitHub sends none on the Actions endpoints.
    expect(first.headers.get("last-modified")).toBeNull();
    const remaining = Number(first.headers.get("x-ratelimit-remaining"));

    const again = await conditional(tenant, one, etag);
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("etag")).toBe(etag);
    expect(Number(again.headers.get("x-ratelimit-remaining"))).toBe(remaining);
    expect((await tenant.rateLimit()).remaining).toBe(remaining);

    // Another token: its own ETag for the same body, and the first token's ETag earns a 200 (counted).
    const other = await conditional(tenant, two, etag);
    expect(other.status).toBe(200);
    expect(other.headers.get("etag")).not.toBe(etag);
    expect(Number(other.headers.get("x-ratelimit-remaining"))).toBe(remaining - 1);

    // The body changes: the ETag with it, and the old one earns a 200 with the new body.
    await tenant.putJob({ repo: REPO, id: job.id, run_id: 900, status: "completed", conclusion: "success", completed_at: minutesAgo(1) });
    const changed = await conditional(tenant, one, etag);
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect(((await changed.json()) as { jobs: { status: string }[] }).jobs[0]!.status).toBe("completed");
  });
});
