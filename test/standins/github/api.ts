// The GitHub REST endpoints a GitHub App reaper uses, answered from a tenant's
// state with GitHub's status codes, messages and paging.
import type { KeyObject } from "node:crypto";
import { fullRepositoryObject, installationObject, isoSeconds, simpleUser } from "./fixtures.ts";
import type { WireJson } from "./json.ts";
import { JWT_DECODE, verifyAppJwt } from "./jwt.ts";
import {
  addDelivery,
  deliveriesNewestFirst,
  deliveryStatusText,
  deliveryView,
  findJob,
  findRunAttempt,
  grants,
  installationForRepo,
  jobsOfRun,
  latestRunAttempt,
  mintToken,
  repoContext,
  repoKey,
  runsOfRepo,
  spendRateLimit,
  type StoredDelivery,
  type StoredToken,
  type Tenant,
} from "./store.ts";
import type { AuthKind, Permissions } from "./types.ts";

export type Auth = { kind: "none" } | { kind: Exclude<AuthKind, "none">; token: string };

export type ApiRequest = {
  method: string;
  /** Path after the tenant prefix, without the query. */
  path: string;
  query: URLSearchParams;
  auth: Auth;
  body: string;
  nowMs: number;
};

export type ApiAnswer = { status: number; body: WireJson; headers: Record<string, string> };

export type ApiContext = { publicKey: KeyObject; nextDeliveryId(): bigint };

const DOCS = "https://docs.github.com/rest";
const DOC = {
  token: "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app",
  app: "https://docs.github.com/rest/apps/apps#get-the-authenticated-app",
  installation: "https://docs.github.com/rest/apps/apps#get-an-installation-for-the-authenticated-app",
  repoInstallation: "https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app",
  deliveries: "https://docs.github.com/rest/apps/webhooks#list-deliveries-for-an-app-webhook",
  redeliver: "https://docs.github.com/rest/apps/webhooks#redeliver-a-delivery-for-an-app-webhook",
  run: "https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run",
  runAttempt: "https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run-attempt",
  runs: "https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-repository",
  jobs: "https://docs.github.com/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run",
  attemptJobs: "https://docs.github.com/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run-attempt",
  job: "https://docs.github.com/rest/actions/workflow-jobs#get-a-job-for-a-workflow-run",
} as const;

const PERMISSION_NOT_GRANTED = "The permissions requested are not granted to this installation.";

export function errorAnswer(status: number, message: string, documentationUrl: string = DOCS, headers: Record<string, string> = {}): ApiAnswer {
  return { status, body: { message, documentation_url: documentationUrl, status: String(status) }, headers };
}

function ok(body: WireJson, status = 200, headers: Record<string, string> = {}): ApiAnswer {
  return { status, body, headers };
}

type Identity = { installationId: number | null; token: StoredToken | null };

type Route = {
  method: string;
  pattern: RegExp;
  auth: "jwt" | "installation";
  doc: string;
  handle(tenant: Tenant, req: ApiRequest, params: string[], ctx: ApiContext, identity: Identity): ApiAnswer;
};

function intParam(value: string | undefined): number {
  return value === undefined ? Number.NaN : Number(value);
}

/** per_page as GitHub reads it: default 30, at most 100. */
function perPage(query: URLSearchParams): number {
  const raw = Number(query.get("per_page") ?? 30);
  return Number.isInteger(raw) && raw > 0 ? Math.min(raw, 100) : 30;
}

function parseBody(body: string): Record<string, unknown> | null | "invalid" {
  if (body.trim() === "") return null;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : "invalid";
  } catch {
    return "invalid";
  }
}

function asPermissions(value: unknown): Permissions | null | "invalid" {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return "invalid";
  const result: Permissions = {};
  for (const [name, level] of Object.entries(value)) {
    if (level !== "read" && level !== "write") return "invalid";
    result[name] = level;
  }
  return result;
}

function pageLink(tenant: Tenant, path: string, query: URLSearchParams, changes: Record<string, string>): string {
  const next = new URLSearchParams(query);
  for (const [k, v] of Object.entries(changes)) next.set(k, v);
  return `${tenant.baseUrl}${path}?${next.toString()}`;
}

/** Page-numbered listing with GitHub's Link header (prev, next, last, first). */
function paged<T extends WireJson>(tenant: Tenant, req: ApiRequest, items: T[], key: string): ApiAnswer {
  const size = perPage(req.query);
  const rawPage = Number(req.query.get("page") ?? 1);
  const page = Number.isInteger(rawPage) && rawPage > 0 ? rawPage : 1;
  const lastPage = Math.max(1, Math.ceil(items.length / size));
  const links: string[] = [];
  const link = (p: number, rel: string) => links.push(`<${pageLink(tenant, req.path, req.query, { per_page: String(size), page: String(p) })}>; rel="${rel}"`);
  if (page > 1) link(Math.min(page - 1, lastPage), "prev");
  if (page < lastPage) {
    link(page + 1, "next");
    link(lastPage, "last");
  }
  if (page > 1) link(1, "first");
  const headers: Record<string, string> = links.length > 0 ? { link: links.join(", ") } : {};
  return ok({ total_count: items.length, [key]: items.slice((page - 1) * size, page * size) }, 200, headers);
}

// On the wire the id is a bare JSON number above 2^53 (a bigint here), not the view's string.
function deliveryWire(d: StoredDelivery): WireJson {
  return { ...deliveryView(d), id: d.id };
}

// --- App (JWT) endpoints ---

function createToken(tenant: Tenant, req: ApiRequest, params: string[]): ApiAnswer {
  const installationId = intParam(params[0]);
  const installation = tenant.installations.get(installationId);
  if (!installation) return errorAnswer(404, "Not Found", DOC.token);
  const body = parseBody(req.body);
  if (body === "invalid") return errorAnswer(400, "Problems parsing JSON", DOC.token);
  const permissions = asPermissions(body?.permissions);
  const rawRepos = body?.repositories;
  const record = (status: number, repositories: string[] | null) => {
    tenant.tokenRequests.push({ installationId, permissions: permissions === "invalid" ? null : permissions, repositories, status });
  };
  if (permissions === "invalid" || (rawRepos !== undefined && (!Array.isArray(rawRepos) || !rawRepos.every((r) => typeof r === "string")))) {
    record(422, null);
    return errorAnswer(422, "Invalid request.", DOC.token);
  }
  // GitHub takes repository names without the owner; accept "owner/repo" too.
  const repositories = Array.isArray(rawRepos) ? rawRepos.map((r: string) => (r.includes("/") ? r : `${installation.account}/${r}`)) : null;
  if (installation.suspendedAt !== null) {
    record(403, repositories);
    return errorAnswer(403, "This installation has been suspended", DOC.token);
  }
  if (tenant.refuseTokens !== null) {
    record(tenant.refuseTokens, repositories);
    return errorAnswer(tenant.refuseTokens, PERMISSION_NOT_GRANTED, DOC.token);
  }
  if (permissions && !grants(installation.permissions, permissions)) {
    record(422, repositories);
    return errorAnswer(422, PERMISSION_NOT_GRANTED, DOC.token);
  }
  const covered = new Set(installation.repositories.map(repoKey));
  if (repositories && !repositories.every((r) => covered.has(repoKey(r)))) {
    record(422, repositories);
    return errorAnswer(422, "There is at least one repository that does not exist or is not accessible to the parent installation.", DOC.token);
  }
  const granted = permissions ?? installation.permissions;
  const keys = repositories?.map(repoKey) ?? null;
  const { token, expiresAtMs } = mintToken(tenant, installationId, granted, keys);
  record(201, repositories);
  const answer: Record<string, WireJson> = {
    token,
    expires_at: isoSeconds(expiresAtMs),
    permissions: { ...granted },
    repository_selection: "selected",
  };
  if (keys) {
    answer.repositories = keys.flatMap((k) => {
      const ctx = repoContext(tenant, k);
      return ctx ? [fullRepositoryObject(ctx)] : [];
    });
  }
  return ok(answer, 201);
}

function getApp(tenant: Tenant): ApiAnswer {
  return ok({
    id: tenant.appId,
    slug: `arc-reaper-${tenant.appId}`,
    node_id: Buffer.from(`03:Integration${tenant.appId}`).toString("base64"),
    client_id: `Iv23li${tenant.appId.toString(36)}`,
    // The account that owns the App (GitHub: a simple-user, or an enterprise).
    owner: { ...simpleUser(tenant.baseUrl, "octo-org", 40_000_000), type: "Organization" },
    name: `arc-reaper ${tenant.appId}`,
    description: "Stand-in GitHub App",
    external_url: "https://example.com",
    html_url: `https://github.com/apps/arc-reaper-${tenant.appId}`,
    created_at: "2024-01-01T00:00:00Z",
    updated_at: "2024-01-01T00:00:00Z",
    permissions: { actions: "read", metadata: "read" },
    events: ["workflow_job", "workflow_run"],
    installations_count: tenant.installations.size,
  });
}

function getInstallation(tenant: Tenant, _req: ApiRequest, params: string[]): ApiAnswer {
  const installation = tenant.installations.get(intParam(params[0]));
  if (!installation) return errorAnswer(404, "Not Found", DOC.installation);
  return ok(installationObject(tenant.baseUrl, tenant.appId, installation));
}

function getRepoInstallation(tenant: Tenant, _req: ApiRequest, params: string[]): ApiAnswer {
  const installation = installationForRepo(tenant, repoKey(`${params[0]}/${params[1]}`));
  if (!installation) return errorAnswer(404, "Not Found", DOC.repoInstallation);
  return ok(installationObject(tenant.baseUrl, tenant.appId, installation));
}

function listDeliveries(tenant: Tenant, req: ApiRequest): ApiAnswer {
  const size = perPage(req.query);
  let items = deliveriesNewestFirst(tenant);
  const status = req.query.get("status");
  if (status !== null) {
    // Older GitHub Enterprise Server versions do not know the parameter.
    if (!tenant.deliveriesStatusFilter) return errorAnswer(422, 'Invalid request.\n\n"status" is not a permitted key.', DOC.deliveries);
    // success: status codes 200-399; failure: 400-599. A delivery whose connection never completed has neither.
    if (status === "success") items = items.filter((d) => d.statusCode >= 200 && d.statusCode < 400);
    else if (status === "failure") items = items.filter((d) => d.statusCode >= 400 && d.statusCode < 600);
    else return errorAnswer(422, "Invalid request.\n\nstatus must be one of: success, failure.", DOC.deliveries);
  }
  const cursor = req.query.get("cursor");
  if (cursor) {
    // Our cursors are "v1_<id of the last delivery of the previous page>".
    const match = /^v1_(\d+)$/.exec(cursor);
    const index = match ? items.findIndex((d) => d.id.toString() === match[1]) : -1;
    if (index < 0) return errorAnswer(422, "Invalid cursor", DOC.deliveries);
    items = items.slice(index + 1);
  }
  const page = items.slice(0, size);
  const last = page[page.length - 1];
  const headers: Record<string, string> = {};
  if (items.length > size && last) {
    headers.link = `<${pageLink(tenant, req.path, req.query, { per_page: String(size), cursor: `v1_${last.id.toString()}` })}>; rel="next"`;
  }
  return ok(page.map(deliveryWire), 200, headers);
}

function redeliver(tenant: Tenant, req: ApiRequest, params: string[], ctx: ApiContext): ApiAnswer {
  // The id stays a string of digits from the path: it does not fit a double.
  const idText = params[0] ?? "";
  const original = tenant.deliveries.find((d) => d.id.toString() === idText);
  if (!original) return errorAnswer(404, "Not Found", DOC.redeliver);
  const statusCode = tenant.redeliveryStatusCode;
  const attempt = addDelivery(
    tenant,
    ctx.nextDeliveryId(),
    {
      guid: original.guid,
      event: original.event,
      action: original.action,
      statusCode,
      status: deliveryStatusText(statusCode),
      redelivery: true,
      installationId: original.installationId,
      repositoryId: original.repositoryId,
      deliveredAt: isoSeconds(req.nowMs),
    },
    req.nowMs,
  );
  tenant.redeliveries.push({ deliveryId: idText, guid: original.guid, newDeliveryId: attempt.id.toString(), statusCode });
  return ok({}, 202);
}

// --- installation-token endpoints ---

function getRun(attempted: boolean) {
  return (tenant: Tenant, _req: ApiRequest, params: string[]): ApiAnswer => {
    const key = repoKey(`${params[0]}/${params[1]}`);
    const run = findRunAttempt(tenant, key, intParam(params[2]), attempted ? intParam(params[3]) : "latest");
    return run ? ok(run) : errorAnswer(404, "Not Found", attempted ? DOC.runAttempt : DOC.run);
  };
}

// A status filter matches a run's status or its conclusion (GitHub's `status` takes either).
const RUN_STATUS_FILTERS = new Set([
  "completed",
  "action_required",
  "cancelled",
  "failure",
  "neutral",
  "skipped",
  "stale",
  "success",
  "timed_out",
  "in_progress",
  "queued",
  "requested",
  "waiting",
  "pending",
]);
/** GitHub answers at most 1,000 runs for a search filtered by one of these (list-workflow-runs-for-a-repository). */
const SEARCH_PARAMETERS = ["actor", "branch", "check_suite_id", "created", "event", "head_sha", "status"];

function listRuns(tenant: Tenant, req: ApiRequest, params: string[]): ApiAnswer {
  let runs = runsOfRepo(tenant, repoKey(`${params[0]}/${params[1]}`));
  const status = req.query.get("status");
  if (status !== null) {
    if (!RUN_STATUS_FILTERS.has(status)) return errorAnswer(422, "Invalid request.\n\nstatus is not a valid value.", DOC.runs);
    runs = runs.filter((r) => r.status === status || r.conclusion === status);
  }
  if (SEARCH_PARAMETERS.some((p) => req.query.has(p))) runs = runs.slice(0, 1000);
  // exclude_pull_requests=true empties each run's pull_requests (ours are empty already).
  return paged(tenant, req, runs, "workflow_runs");
}

function listJobs(attempted: boolean) {
  return (tenant: Tenant, req: ApiRequest, params: string[]): ApiAnswer => {
    const key = repoKey(`${params[0]}/${params[1]}`);
    const runId = intParam(params[2]);
    const latest = latestRunAttempt(tenant, key, runId);
    const doc = attempted ? DOC.attemptJobs : DOC.jobs;
    if (latest === undefined) return errorAnswer(404, "Not Found", doc);
    let attempt: number | "all" = latest;
    if (attempted) {
      attempt = intParam(params[3]);
      if (!findRunAttempt(tenant, key, runId, attempt)) return errorAnswer(404, "Not Found", doc);
    } else {
      const filter = req.query.get("filter") ?? "latest";
      if (filter !== "latest" && filter !== "all") {
        return errorAnswer(422, "Invalid request.\n\nfilter must be one of: latest, all.", doc);
      }
      if (filter === "all") attempt = "all";
    }
    return paged(tenant, req, jobsOfRun(tenant, key, runId, attempt), "jobs");
  };
}

function getJob(tenant: Tenant, _req: ApiRequest, params: string[]): ApiAnswer {
  const job = findJob(tenant, repoKey(`${params[0]}/${params[1]}`), intParam(params[2]));
  return job ? ok(job) : errorAnswer(404, "Not Found", DOC.job);
}

const REPO = "/repos/([^/]+)/([^/]+)";

const routes: Route[] = [
  { method: "GET", pattern: /^\/app$/, auth: "jwt", doc: DOC.app, handle: getApp },
  { method: "POST", pattern: /^\/app\/installations\/(\d+)\/access_tokens$/, auth: "jwt", doc: DOC.token, handle: createToken },
  { method: "GET", pattern: /^\/app\/installations\/(\d+)$/, auth: "jwt", doc: DOC.installation, handle: getInstallation },
  { method: "GET", pattern: new RegExp(`^${REPO}/installation$`), auth: "jwt", doc: DOC.repoInstallation, handle: getRepoInstallation },
  { method: "GET", pattern: /^\/app\/hook\/deliveries$/, auth: "jwt", doc: DOC.deliveries, handle: listDeliveries },
  { method: "POST", pattern: /^\/app\/hook\/deliveries\/(\d+)\/attempts$/, auth: "jwt", doc: DOC.redeliver, handle: redeliver },
  { method: "GET", pattern: new RegExp(`^${REPO}/actions/runs$`), auth: "installation", doc: DOC.runs, handle: listRuns },
  { method: "GET", pattern: new RegExp(`^${REPO}/actions/runs/(\\d+)$`), auth: "installation", doc: DOC.run, handle: getRun(false) },
  { method: "GET", pattern: new RegExp(`^${REPO}/actions/runs/(\\d+)/attempts/(\\d+)$`), auth: "installation", doc: DOC.runAttempt, handle: getRun(true) },
  { method: "GET", pattern: new RegExp(`^${REPO}/actions/runs/(\\d+)/jobs$`), auth: "installation", doc: DOC.jobs, handle: listJobs(false) },
  {
    method: "GET",
    pattern: new RegExp(`^${REPO}/actions/runs/(\\d+)/attempts/(\\d+)/jobs$`),
    auth: "installation",
    doc: DOC.attemptJobs,
    handle: listJobs(true),
  },
  { method: "GET", pattern: new RegExp(`^${REPO}/actions/jobs/(\\d+)$`), auth: "installation", doc: DOC.job, handle: getJob },
];

/** Who the caller is, or the 401/403/404 GitHub would answer instead. */
function authenticate(tenant: Tenant, req: ApiRequest, route: Route, params: string[], ctx: ApiContext): Identity | ApiAnswer {
  const { auth } = req;
  if (auth.kind === "none") return errorAnswer(401, "Requires authentication", route.doc);
  if (route.auth === "jwt") {
    if (auth.kind !== "jwt") return errorAnswer(401, JWT_DECODE, route.doc);
    const check = verifyAppJwt(auth.token, ctx.publicKey, tenant.appId, Math.floor(req.nowMs / 1000));
    return check.ok ? { installationId: null, token: null } : errorAnswer(401, check.message, route.doc);
  }
  if (auth.kind === "jwt") {
    // An App JWT is valid only on /app endpoints; checked as GitHub does after decoding it.
    const check = verifyAppJwt(auth.token, ctx.publicKey, tenant.appId, Math.floor(req.nowMs / 1000));
    return check.ok ? errorAnswer(403, "Resource not accessible by integration", route.doc) : errorAnswer(401, check.message, route.doc);
  }
  const token = tenant.tokens.get(auth.token);
  if (!token || token.expiresAtMs <= req.nowMs) return errorAnswer(401, "Bad credentials", DOCS);
  const installation = tenant.installations.get(token.installationId);
  const key = repoKey(`${params[0]}/${params[1]}`);
  const covers = installation?.repositories.some((r) => repoKey(r) === key) ?? false;
  if (!covers || (token.repositories !== null && !token.repositories.includes(key))) return errorAnswer(404, "Not Found", route.doc);
  const actions = token.permissions.actions;
  if (actions !== "read" && actions !== "write") return errorAnswer(403, "Resource not accessible by integration", route.doc);
  return { installationId: token.installationId, token };
}

export function rateLimitExceededMessage(tenant: Tenant, installationId: number | null): string {
  return installationId === null ? `API rate limit exceeded for app ID ${tenant.appId}.` : `API rate limit exceeded for installation ID ${installationId}.`;
}

export function handleApi(tenant: Tenant, req: ApiRequest, ctx: ApiContext): ApiAnswer {
  for (const route of routes) {
    const match = route.pattern.exec(req.path);
    if (!match) continue;
    // GitHub answers a known path with a wrong method as 404 too.
    if (route.method !== req.method) continue;
    const params = match.slice(1).map(decodeURIComponent);
    const identity = authenticate(tenant, req, route, params, ctx);
    if ("status" in identity) return identity;
    if (!spendRateLimit(tenant, req.nowMs)) {
      return errorAnswer(403, rateLimitExceededMessage(tenant, identity.installationId), "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api");
    }
    return route.handle(tenant, req, params, ctx, identity);
  }
  return errorAnswer(404, "Not Found", DOCS);
}

/** The installation a request's token belongs to, for messages about it (no verification). */
export function installationOfToken(tenant: Tenant, auth: Auth): number | null {
  return auth.kind === "installation" ? (tenant.tokens.get(auth.token)?.installationId ?? null) : null;
}
