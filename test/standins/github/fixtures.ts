// Default REST objects, built from the real webhook payloads in
// @octokit/webhooks-examples (a webhook's workflow_job / workflow_run object has
// the same shape as the REST one), so a test seeds only the fields it cares about.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Installation, Json, JsonObject, WorkflowJob, WorkflowRun } from "./types.ts";

export type RepoContext = {
  /** The tenant's API base URL (stands where https://api.github.com would). */
  apiBase: string;
  /** "owner/repo" as first seeded (GitHub keeps the repository's own casing). */
  fullName: string;
  repoId: number;
};

type Templates = { job: JsonObject; run: JsonObject; repository: JsonObject };

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function examplePayloads(events: unknown, name: string): JsonObject[] {
  if (!Array.isArray(events)) return [];
  const found: unknown = events.find((e: unknown) => isObject(e) && e.name === name);
  if (!isObject(found) || !Array.isArray(found.examples)) return [];
  return found.examples.filter(isObject);
}

let cached: Templates | undefined;

function templates(): Templates {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const events: unknown = JSON.parse(readFileSync(require.resolve("@octokit/webhooks-examples"), "utf8"));
  // The newest-looking examples: a completed job with workflow_name, a run with actor.
  const job = examplePayloads(events, "workflow_job")
    .map((p) => p.workflow_job)
    .find((j): j is JsonObject => isObject(j) && j.status === "completed" && "workflow_name" in j);
  const run = examplePayloads(events, "workflow_run")
    .map((p) => p.workflow_run)
    .find((r): r is JsonObject => isObject(r) && "actor" in r && "display_title" in r);
  const repository = run?.repository;
  if (!job || !run || !isObject(repository)) throw new Error("github stand-in: templates missing from @octokit/webhooks-examples");
  cached = { job, run, repository };
  return cached;
}

/** GitHub writes times to the second: 2024-01-02T03:04:05Z. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function rebase(value: Json, ctx: RepoContext): Json {
  const [owner = "", repo = ""] = ctx.fullName.split("/");
  const text = JSON.stringify(value)
    .replaceAll("https://api.github.com", ctx.apiBase)
    .replaceAll("octo-org/octo-repo", ctx.fullName)
    .replaceAll("octo-org", owner)
    .replaceAll("octo-repo", repo);
  const parsed: unknown = JSON.parse(text);
  return parsed as Json;
}

function repositoryObject(ctx: RepoContext): JsonObject {
  const repo = rebase(templates().repository, ctx);
  if (!isObject(repo)) throw new Error("unreachable: repository template is an object");
  return { ...repo, id: ctx.repoId, node_id: Buffer.from(`010:Repository${ctx.repoId}`).toString("base64") };
}

/**
 * A repository as the REST API shows it in full (the `repository` schema: an installation
 * token's `repositories`), where the webhook's minimal repository lacks fields.
 */
export function fullRepositoryObject(ctx: RepoContext): JsonObject {
  const repo = repositoryObject(ctx);
  const web = `https://github.com/${ctx.fullName}`;
  return {
    ...repo,
    clone_url: `${web}.git`,
    git_url: `git://github.com/${ctx.fullName}.git`,
    ssh_url: `git@github.com:${ctx.fullName}.git`,
    svn_url: web,
    mirror_url: null,
    homepage: null,
    language: null,
    default_branch: "main",
    forks: 0,
    forks_count: 0,
    open_issues: 0,
    open_issues_count: 0,
    stargazers_count: 0,
    watchers: 0,
    watchers_count: 0,
    size: 108,
    has_downloads: true,
    has_issues: true,
    has_projects: true,
    has_wiki: true,
    has_pages: false,
    archived: false,
    disabled: false,
    license: null,
    visibility: repo.private === true ? "private" : "public",
    pushed_at: "2024-01-01T00:00:00Z",
    created_at: "2024-01-01T00:00:00Z",
    updated_at: "2024-01-01T00:00:00Z",
  };
}

const HEAD_SHA = "3484a3fb816e0859fd6e1cea078d76385ff50625";

export function defaultJob(ctx: RepoContext, id: number, runId: number, runAttempt: number, nowMs: number): WorkflowJob {
  const repoApi = `${ctx.apiBase}/repos/${ctx.fullName}`;
  const template = templates().job;
  return {
    id,
    run_id: runId,
    run_url: `${repoApi}/actions/runs/${runId}`,
    run_attempt: runAttempt,
    node_id: `CR_kwDO${Buffer.from(String(id)).toString("base64url")}`,
    head_sha: typeof template.head_sha === "string" ? template.head_sha : HEAD_SHA,
    head_branch: "main",
    url: `${repoApi}/actions/jobs/${id}`,
    html_url: `https://github.com/${ctx.fullName}/actions/runs/${runId}/job/${id}`,
    status: "in_progress",
    conclusion: null,
    created_at: isoSeconds(nowMs - 5_000),
    started_at: isoSeconds(nowMs),
    completed_at: null,
    name: typeof template.name === "string" ? template.name : "build",
    steps: [],
    check_run_url: `${repoApi}/check-runs/${id}`,
    labels: ["arc-runner-set"],
    runner_id: null,
    runner_name: null,
    runner_group_id: null,
    runner_group_name: null,
    workflow_name: "CI",
  };
}

/** Steps that agree with the job's status and times, like GitHub shows them. */
export function stepsFor(job: WorkflowJob): WorkflowJob["steps"] {
  if (job.status !== "in_progress" && job.status !== "completed") return [];
  const setUp = {
    name: "Set up job",
    status: "completed",
    conclusion: "success",
    number: 1,
    started_at: job.started_at,
    completed_at: job.started_at,
  } as const;
  if (job.status === "in_progress") {
    return [setUp, { name: "Run tests", status: "in_progress", conclusion: null, number: 2, started_at: job.started_at, completed_at: null }];
  }
  return [
    setUp,
    { name: "Run tests", status: "completed", conclusion: job.conclusion, number: 2, started_at: job.started_at, completed_at: job.completed_at },
    { name: "Complete job", status: "completed", conclusion: "success", number: 3, started_at: job.completed_at, completed_at: job.completed_at },
  ];
}

export function defaultRun(ctx: RepoContext, id: number, runAttempt: number, createdAt: string): WorkflowRun {
  const repoApi = `${ctx.apiBase}/repos/${ctx.fullName}`;
  const t = templates().run;
  const repository = repositoryObject(ctx);
  const actor = rebase(t.actor ?? null, ctx);
  return {
    id,
    name: "CI",
    node_id: `WFR_kwLO${Buffer.from(String(id)).toString("base64url")}`,
    head_branch: "main",
    head_sha: typeof t.head_sha === "string" ? t.head_sha : HEAD_SHA,
    path: ".github/workflows/ci.yml",
    display_title: typeof t.display_title === "string" ? t.display_title : "CI",
    run_number: (id % 1000) + 1,
    event: "push",
    status: "queued",
    conclusion: null,
    workflow_id: 16340987,
    check_suite_id: id + 1_000_000,
    check_suite_node_id: `CS_kwDO${Buffer.from(String(id)).toString("base64url")}`,
    url: `${repoApi}/actions/runs/${id}`,
    html_url: `https://github.com/${ctx.fullName}/actions/runs/${id}`,
    pull_requests: [],
    created_at: createdAt,
    updated_at: createdAt,
    actor,
    triggering_actor: actor,
    run_attempt: runAttempt,
    referenced_workflows: [],
    run_started_at: createdAt,
    jobs_url: `${repoApi}/actions/runs/${id}/jobs`,
    logs_url: `${repoApi}/actions/runs/${id}/logs`,
    check_suite_url: `${repoApi}/check-suites/${id + 1_000_000}`,
    artifacts_url: `${repoApi}/actions/runs/${id}/artifacts`,
    cancel_url: `${repoApi}/actions/runs/${id}/cancel`,
    rerun_url: `${repoApi}/actions/runs/${id}/rerun`,
    previous_attempt_url: runAttempt > 1 ? `${repoApi}/actions/runs/${id}/attempts/${runAttempt - 1}` : null,
    workflow_url: `${repoApi}/actions/workflows/16340987`,
    head_commit: rebase(t.head_commit ?? null, ctx),
    repository,
    head_repository: repository,
  };
}

export function installationObject(apiBase: string, appId: number, installation: Installation): JsonObject {
  const accountId = 40_000_000 + (installation.id % 1_000_000);
  const permissions: JsonObject = { ...installation.permissions };
  return {
    id: installation.id,
    // A simple-user of type Organization, every field GitHub sends.
    account: {
      ...simpleUser(apiBase, installation.account, accountId),
      node_id: Buffer.from(`012:Organization${accountId}`).toString("base64"),
      type: "Organization",
    },
    repository_selection: "selected",
    access_tokens_url: `${apiBase}/app/installations/${installation.id}/access_tokens`,
    repositories_url: `${apiBase}/installation/repositories`,
    html_url: `https://github.com/organizations/${installation.account}/settings/installations/${installation.id}`,
    app_id: appId,
    app_slug: `arc-reaper-${appId}`,
    target_id: accountId,
    target_type: "Organization",
    permissions,
    events: ["workflow_job", "workflow_run"],
    created_at: "2024-01-01T00:00:00Z",
    updated_at: "2024-01-01T00:00:00Z",
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: installation.suspendedAt === null ? null : simpleUser(apiBase, "octocat", 583231),
    suspended_at: installation.suspendedAt,
  };
}

/** A user as GitHub shows one inside another object (simple-user). */
export function simpleUser(apiBase: string, login: string, id: number): JsonObject {
  const url = `${apiBase}/users/${login}`;
  return {
    login,
    id,
    node_id: Buffer.from(`04:User${id}`).toString("base64"),
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: "",
    url,
    html_url: `https://github.com/${login}`,
    followers_url: `${url}/followers`,
    following_url: `${url}/following{/other_user}`,
    gists_url: `${url}/gists{/gist_id}`,
    starred_url: `${url}/starred{/owner}{/repo}`,
    subscriptions_url: `${url}/subscriptions`,
    organizations_url: `${url}/orgs`,
    repos_url: `${url}/repos`,
    events_url: `${url}/events{/privacy}`,
    received_events_url: `${url}/received_events`,
    type: "User",
    site_admin: false,
  };
}
