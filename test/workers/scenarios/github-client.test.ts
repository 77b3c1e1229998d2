// The GitHub edge against the stand-in GitHub over real HTTP: App JWT,
// installation tokens restricted to actions:read and cached, the call budget,
// big delivery ids, and error messages that name the missing permission.
import { describe, expect, inject, it } from "vitest";
import { newCallBudget, GithubBudgetExhausted, GithubRateLimited, MAX_BACKOFF_MS } from "../../../src/github/call-budget.ts";
import { createGithub, GithubError } from "../../../src/github/github-client.ts";
import { newGithubCache } from "../../../src/github/installation-and-rate-memory.ts";
import { createGithubTenant, type GithubTenant } from "../../standins/github/control.ts";

const REPO = "octo-org/example-workflow";

async function setup(opts: { keyFormat?: "pkcs1" | "pkcs8"; budget?: number } = {}) {
  const tenant = await createGithubTenant(inject("githubStandinUrl"));
  await tenant.addInstallation({ id: 4242, repositories: [REPO] });
  const budget = newCallBudget(opts.budget ?? 100);
  const cache = newGithubCache();
  const make = () =>
    createGithub({
      apiUrl: tenant.baseUrl,
      appId: String(tenant.appId),
      privateKey: opts.keyFormat === "pkcs8" ? tenant.privateKeyPkcs8 : tenant.privateKeyPkcs1,
      budget,
      cache,
    });
  return { tenant, budget, cache, github: make(), make };
}

async function seedJob(tenant: GithubTenant, status: "in_progress" | "completed") {
  return tenant.putJob({
    repo: REPO,
    run_id: 555,
    run_attempt: 1,
    status,
    runner_name: "arc-runners-x-1",
    ...(status === "completed" ? { conclusion: "cancelled" } : {}),
  });
}

describe("GitHub App client", () => {
  it.each(["pkcs1", "pkcs8"] as const)("mints an actions:read token with a %s key and reads a job", async (keyFormat) => {
    const { tenant, github, budget } = await setup({ keyFormat });
    const job = await seedJob(tenant, "in_progress");
    const read = await github.job(REPO, Number(job.id), 4242);
    expect(read).toMatchObject({ id: Number(job.id), runId: 555, status: "in_progress", runnerName: "arc-runners-x-1" });
    expect(await tenant.tokenRequests()).toEqual([expect.objectContaining({ installationId: 4242, permissions: { actions: "read" }, status: 201 })]);
    expect(budget.used).toBe(2); // one mint, one read
  });

  it("reads the names of a job and of a run (workflow, job, branch, the run's page), cleaned and bounded", async () => {
    const { tenant, github } = await setup();
    const job = await tenant.putJob({
      repo: REPO,
      run_id: 556,
      run_attempt: 1,
      status: "in_progress",
      runner_name: "arc-runners-x-2",
      name: `test \u202e${"y".repeat(300)}`,
    });
    const read = await github.job(REPO, Number(job.id), 4242);
    expect(read.names).toEqual({ workflow: "CI", job: `test ${"y".repeat(194)}…`, branch: "main", runUrl: `https://github.com/${REPO}/actions/runs/556` });
    const run = await tenant.putRun({ repo: REPO, id: 557, run_attempt: 1, status: "completed", conclusion: "success", name: "Release", head_branch: "v2" });
    expect((await github.run(REPO, Number(run.id), 4242)).names).toEqual({
      workflow: "Release",
      branch: "v2",
      runUrl: `https://github.com/${REPO}/actions/runs/557`,
    });
    // A page that is not https, or of another run, is not kept.
    const odd = await tenant.putRun({
      repo: REPO,
      id: 558,
      run_attempt: 1,
      status: "completed",
      conclusion: "success",
      html_url: `http://github.com/${REPO}/actions/runs/558`,
    });
    expect((await github.run(REPO, Number(odd.id), 4242)).names).toEqual({ workflow: "CI", branch: "main" });
  });

  it("caches the token across sweeps: a second client with the same cache mints nothing", async () => {
    const { tenant, github, make, budget } = await setup();
    const job = await seedJob(tenant, "completed");
    await github.job(REPO, Number(job.id), 4242);
    await make().job(REPO, Number(job.id), 4242);
    expect((await tenant.tokenRequests()).length).toBe(1);
    expect(budget.used).toBe(3);
    const calls = await tenant.calls();
    expect(calls.map((c) => c.auth)).toEqual(["jwt", "installation", "installation"]);
  });

  it("a refused token names the missing Actions: read permission", async () => {
    const { tenant, github } = await setup();
    await tenant.setRefuseTokens(403);
    const job = await seedJob(tenant, "in_progress");
    const error = await github.job(REPO, Number(job.id), 4242).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GithubError);
    expect((error as GithubError).status).toBe(403);
    expect((error as Error).message).toMatch(/^minting a token for installation 4242: GitHub answered 403: .*\(the App needs the Actions: read permission/);
  });

  it("never sends a request beyond the budget", async () => {
    const { tenant, github, budget } = await setup({ budget: 1 });
    const job = await seedJob(tenant, "in_progress");
    await tenant.clearCalls();
    const error = await github.job(REPO, Number(job.id), 4242).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GithubBudgetExhausted);
    expect(budget.used).toBe(1);
    expect((await tenant.calls()).length).toBe(1); // the mint went out, the read did not
  });

  it("finds a runner's job among a run's jobs, paging", async () => {
    const { tenant, github } = await setup();
    for (let i = 0; i < 130; i++) {
      await tenant.putJob({ repo: REPO, run_id: 777, run_attempt: 1, status: "in_progress", runner_name: `arc-runners-x-${i}` });
    }
    const found = await github.runnerJob(REPO, 777, "arc-runners-x-125", 4242);
    expect(found?.runnerName).toBe("arc-runners-x-125");
    const pages = (await tenant.calls()).filter((c) => c.path.endsWith("/runs/777/jobs")).map((c) => c.query.page);
    expect(pages).toEqual(["1", "2"]);
  });

  it("a name that came back within a run: passes over the job an earlier runner of that name took", async () => {
    const { tenant, github } = await setup();
    const t0 = Date.parse("2026-11-30T12:00:00Z");
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    await tenant.putJob({
      repo: REPO,
      run_id: 778,
      run_attempt: 1,
      status: "completed",
      conclusion: "success",
      runner_name: "arc-runners-x-1",
      started_at: at(0),
      completed_at: at(300),
    });
    const later = await tenant.putJob({ repo: REPO, run_id: 778, run_attempt: 1, status: "in_progress", runner_name: "arc-runners-x-1", started_at: at(900) });
    expect((await github.runnerJob(REPO, 778, "arc-runners-x-1", 4242, t0 + 840_000))?.id).toBe(Number(later.id));
    expect(await github.runnerJob(REPO, 778, "arc-runners-x-1", 4242, t0 + 960_000)).toBeUndefined();
  });

  it("keeps delivery ids above 2^53 exact and redelivers by the exact id", async () => {
    const { tenant, github } = await setup();
    const seeded = await tenant.addDelivery({
      guid: "g-1",
      event: "workflow_job",
      action: "completed",
      statusCode: 502,
      deliveredAt: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(BigInt(seeded.id) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    const { deliveries: listed, complete } = await github.deliveriesSince(Date.now() - 3600_000);
    expect(complete).toBe(true);
    expect(listed).toEqual([expect.objectContaining({ id: seeded.id, guid: "g-1", statusCode: 502, event: "workflow_job" })]);
    await github.redeliver(seeded.id);
    expect(await tenant.redeliveries()).toEqual([expect.objectContaining({ deliveryId: seeded.id, guid: "g-1" })]);
  });

  it("looks up a repository's installation with the App JWT, once", async () => {
    const { tenant, github } = await setup();
    expect(await github.installationFor(REPO)).toBe(4242);
    expect(await github.installationFor(REPO)).toBe(4242);
    expect((await tenant.calls()).filter((c) => c.path.endsWith("/installation"))).toEqual([expect.objectContaining({ auth: "jwt", status: 200 })]);
  });

  it.each([
    ["a primary limit (403, x-ratelimit-remaining: 0)", { status: 403, rateLimitResetInSeconds: 120 }],
    ["a secondary limit (403 with Retry-After)", { status: 403, retryAfterSeconds: 90 }],
    [
      "a secondary limit (403, the documented message, no header)",
      { status: 403, message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again." },
    ],
    ["a 429", { status: 429 }],
  ])('%s on the installation look-up is a back-off of the App\'s scope, never "not installed"', async (_what, fault) => {
    const { tenant, github, cache } = await setup();
    await tenant.addFault({ match: { pathIncludes: "/installation" }, times: 1, ...fault });
    const error = await github.installationFor(REPO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GithubRateLimited);
    expect(cache.memory.installationFailedUntil(REPO)).toBe(0);
    expect(cache.memory.installation(REPO)).toBeUndefined();
    expect(cache.memory.rate("app").blockedUntil()).toBeGreaterThan(Date.now() + 30_000);
  });

  it.each([
    ["Retry-After of ten years", { status: 429, retryAfterSeconds: 10 * 365 * 86_400 }],
    ["x-ratelimit-reset ten years ahead", { status: 403, rateLimitResetInSeconds: 10 * 365 * 86_400 }],
  ])("a back-off asked for with %s is capped at an hour, then GitHub is asked again", async (_what, fault) => {
    const { tenant, github, cache } = await setup();
    await tenant.addFault({ match: { pathIncludes: "/installation" }, times: 1, ...fault });
    const asked = Date.now();
    expect(await github.installationFor(REPO).catch((e: unknown) => e)).toBeInstanceOf(GithubRateLimited);
    const until = cache.memory.rate("app").blockedUntil();
    expect(until).toBeGreaterThan(asked + MAX_BACKOFF_MS - 60_000);
    expect(until).toBeLessThanOrEqual(Date.now() + MAX_BACKOFF_MS);
    expect(MAX_BACKOFF_MS).toBe(3_600_000);
  });

  it("a back-off kept from before the cap (years ahead) is read as an hour from now, written back once", async () => {
    const { tenant, github, cache } = await setup();
    cache.memory.rate("app").block(Date.now() + 10 * 365 * 86_400_000);
    expect(await github.installationFor(REPO).catch((e: unknown) => e)).toBeInstanceOf(GithubRateLimited);
    expect(cache.memory.rate("app").blockedUntil()).toBeLessThanOrEqual(Date.now() + MAX_BACKOFF_MS);
    expect(await tenant.calls()).toEqual([]);
  });

  it("a 403 that is not a rate limit still backs off the look-up of that repository", async () => {
    const { tenant, github, cache } = await setup();
    await tenant.addFault({ match: { pathIncludes: "/installation" }, times: 1, status: 403, message: "Resource not accessible by integration" });
    const error = await github.installationFor(REPO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GithubError);
    // The wrapped error keeps octokit's RequestError as its cause.
    expect((error as GithubError).cause).toMatchObject({ name: "HttpError", status: 403 });
    expect(cache.memory.installationFailedUntil(REPO)).toBeGreaterThan(Date.now());
    expect(cache.memory.rate("app").blockedUntil()).toBe(0);
  });
});
