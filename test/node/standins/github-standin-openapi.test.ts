// The GitHub stand-in checked against what GitHub publishes: every kind of answer
// it gives arc-reaper (the App, a token, an installation, a repository's
// installation, the deliveries page, a redelivery attempt, a run, a run attempt, the runs of a repository,
// the jobs of a run and of an attempt, a job, and its errors) is validated against
// the response schema of that operation and status in @octokit/openapi (its
// checked-in extract, test/fixtures/openapi), for api.github.com and for GitHub
// Enterprise Server.
import { sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGithubTenant, type GithubTenant, type TenantOptions } from "../../standins/github/control.ts";
import { startGithubStandin, type GithubStandin } from "../../standins/github/server.ts";
import { OPERATIONS } from "../../../scripts/openapi-extract.ts";
import { describeErrors, loadDescription, type DescriptionName } from "./openapi-check.ts";

let standin: GithubStandin;
const answersOf = new Map<DescriptionName, Answer[]>();
beforeAll(async () => {
  standin = await startGithubStandin();
  // Every request first: compiling the schemas holds the event loop for seconds, and a pooled
  // keep-alive socket the stand-in closed meanwhile would fail the next request.
  answersOf.set("api.github.com", await everyAnswer({}));
  answersOf.set("ghes-3.19", await everyAnswer({ ghes: { version: "3.19.1" } }));
}, 60_000);
afterAll(async () => {
  await standin.close();
});

const REPO = "octo-org/octo-repo";
const INSTALLATION = 4242;
const SUSPENDED = 4343;

interface Answer {
  /** What it is, for the report. */
  kind: string;
  method: string;
  /** The operation's path as the description names it. */
  operation: string;
  status: number;
  body: unknown;
}

function appJwt(t: GithubTenant): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const data = `${part({ alg: "RS256", typ: "JWT" })}.${part({ iat: now - 30, exp: now + 540, iss: t.appId })}`;
  return `${data}.${sign("RSA-SHA256", Buffer.from(data), t.privateKeyPkcs1).toString("base64url")}`;
}

/** Asks the stand-in as arc-reaper does and keeps every answer it gives, errors included. */
async function everyAnswer(opts: TenantOptions): Promise<Answer[]> {
  const t = await createGithubTenant(standin.url, opts);
  await t.addInstallation({ id: INSTALLATION, repositories: [REPO] });
  await t.addInstallation({ id: SUSPENDED, repositories: ["octo-org/paused"] });
  await t.suspend(SUSPENDED);
  const job = await t.putJob({
    repo: REPO,
    run_id: 700,
    status: "in_progress",
    runner_name: "arc-runners-abcde-runner-x1",
    runner_id: 12,
    runner_group_id: 1,
    runner_group_name: "Default",
  });
  await t.putJob({ repo: REPO, run_id: 700, status: "completed", conclusion: "success", runner_name: "arc-runners-abcde-runner-x2" });
  await t.putJob({ repo: REPO, run_id: 701, status: "queued" });
  const delivery = await t.addDelivery({
    guid: "guid-1",
    event: "workflow_job",
    action: "completed",
    statusCode: 502,
    installationId: INSTALLATION,
    repositoryId: 1,
  });
  await t.addDelivery({ guid: "guid-2", event: "workflow_run", action: "completed", statusCode: 200 });

  const answers: Answer[] = [];
  const jwt = `Bearer ${appJwt(t)}`;
  const ask = async (kind: string, method: string, operation: string, path: string, auth: string | undefined, body?: unknown): Promise<unknown> => {
    const headers: Record<string, string> = { accept: "application/vnd.github+json" };
    if (auth) headers.authorization = auth;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${t.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }).catch((e: unknown) => {
      throw new Error(`${kind}: ${method} ${path}`, { cause: e });
    });
    const text = await res.text();
    const parsed: unknown = text === "" ? null : JSON.parse(text);
    answers.push({ kind, method, operation, status: res.status, body: parsed });
    return parsed;
  };

  await ask("the App", "GET", "/app", "/app", jwt);
  const minted = (await ask(
    "installation token",
    "POST",
    "/app/installations/{installation_id}/access_tokens",
    `/app/installations/${INSTALLATION}/access_tokens`,
    jwt,
    { permissions: { actions: "read" } },
  )) as { token: string };
  await ask(
    "installation token for some repositories",
    "POST",
    "/app/installations/{installation_id}/access_tokens",
    `/app/installations/${INSTALLATION}/access_tokens`,
    jwt,
    { repositories: ["octo-repo"], permissions: { actions: "read" } },
  );
  await ask("installation", "GET", "/app/installations/{installation_id}", `/app/installations/${INSTALLATION}`, jwt);
  await ask("installation, suspended", "GET", "/app/installations/{installation_id}", `/app/installations/${SUSPENDED}`, jwt);
  await ask("app installation of a repository", "GET", "/repos/{owner}/{repo}/installation", `/repos/${REPO}/installation`, jwt);
  await ask("deliveries page", "GET", "/app/hook/deliveries", "/app/hook/deliveries?per_page=100", jwt);
  await ask("deliveries page, failures", "GET", "/app/hook/deliveries", "/app/hook/deliveries?status=failure", jwt);
  await ask("redelivery attempt", "POST", "/app/hook/deliveries/{delivery_id}/attempts", `/app/hook/deliveries/${delivery.id}/attempts`, jwt);
  const token = `token ${minted.token}`;
  await ask("run", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", `/repos/${REPO}/actions/runs/700`, token);
  await ask("run, queued", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", `/repos/${REPO}/actions/runs/701`, token);
  const inProgress = (await ask(
    "runs in progress of a repository",
    "GET",
    "/repos/{owner}/{repo}/actions/runs",
    `/repos/${REPO}/actions/runs?status=in_progress&exclude_pull_requests=true&per_page=100&page=1`,
    token,
  )) as { workflow_runs: { id: number; status: string }[] };
  // Run 700 has a job in progress, 701 only a queued one: the listing is not empty, and filtered.
  if (inProgress.workflow_runs.map((r) => `${r.id} ${r.status}`).join() !== "700 in_progress") {
    throw new Error(`runs in progress: ${JSON.stringify(inProgress.workflow_runs.map((r) => [r.id, r.status]))}`);
  }
  await ask("runs of a repository", "GET", "/repos/{owner}/{repo}/actions/runs", `/repos/${REPO}/actions/runs`, token);
  await ask("run attempt", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}", `/repos/${REPO}/actions/runs/700/attempts/1`, token);
  await ask(
    "jobs of a run",
    "GET",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
    `/repos/${REPO}/actions/runs/700/jobs?filter=latest&per_page=100`,
    token,
  );
  await ask(
    "jobs of a run attempt",
    "GET",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs",
    `/repos/${REPO}/actions/runs/700/attempts/1/jobs`,
    token,
  );
  await ask("job", "GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}", `/repos/${REPO}/actions/jobs/${job.id}`, token);
  await ask(
    "job, queued (no runner yet)",
    "GET",
    "/repos/{owner}/{repo}/actions/jobs/{job_id}",
    `/repos/${REPO}/actions/jobs/${(await t.putJob({ repo: REPO, run_id: 702, status: "queued" })).id}`,
    token,
  );

  // Errors.
  await ask("error: no such installation", "GET", "/app/installations/{installation_id}", "/app/installations/999", jwt);
  await ask("error: not installed on the repository", "GET", "/repos/{owner}/{repo}/installation", "/repos/octo-org/elsewhere/installation", jwt);
  await ask(
    "error: mint without authentication",
    "POST",
    "/app/installations/{installation_id}/access_tokens",
    `/app/installations/${INSTALLATION}/access_tokens`,
    undefined,
  );
  await ask(
    "error: mint for a suspended installation",
    "POST",
    "/app/installations/{installation_id}/access_tokens",
    `/app/installations/${SUSPENDED}/access_tokens`,
    jwt,
  );
  await ask(
    "error: a permission not granted",
    "POST",
    "/app/installations/{installation_id}/access_tokens",
    `/app/installations/${INSTALLATION}/access_tokens`,
    jwt,
    { permissions: { contents: "write" } },
  );
  await ask("error: mint for no installation", "POST", "/app/installations/{installation_id}/access_tokens", "/app/installations/999/access_tokens", jwt);
  await ask("error: deliveries with a bad status filter", "GET", "/app/hook/deliveries", "/app/hook/deliveries?status=sometimes", jwt);
  await ask("error: redelivery of no delivery", "POST", "/app/hook/deliveries/{delivery_id}/attempts", "/app/hook/deliveries/1/attempts", jwt);
  await ask(
    "error: job with a bad token",
    "GET",
    "/repos/{owner}/{repo}/actions/jobs/{job_id}",
    `/repos/${REPO}/actions/jobs/${job.id}`,
    "token ghs_not-a-token",
  );
  await ask("error: no such job", "GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}", `/repos/${REPO}/actions/jobs/1`, token);
  await ask("error: no such run", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", `/repos/${REPO}/actions/runs/1`, token);
  await ask("error: runs with a bad status filter", "GET", "/repos/{owner}/{repo}/actions/runs", `/repos/${REPO}/actions/runs?status=sometimes`, token);
  await ask("error: jobs of no run", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs", `/repos/${REPO}/actions/runs/1/jobs`, token);
  await ask("error: a JWT on an installation route", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", `/repos/${REPO}/actions/runs/700`, jwt);
  await t.addFault({
    match: { pathIncludes: "/actions/jobs/" },
    status: 403,
    message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    retryAfterSeconds: 60,
    times: 1,
  });
  await ask("error: secondary rate limit", "GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}", `/repos/${REPO}/actions/jobs/${job.id}`, token);
  await t.addFault({ match: { pathIncludes: "/actions/jobs/" }, status: 403, rateLimitResetInSeconds: 60, times: 1 });
  await ask("error: primary rate limit", "GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}", `/repos/${REPO}/actions/jobs/${job.id}`, token);
  await t.addFault({ match: { pathIncludes: "/actions/runs/" }, status: 500, times: 1 });
  await ask("error: server error", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", `/repos/${REPO}/actions/runs/700`, token);
  return answers;
}

function check(name: DescriptionName, answers: Answer[]): { checked: number; kinds: string[]; differences: string[] } {
  const description = loadDescription(name);
  const differences: string[] = [];
  const kinds: string[] = [];
  for (const a of answers) {
    const { validate, declared } = description.validator(a.method, a.operation, a.status);
    kinds.push(`${a.kind}: ${a.method} ${a.operation} ${a.status}${declared ? "" : " (not listed for the operation: basic-error)"}`);
    if (!validate(a.body)) differences.push(`${a.kind} (${a.status}): ${describeErrors(validate.errors).join("; ")}`);
  }
  return { checked: answers.length, kinds, differences };
}

describe("the GitHub stand-in against GitHub's published API description (@octokit/openapi)", () => {
  it.each(["api.github.com", "ghes-3.19"] as const)(
    "every kind of answer it gives matches %s's response schemas",
    (name) => {
      const answers = answersOf.get(name) ?? [];
      // Every operation arc-reaper calls is among them, with its success and its errors.
      expect(new Set(answers.map((a) => `${a.method} ${a.operation}`))).toEqual(new Set(OPERATIONS));
      expect(answers.filter((a) => a.status >= 400).length).toBeGreaterThanOrEqual(15);
      const { checked, differences, kinds } = check(name, answers);
      console.log(
        `openapi: ${checked} answers of the stand-in checked against @octokit/openapi ${name}: ${differences.length} differ\n  ${kinds.join("\n  ")}`,
      );
      expect(differences).toEqual([]);
      expect(checked).toBe(answers.length);
    },
    120_000,
  );

  it("the check can fail: an answer missing a required field, or with a wrong type, is named", () => {
    const { differences } = check("api.github.com", [
      { kind: "job without steps", method: "GET", operation: "/repos/{owner}/{repo}/actions/jobs/{job_id}", status: 200, body: { id: 1 } },
      { kind: "error with a numeric message", method: "GET", operation: "/app/installations/{installation_id}", status: 404, body: { message: 404 } },
    ]);
    expect(differences).toHaveLength(2);
    expect(differences[0]).toContain("must have required property");
    expect(differences[1]).toContain("/message: must be string");
  });
});
