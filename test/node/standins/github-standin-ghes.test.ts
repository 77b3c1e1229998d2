// The GitHub stand-in as a GitHub Enterprise Server (test/standins/github/ghes-host.ts):
// a host of its own with the API under /api/v3, checked through @octokit/app.
import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGithubTenant } from "../../standins/github/control.ts";
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

describe("a GitHub Enterprise Server tenant", () => {
  it("serves the API under /api/v3 of a host of its own, and nothing of it anywhere else", async () => {
    const t = await createGithubTenant(standin.url, { ghes: { version: "3.17.4" } });
    expect(t.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v3$/);
    expect(t.webUrl).toBe(t.baseUrl.slice(0, -"/api/v3".length));
    expect(t.baseUrl.startsWith(standin.url)).toBe(false);
    await t.addInstallation({ id: INSTALLATION, repositories: [REPO] });
    for (let i = 0; i < 35; i++) await t.putJob({ repo: REPO, run_id: 77, status: "in_progress", runner_name: `arc-runner-${i}` });
    await t.addDelivery({
      guid: "guid-a",
      event: "workflow_job",
      action: "completed",
      statusCode: 502,
      deliveredAt: new Date(Date.now() - 60_000).toISOString(),
    });

    const app = new App({ appId: t.appId, privateKey: t.privateKeyPkcs1, Octokit: Octokit.defaults({ baseUrl: t.baseUrl }) });
    const octokit = await app.getInstallationOctokit(INSTALLATION);
    const run = await octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}", { owner: "octo-org", repo: "octo-repo", run_id: 77 });
    expect(run.data.url).toBe(`${t.baseUrl}/repos/${REPO}/actions/runs/77`);
    expect(run.headers["x-github-enterprise-version"]).toBe("3.17.4");
    // Rate limits are off by default on GHES: no x-ratelimit headers to read.
    expect(run.headers["x-ratelimit-remaining"]).toBeUndefined();
    const jobs = await octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs", { owner: "octo-org", repo: "octo-repo", run_id: 77 });
    expect(jobs.headers.link).toContain(`<${t.baseUrl}/repos/${REPO}/actions/runs/77/jobs?per_page=30&page=2>; rel="next"`);
    const { data: deliveries } = await app.octokit.request("GET /app/hook/deliveries");
    expect(deliveries.map((d) => d.guid)).toEqual(["guid-a"]);
    expect((await app.octokit.request("POST /app/hook/deliveries/{delivery_id}/attempts", { delivery_id: (deliveries[0]?.id ?? 0) as number })).status).toBe(
      202,
    );

    // A client that dropped /api/v3 gets the web's HTML page; the tenant's path on the main server is closed.
    const web = await fetch(`${t.webUrl}/app/hook/deliveries`);
    expect(web.status).toBe(404);
    expect(web.headers.get("content-type")).toMatch(/^text\/html/);
    expect((await fetch(`${standin.url}/t/${t.id}/repos/${REPO}/actions/runs/77`)).status).toBe(404);
    const calls = await t.calls();
    expect(calls.filter((c) => c.outsideApi)).toEqual([
      { method: "GET", path: "/app/hook/deliveries", query: {}, auth: "none", status: 404, outsideApi: true },
    ]);
    expect(calls.filter((c) => !c.outsideApi).map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([
      `POST /app/installations/${INSTALLATION}/access_tokens 201`,
      `GET /repos/${REPO}/actions/runs/77 200`,
      `GET /repos/${REPO}/actions/runs/77/jobs 200`,
      "GET /app/hook/deliveries 200",
      `POST /app/hook/deliveries/${String(deliveries[0]?.id)}/attempts 202`,
    ]);
  });

  it("sends x-ratelimit headers when its rate limits are on, and refuses bad options by name", async () => {
    const t = await createGithubTenant(standin.url, { ghes: { rateLimits: true } });
    await t.addInstallation({ id: INSTALLATION, repositories: [REPO] });
    const app = new App({ appId: t.appId, privateKey: t.privateKeyPkcs1, Octokit: Octokit.defaults({ baseUrl: t.baseUrl }) });
    const { headers } = await app.octokit.request("GET /repos/{owner}/{repo}/installation", { owner: "octo-org", repo: "octo-repo" });
    expect(headers["x-ratelimit-limit"]).toBe("5000");
    expect(headers["x-github-enterprise-version"]).toBe("3.19.0");
    await expect(createGithubTenant(standin.url, { ghes: { version: "latest" } })).rejects.toThrow(
      /ghes\.version must be like \\"3\.19\.0\\", got \\"latest\\"/,
    );
    await expect(createGithubTenant(standin.url, { ghes: { host: "x" } as unknown as { version: string } })).rejects.toThrow(
      /unknown field \\"host\\" in ghes/,
    );
  });
});
