// Installations from the source: every delivery names its installation and
// the ledger remembers it per repository; an uninstalled installation (a mint
// answered 404, a read answered 401, or the installation events) is dropped and
// the repository's installation is looked up again, preferring what the latest
// delivery named.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { newCallBudget } from "../../../src/github/call-budget.ts";
import { createGithub, GithubError } from "../../../src/github/github-client.ts";
import { newGithubCache } from "../../../src/github/installation-and-rate-memory.ts";
import { createGithubTenant } from "../../standins/github/control.ts";
import { CONFIRM_REPOS_AT_MOST } from "../../../src/durable/confirm-installation.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { before, INSTALLATION, REPO, stack } from "../support/stack.ts";
import { adminRunners, deliver, ledgerOf, testEnv } from "../support/worker.ts";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { NOW } from "../support/kube-calls.ts";

type S = Awaited<ReturnType<typeof stack>>;
const REINSTALLED = 5151;
/** Reads as the installation: a recheck lists the repository's runs in progress (issue 25). */
const actionsReads = async (s: S) => (await s.github.calls()).filter((c) => c.path.includes("/actions/")).map((c) => c.status);
const mints = async (s: S) => (await s.github.calls()).filter((c) => c.path.endsWith("/access_tokens")).map((c) => `${c.path.split("/")[3]} ${c.status}`);

const memory = (env: WorkerEnv) =>
  runInDurableObject(ledgerOf(env), (_i, state) =>
    Object.fromEntries(
      state.storage.sql
        .exec<{ key: string; value: string }>("SELECT key, value FROM memory WHERE key LIKE 'installation%' ORDER BY key")
        .toArray()
        .map((r) => [r.key, JSON.parse(r.value) as number]),
    ),
  );

/** A job running past the recheck interval, learned from an in_progress delivery that named INSTALLATION. */
async function runningJob(s: S, name: string, runId: number) {
  await s.runner({ name, workflowRunId: runId });
  const job = await s.github.putJob({ repo: REPO, run_id: runId, status: "in_progress", runner_name: name, started_at: before(NOW, 3700) });
  await s.jobStarted({ runner: name, runId, jobId: Number(job.id), startedAt: before(NOW, 3700) });
  return job;
}

describe("installations from the source", () => {
  it("remembers the installation each delivery names, per repository", async () => {
    const env = testEnv();
    await deliver(
      env,
      "workflow_job",
      workflowJobPayload("in_progress", {
        runner: "arc-runners-i-1",
        jobId: 1,
        runId: 10,
        runAttempt: 1,
        repo: "octo-org/a",
        startedAt: before(Date.now(), 60),
        installationId: 11,
      }),
    );
    // An ignored delivery (a job on a GitHub-hosted runner) names its installation too.
    await deliver(
      env,
      "workflow_job",
      workflowJobPayload("in_progress", {
        runner: "arc-runners-i-2",
        jobId: 2,
        runId: 20,
        runAttempt: 1,
        repo: "octo-org/b",
        startedAt: before(Date.now(), 60),
        installationId: 22,
        runnerGroup: "GitHub Actions",
      }),
    );
    await deliver(
      env,
      "workflow_job",
      workflowJobPayload("completed", {
        runner: "arc-runners-i-1",
        jobId: 1,
        runId: 10,
        runAttempt: 1,
        repo: "octo-org/a",
        startedAt: before(Date.now(), 60),
        completedAt: before(Date.now(), 5),
        conclusion: "success",
        installationId: 12,
      }),
    );
    const { flushDoorCounts } = await import("../../../src/http/door-tally.ts");
    await flushDoorCounts(env, String(env.LEDGER_NAME));
    expect(await memory(env)).toEqual({ "installation/octo-org/a": 12, "installation/octo-org/b": 22 });
  });

  it("after an uninstall and a new install, the id the latest delivery named is used, not the row's own", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    const job = await runningJob(s, "arc-runners-abcde-runner-i3", 960);
    await s.github.uninstall(INSTALLATION);
    await s.github.addInstallation({ id: REINSTALLED, repositories: [REPO] });
    // Another job's delivery after the reinstall names the new installation.
    await deliver(
      s.env,
      "workflow_job",
      workflowJobPayload("in_progress", {
        runner: "arc-runners-abcde-runner-i4",
        jobId: 99,
        runId: 961,
        runAttempt: 1,
        repo: REPO,
        startedAt: before(NOW, 10),
        installationId: REINSTALLED,
      }),
    );
    await s.sweep(NOW);
    expect(await mints(s)).toEqual([`${REINSTALLED} 201`]);
    // The runs in progress, then the listed run's attempt (its jobs), both as the new installation.
    expect(await actionsReads(s)).toEqual([200, 200]);
    expect((await adminRunners(s.env)).runners.find((r) => r.jobId === Number(job.id))).toMatchObject({ state: "running" });
  });

  it("a mint answered 404 drops the installation; the next attempt looks the repository up again", async () => {
    const s = await stack({ REAPER_RECHECK_SECONDS: "3600" });
    await runningJob(s, "arc-runners-abcde-runner-i5", 962);
    await s.github.uninstall(INSTALLATION);
    await s.github.addInstallation({ id: REINSTALLED, repositories: [REPO] });
    await s.sweep(NOW);
    expect(await mints(s)).toEqual([`${INSTALLATION} 404`]);
    expect(await memory(s.env)).toMatchObject({ [`installation-revoked/${INSTALLATION}`]: expect.any(Number) });
    expect((await memory(s.env))[`installation/${REPO}`]).toBeUndefined();
    await s.github.clearCalls();
    await s.sweep(NOW + 3_601_000); // the next recheck (a failed one waits an interval too)
    expect((await s.github.calls()).map((c) => `${c.method} ${c.path} ${c.status}`).filter((c) => !c.includes("/hook/deliveries"))).toEqual([
      `GET /repos/${REPO}/installation 200`,
      `POST /app/installations/${REINSTALLED}/access_tokens 201`,
      `GET /repos/${REPO}/actions/runs 200`,
      `GET /repos/${REPO}/actions/runs/962/attempts/1/jobs 200`,
    ]);
    expect((await memory(s.env))[`installation/${REPO}`]).toBe(REINSTALLED);
  });

  it("installation deleted / suspend / installation_repositories removed are confirmed with GitHub (App JWT) before anything is forgotten; a replay for a live installation forgets nothing", async () => {
    const s = await stack();
    const examples = inject("webhookExamples");
    const example = (event: string, action: string, id?: number) => {
      const p = structuredClone(examples.find((e) => e.name === event)!.examples.find((x) => x.action === action)!) as { installation: { id: number } };
      if (id !== undefined) p.installation.id = id;
      return p;
    };
    const names = async (repo: string, installationId: number, n: number) =>
      deliver(
        s.env,
        "workflow_job",
        workflowJobPayload("in_progress", {
          runner: `arc-runners-i-${n}`,
          jobId: n,
          runId: n * 10,
          runAttempt: 1,
          repo,
          startedAt: before(Date.now(), 60),
          installationId,
        }),
      );
    const installationCalls = async () =>
      (await s.github.calls()).filter((c) => c.path.includes("installation")).map((c) => `${c.method} ${c.path} ${c.auth} ${c.status}`);
    const SUSPENDED = 16598467;
    await s.github.addInstallation({ id: 2, repositories: ["octocat/Hello-World", "octocat/Other"] });
    await s.github.addInstallation({ id: 3, repositories: ["octocat/Third"] });
    await s.github.addInstallation({ id: 5, repositories: ["octocat/Fifth"] });
    await s.github.addInstallation({ id: SUSPENDED, repositories: ["Codertocat/Hello-World"] });
    await names("octocat/Hello-World", 2, 6);
    await names("octocat/Other", 2, 7);
    await names("octocat/Third", 3, 8);
    await names("octocat/Fifth", 5, 9);
    await names("Codertocat/Hello-World", SUSPENDED, 10);
    const all = {
      "installation/Codertocat/Hello-World": SUSPENDED,
      "installation/octocat/Fifth": 5,
      "installation/octocat/Hello-World": 2,
      "installation/octocat/Other": 2,
      "installation/octocat/Third": 3,
    };
    expect(await memory(s.env)).toEqual(all);

    // A replay (new GUID) of "removed" while GitHub still has octocat/Hello-World in installation 2: nothing forgotten.
    expect((await deliver(s.env, "installation_repositories", example("installation_repositories", "removed"))).status).toBe(202);
    expect(await memory(s.env)).toEqual(all);
    expect(await installationCalls()).toEqual(["GET /repos/octocat/Hello-World/installation jwt 200"]);

    // A replay of "deleted" for live installations 2 and 3: GitHub says they are live, nothing is forgotten.
    await s.github.clearCalls();
    expect((await deliver(s.env, "installation", example("installation", "deleted", 3))).status).toBe(202);
    expect(await memory(s.env)).toEqual(all);
    expect(await installationCalls()).toEqual(["GET /app/installations/3 jwt 200"]);
    // Replayed again within the minute: GitHub is not asked again, and still nothing is forgotten.
    await s.github.clearCalls();
    await deliver(s.env, "installation", example("installation", "deleted", 3));
    expect(await installationCalls()).toEqual([]);
    expect(await memory(s.env)).toEqual(all);

    // GitHub cannot be asked (500): nothing is forgotten (a mint answering 404 would drop it later).
    await s.github.uninstall(5);
    await s.github.addFault({ match: { pathIncludes: "/app/installations/5" }, status: 500, times: 1 });
    await deliver(s.env, "installation", example("installation", "deleted", 5));
    expect(await memory(s.env)).toEqual(all);

    // What GitHub confirms is applied: installation 2 deleted (404), a suspended one (suspended_at set).
    await s.github.uninstall(2);
    await s.github.suspend(SUSPENDED);
    await s.github.clearCalls();
    await deliver(s.env, "installation", example("installation", "deleted"));
    await deliver(s.env, "installation", example("installation", "suspend"));
    expect(await installationCalls()).toEqual([`GET /app/installations/2 jwt 404`, `GET /app/installations/${SUSPENDED} jwt 200`]);
    expect(await memory(s.env)).toEqual({
      "installation-revoked/2": expect.any(Number),
      [`installation-revoked/${SUSPENDED}`]: expect.any(Number),
      "installation/octocat/Fifth": 5,
      "installation/octocat/Third": 3,
    });
    const revoked = await memory(s.env);
    // Deleted: not used again within the history; suspended: tried again after an hour.
    expect(revoked["installation-revoked/2"]! - Date.now()).toBeGreaterThan(86_400_000);
    expect(revoked[`installation-revoked/${SUSPENDED}`]! - Date.now()).toBeLessThanOrEqual(3_600_000);
    // Unsuspended: used again at once.
    await deliver(s.env, "installation", example("installation", "unsuspend"));
    expect((await memory(s.env))[`installation-revoked/${SUSPENDED}`]).toBeUndefined();
  });

  it("a repository GitHub confirms removed from the installation is forgotten; the others stay", async () => {
    const s = await stack();
    const examples = inject("webhookExamples");
    const removed = structuredClone(examples.find((e) => e.name === "installation_repositories")!.examples.find((x) => x.action === "removed")!);
    await s.github.addInstallation({ id: 2, repositories: ["octocat/Other"] });
    for (const [n, repo] of [
      [6, "octocat/Hello-World"],
      [7, "octocat/Other"],
    ] as const) {
      await deliver(
        s.env,
        "workflow_job",
        workflowJobPayload("in_progress", {
          runner: `arc-runners-i-${n}`,
          jobId: n,
          runId: n * 10,
          runAttempt: 1,
          repo,
          startedAt: before(Date.now(), 60),
          installationId: 2,
        }),
      );
    }
    expect((await deliver(s.env, "installation_repositories", removed)).status).toBe(202);
    expect(await memory(s.env)).toEqual({ "installation/octocat/Other": 2 });
  });
});

describe("a captured installation_repositories delivery, replayed", () => {
  it("naming more repositories than the budget, costs at most a few calls once a minute, whatever the GUID", async () => {
    const s = await stack({ REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "20" });
    const examples = inject("webhookExamples");
    const removed = structuredClone(examples.find((e) => e.name === "installation_repositories")!.examples.find((x) => x.action === "removed")!) as {
      installation: { id: number };
      repositories_removed: { full_name: string }[];
    };
    const repos = Array.from({ length: 30 }, (_, i) => `octo-org/r${i}`);
    removed.repositories_removed = repos.map((full_name) => ({ full_name }));
    await s.github.addInstallation({ id: removed.installation.id, repositories: repos });
    // Remembered with that installation, as deliveries naming it would have left them.
    await runInDurableObject(ledgerOf(s.env), (_i, state) => {
      for (const r of repos) state.storage.sql.exec("INSERT INTO memory (key, value) VALUES (?, ?)", `installation/${r}`, String(removed.installation.id));
    });
    const asked = async () => (await s.github.calls()).filter((c) => c.path.endsWith("/installation")).length;
    const checked = () =>
      runInDurableObject(
        ledgerOf(s.env),
        (_i, state) => state.storage.sql.exec("SELECT count(*) AS n FROM memory WHERE key LIKE 'github-checked/%'").one()["n"],
      );

    expect((await deliver(s.env, "installation_repositories", removed, { delivery: "replay-1" })).status).toBe(202);
    // At most CONFIRM_REPOS_AT_MOST asked (before: the whole budget of 20), and the once-a-minute guard recorded.
    expect(await asked()).toBe(CONFIRM_REPOS_AT_MOST);
    expect(await checked()).toBe(1);
    for (const guid of ["replay-2", "replay-3"]) await deliver(s.env, "installation_repositories", removed, { delivery: guid });
    expect(await asked()).toBe(CONFIRM_REPOS_AT_MOST);
    // Nothing forgotten: GitHub said each one asked is still covered; the rest were not asked.
    expect(Object.keys(await memory(s.env))).toHaveLength(30);
  });
});

describe("the GitHub client and revoked tokens", () => {
  it("a read answered 401 drops the cached token and the repository's installation; the next read mints again", async () => {
    const tenant = await createGithubTenant(inject("githubStandinUrl"));
    await tenant.addInstallation({ id: 4242, repositories: [REPO] });
    const cache = newGithubCache();
    const github = createGithub({ apiUrl: tenant.baseUrl, appId: String(tenant.appId), privateKey: tenant.privateKeyPkcs1, budget: newCallBudget(100), cache });
    const job = await tenant.putJob({ repo: REPO, run_id: 1, status: "in_progress", runner_name: "arc-runners-x-1" });
    expect(await github.installationFor(REPO)).toBe(4242);
    await github.job(REPO, Number(job.id), 4242);
    await tenant.expireTokens(); // GitHub revoked the token
    const error = await github.job(REPO, Number(job.id), 4242).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GithubError);
    expect((error as GithubError).status).toBe(401);
    expect(cache.tokens.has(4242)).toBe(false);
    expect(cache.memory.installation(REPO)).toBeUndefined();
    expect((await github.job(REPO, Number(job.id), await github.installationFor(REPO))).id).toBe(Number(job.id));
    expect((await tenant.tokenRequests()).length).toBe(2);
  });

  it("a mint answered with a rate limit is a back-off, never a revoked installation", async () => {
    const tenant = await createGithubTenant(inject("githubStandinUrl"));
    await tenant.addInstallation({ id: 4242, repositories: [REPO] });
    const cache = newGithubCache();
    const github = createGithub({ apiUrl: tenant.baseUrl, appId: String(tenant.appId), privateKey: tenant.privateKeyPkcs1, budget: newCallBudget(100), cache });
    await tenant.addFault({ match: { pathIncludes: "access_tokens" }, status: 429, times: 1 });
    await expect(github.installationToken(4242)).rejects.toThrow(/rate limit/);
    expect(cache.memory.installationRevoked(4242)).toBe(false);
    expect(cache.memory.rate("app").blockedUntil()).toBeGreaterThan(Date.now());
  });
});
