// Per-tenant state of the stand-in and the operations on it that both the
// GitHub API routes and the control routes use.
import { randomBytes } from "node:crypto";
import { defaultJob, defaultRun, isoSeconds, stepsFor, type RepoContext } from "./fixtures.ts";
import { standinRunnerId } from "./runner-id.ts";
import type {
  CallRecord,
  Conclusion,
  Delivery,
  DeliveryInput,
  Installation,
  InstallationInput,
  JobInput,
  Permissions,
  RateLimitState,
  Redelivery,
  RunInput,
  RunStatus,
  TokenRequest,
  WorkflowJob,
  WorkflowRun,
  FaultInput,
} from "./types.ts";

export type StoredDelivery = {
  id: bigint;
  guid: string;
  deliveredAt: string;
  redelivery: boolean;
  duration: number;
  status: string;
  statusCode: number;
  event: string;
  action: string | null;
  installationId: number | null;
  repositoryId: number | null;
  throttledAt: string | null;
};

export type StoredToken = {
  installationId: number;
  expiresAtMs: number;
  permissions: Permissions;
  /** Lower-cased "owner/repo" names when the token was narrowed at mint time. */
  repositories: string[] | null;
};

type RunAttempt = { explicit: Partial<WorkflowRun>; createdAt: string };
type StoredRun = { repoKey: string; id: number; attempts: Map<number, RunAttempt> };
type StoredJob = { repoKey: string; job: WorkflowJob };
export type ActiveFault = FaultInput & { remaining: number };

export type Tenant = {
  id: string;
  appId: number;
  baseUrl: string;
  installations: Map<number, Installation>;
  /** lower-cased "owner/repo" → name as first seeded, and its repository id. */
  repos: Map<string, { fullName: string; id: number }>;
  runs: Map<string, StoredRun>;
  jobs: Map<number, StoredJob>;
  deliveries: StoredDelivery[];
  tokens: Map<string, StoredToken>;
  tokenRequests: TokenRequest[];
  redeliveries: Redelivery[];
  faults: ActiveFault[];
  calls: CallRecord[];
  refuseTokens: 403 | 422 | null;
  redeliveryStatusCode: number;
  /** false: GET /app/hook/deliveries answers 422 to `status`, as older GitHub Enterprise Server versions do. */
  deliveriesStatusFilter: boolean;
  rate: { limit: number; used: number; resetSeconds: number };
  nextJobId: number;
  nextRunId: number;
  /** Served as a GitHub Enterprise Server (ghes-host.ts): its version header, and whether rate limits are on. */
  ghes: { version: string; rateLimits: boolean } | null;
  /** App manifest codes not yet converted (manifest.ts): code to expiry (ms). */
  manifestCodes: Map<string, number>;
  /** The web half of the manifest flow (web.ts): forms shown and not yet confirmed, by id. */
  manifestForms: Map<string, ManifestForm>;
  /** Every App made through the web form, in order: its owner and manifest, and the code handed out. */
  manifestApps: Array<ManifestForm & { code: string }>;
};

type ManifestForm = { owner: string | null; manifest: Record<string, unknown>; state: string | null };

export class StandinError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export function newTenant(id: string, appId: number, baseUrl: string, rateLimit: number, ghes: Tenant["ghes"] = null): Tenant {
  return {
    id,
    appId,
    baseUrl,
    installations: new Map(),
    repos: new Map(),
    runs: new Map(),
    jobs: new Map(),
    deliveries: [],
    tokens: new Map(),
    tokenRequests: [],
    redeliveries: [],
    faults: [],
    calls: [],
    refuseTokens: null,
    redeliveryStatusCode: 200,
    deliveriesStatusFilter: true,
    rate: { limit: rateLimit, used: 0, resetSeconds: Math.floor(Date.now() / 1000) + 3600 },
    nextJobId: 21_000_000_000,
    nextRunId: 11_000_000_000,
    ghes,
    manifestCodes: new Map(),
    manifestForms: new Map(),
    manifestApps: [],
  };
}

export function repoKey(fullName: string): string {
  return fullName.toLowerCase();
}

function checkRepoName(fullName: unknown): string {
  if (typeof fullName !== "string" || !/^[\w.-]+\/[\w.-]+$/.test(fullName)) {
    throw new StandinError(400, `repo must be "owner/repo", got ${JSON.stringify(fullName)}`);
  }
  return fullName;
}

/** Registers a repository name (keeping its first casing) and gives it a stable id. */
function ensureRepo(tenant: Tenant, fullName: string): RepoContext {
  const key = repoKey(checkRepoName(fullName));
  let repo = tenant.repos.get(key);
  if (!repo) {
    repo = { fullName, id: 600_000_000 + tenant.repos.size + 1 };
    tenant.repos.set(key, repo);
  }
  return { apiBase: tenant.baseUrl, fullName: repo.fullName, repoId: repo.id };
}

export function repoContext(tenant: Tenant, key: string): RepoContext | undefined {
  const repo = tenant.repos.get(key);
  return repo && { apiBase: tenant.baseUrl, fullName: repo.fullName, repoId: repo.id };
}

// --- installations and tokens ---

export function addInstallation(tenant: Tenant, input: InstallationInput): Installation {
  if (!Number.isInteger(input.id) || input.id <= 0) throw new StandinError(400, "installation id must be a positive integer");
  if (!Array.isArray(input.repositories)) throw new StandinError(400, "repositories must be an array of owner/repo");
  const names = input.repositories.map((r) => ensureRepo(tenant, r).fullName);
  const owner = input.account ?? names[0]?.split("/")[0];
  if (!owner) throw new StandinError(400, "an installation needs an account or at least one repository");
  const installation: Installation = {
    id: input.id,
    account: owner,
    repositories: names,
    permissions: input.permissions ?? { actions: "read", metadata: "read" },
    suspendedAt: null,
  };
  tenant.installations.set(installation.id, installation);
  return installation;
}

/** The account suspended (or unsuspended) the installation: it stays, GET /app/installations/{id} shows suspended_at, and no token is minted for it. */
export function suspendInstallation(tenant: Tenant, id: unknown, suspended: boolean, nowMs: number): Installation {
  const installation = typeof id === "number" ? tenant.installations.get(id) : undefined;
  if (!installation) throw new StandinError(404, `no installation ${String(id)}`);
  installation.suspendedAt = suspended ? new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, "Z") : null;
  return installation;
}

/** The App uninstalled from an account: the installation goes, and GitHub revokes its tokens (401 from then on). */
export function removeInstallation(tenant: Tenant, id: unknown): void {
  if (typeof id !== "number" || !tenant.installations.delete(id)) throw new StandinError(404, `no installation ${String(id)}`);
  for (const [token, stored] of tenant.tokens) if (stored.installationId === id) tenant.tokens.delete(token);
}

export function installationForRepo(tenant: Tenant, key: string): Installation | undefined {
  for (const installation of tenant.installations.values()) {
    if (installation.repositories.some((r) => repoKey(r) === key)) return installation;
  }
  return undefined;
}

export function mintToken(
  tenant: Tenant,
  installationId: number,
  permissions: Permissions,
  repositories: string[] | null,
): { token: string; expiresAtMs: number } {
  // Installation tokens are "ghs_" and 36 alphanumerics.
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const token = `ghs_${Array.from(randomBytes(36), (b) => alphabet[b % alphabet.length]).join("")}`;
  const expiresAtMs = Date.now() + 3_600_000;
  tenant.tokens.set(token, { installationId, expiresAtMs, permissions, repositories });
  return { token, expiresAtMs };
}

export function grants(granted: Permissions, requested: Permissions): boolean {
  return Object.entries(requested).every(([name, level]) => {
    const has = granted[name];
    return has === "write" || (has === "read" && level === "read");
  });
}

// --- rate limit ---

export function rateLimitState(tenant: Tenant, nowMs: number): RateLimitState {
  const now = Math.floor(nowMs / 1000);
  if (now >= tenant.rate.resetSeconds) {
    tenant.rate.used = 0;
    tenant.rate.resetSeconds = now + 3600;
  }
  const { limit, used, resetSeconds } = tenant.rate;
  return { limit, used, remaining: Math.max(0, limit - used), reset: resetSeconds };
}

/** Spends one request of the budget; false when it is exhausted. */
export function spendRateLimit(tenant: Tenant, nowMs: number): boolean {
  const state = rateLimitState(tenant, nowMs);
  if (state.remaining <= 0) return false;
  tenant.rate.used += 1;
  return true;
}

// --- runs and jobs ---

function runKey(repo: string, runId: number): string {
  return `${repo}#${runId}`;
}

function latestAttempt(run: StoredRun): number {
  return Math.max(1, ...run.attempts.keys());
}

function ensureRunAttempt(tenant: Tenant, key: string, runId: number, attempt: number, nowMs: number): StoredRun {
  let run = tenant.runs.get(runKey(key, runId));
  if (!run) {
    run = { repoKey: key, id: runId, attempts: new Map() };
    tenant.runs.set(runKey(key, runId), run);
  }
  if (!run.attempts.has(attempt)) run.attempts.set(attempt, { explicit: {}, createdAt: isoSeconds(nowMs) });
  return run;
}

function positiveInt(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) throw new StandinError(400, `${name} must be a positive integer`);
  return value;
}

export function putRun(tenant: Tenant, input: RunInput, nowMs: number): WorkflowRun {
  const ctx = ensureRepo(tenant, input.repo);
  const key = repoKey(ctx.fullName);
  const id = positiveInt(input.id, "id") ?? tenant.nextRunId++;
  const existing = tenant.runs.get(runKey(key, id));
  const attempt = positiveInt(input.run_attempt, "run_attempt") ?? (existing ? latestAttempt(existing) : 1);
  const run = ensureRunAttempt(tenant, key, id, attempt, nowMs);
  const record = run.attempts.get(attempt);
  if (!record) throw new Error("unreachable: attempt was just ensured");
  const { repo: _repo, ...fields } = input;
  record.explicit = { ...record.explicit, ...fields, id, run_attempt: attempt };
  // Completing a run without saying when: GitHub's updated_at is the completion time.
  if (fields.status === "completed" && fields.updated_at === undefined) record.explicit.updated_at = isoSeconds(nowMs);
  if (fields.status === "completed" && fields.conclusion === undefined && !record.explicit.conclusion) record.explicit.conclusion = "success";
  if (fields.status !== undefined && fields.status !== "completed" && fields.conclusion === undefined) record.explicit.conclusion = null;
  return runView(tenant, run, attempt);
}

export function putJob(tenant: Tenant, input: JobInput, nowMs: number): WorkflowJob {
  const id = positiveInt(input.id, "id");
  const previous = id === undefined ? undefined : tenant.jobs.get(id);
  const ctx = ensureRepo(tenant, input.repo);
  const key = repoKey(ctx.fullName);
  if (previous && previous.repoKey !== key) throw new StandinError(400, `job ${id} belongs to another repository`);
  const runId = positiveInt(input.run_id, "run_id") ?? previous?.job.run_id;
  if (runId === undefined) throw new StandinError(400, "a new job needs run_id");
  const existingRun = tenant.runs.get(runKey(key, runId));
  const attempt = positiveInt(input.run_attempt, "run_attempt") ?? previous?.job.run_attempt ?? (existingRun ? latestAttempt(existingRun) : 1);
  const jobId = id ?? tenant.nextJobId++;
  const { repo: _repo, ...fields } = input;
  const base = previous?.job ?? defaultJob(ctx, jobId, runId, attempt, nowMs);
  const job: WorkflowJob = { ...base, ...fields, id: jobId, run_id: runId, run_attempt: attempt };
  const given = (name: keyof WorkflowJob): boolean => name in fields;
  // A new job seeded as started in the past was created just before it started.
  if (!previous && given("started_at") && !given("created_at")) job.created_at = isoSeconds(Date.parse(job.started_at) - 5_000);
  // Keep the object coherent the way GitHub would, unless the test set the field itself.
  if (job.status === "completed") {
    if (!given("completed_at") && job.completed_at === null) job.completed_at = isoSeconds(nowMs);
    if (!given("conclusion") && job.conclusion === null) job.conclusion = "success";
  } else {
    if (!given("completed_at")) job.completed_at = null;
    if (!given("conclusion")) job.conclusion = null;
  }
  // A job gets a runner when it starts; one that goes from queued straight to
  // completed (cancelled before it got a runner) keeps none.
  const started = job.status === "in_progress" || (job.status === "completed" && previous === undefined);
  if (started && !given("runner_name") && job.runner_name === null) {
    job.runner_name = `${job.labels[0] ?? "runner"}-${jobId.toString(36)}-runner-${runId.toString(36)}`;
  }
  if (job.runner_name !== null) {
    if (!given("runner_id") && job.runner_id === null) job.runner_id = standinRunnerId(jobId);
    if (!given("runner_group_id") && job.runner_group_id === null) job.runner_group_id = 1;
    if (!given("runner_group_name") && job.runner_group_name === null) job.runner_group_name = "Default";
  }
  if (!given("steps")) job.steps = stepsFor(job);
  ensureRunAttempt(tenant, key, runId, attempt, nowMs);
  tenant.jobs.set(jobId, { repoKey: key, job });
  return job;
}

/** Jobs of one attempt (or of all attempts), oldest first like GitHub lists them. */
export function jobsOfRun(tenant: Tenant, key: string, runId: number, attempt: number | "all"): WorkflowJob[] {
  const jobs: WorkflowJob[] = [];
  for (const stored of tenant.jobs.values()) {
    const { job } = stored;
    if (stored.repoKey === key && job.run_id === runId && (attempt === "all" || job.run_attempt === attempt)) jobs.push(job);
  }
  return jobs.sort((a, b) => a.run_attempt - b.run_attempt || a.id - b.id);
}

export function findJob(tenant: Tenant, key: string, jobId: number): WorkflowJob | undefined {
  const stored = tenant.jobs.get(jobId);
  return stored && stored.repoKey === key ? stored.job : undefined;
}

export function findRunAttempt(tenant: Tenant, key: string, runId: number, attempt: number | "latest"): WorkflowRun | undefined {
  const run = tenant.runs.get(runKey(key, runId));
  if (!run) return undefined;
  const n = attempt === "latest" ? latestAttempt(run) : attempt;
  return run.attempts.has(n) ? runView(tenant, run, n) : undefined;
}

/** Every run of a repository at its latest attempt, newest first, as GET /repos/{owner}/{repo}/actions/runs lists them. */
export function runsOfRepo(tenant: Tenant, key: string): WorkflowRun[] {
  const runs: WorkflowRun[] = [];
  for (const run of tenant.runs.values()) if (run.repoKey === key) runs.push(runView(tenant, run, latestAttempt(run)));
  return runs.sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || b.id - a.id);
}

export function latestRunAttempt(tenant: Tenant, key: string, runId: number): number | undefined {
  const run = tenant.runs.get(runKey(key, runId));
  return run && latestAttempt(run);
}

const conclusionOrder: Conclusion[] = ["failure", "startup_failure", "timed_out", "cancelled", "action_required"];

type Derived = Pick<WorkflowRun, "status" | "conclusion" | "created_at" | "run_started_at" | "updated_at">;

/** Status, conclusion and times of an attempt as GitHub derives them from its
 * jobs: the run starts with its first job and was last updated by its latest. */
function derived(jobs: WorkflowJob[], createdAt: string): Derived {
  const earlier = (a: string, b: string) => (Date.parse(b) < Date.parse(a) ? b : a);
  const later = (a: string, b: string) => (Date.parse(b) > Date.parse(a) ? b : a);
  const created = jobs.map((j) => j.created_at).reduce(earlier, createdAt);
  const times = { created_at: created, run_started_at: created };
  if (jobs.length === 0) return { status: "queued", conclusion: null, updated_at: created, ...times };
  const latest = jobs.flatMap((j) => [j.started_at, j.completed_at ?? j.started_at]).reduce(later, created);
  if (jobs.every((j) => j.status === "completed")) {
    const conclusion = conclusionOrder.find((c) => jobs.some((j) => j.conclusion === c)) ?? "success";
    return { status: "completed", conclusion, updated_at: latest, ...times };
  }
  const status: RunStatus = jobs.every((j) => j.status === "queued" || j.status === "waiting") ? "queued" : "in_progress";
  return { status, conclusion: null, updated_at: latest, ...times };
}

function runView(tenant: Tenant, run: StoredRun, attempt: number): WorkflowRun {
  const record = run.attempts.get(attempt);
  const ctx = repoContext(tenant, run.repoKey);
  if (!record || !ctx) throw new Error("unreachable: run attempt without record or repository");
  const base = defaultRun(ctx, run.id, attempt, record.createdAt);
  return { ...base, ...derived(jobsOfRun(tenant, run.repoKey, run.id, attempt), record.createdAt), ...record.explicit };
}

// --- deliveries ---

export function deliveryStatusText(code: number): string {
  return code >= 200 && code < 300 ? "OK" : `Invalid HTTP Response: ${code}`;
}

export function addDelivery(tenant: Tenant, id: bigint, input: DeliveryInput, nowMs: number): StoredDelivery {
  if (typeof input.guid !== "string" || typeof input.event !== "string") throw new StandinError(400, "a delivery needs guid and event");
  const statusCode = input.statusCode ?? 200;
  const delivery: StoredDelivery = {
    id,
    guid: input.guid,
    deliveredAt: input.deliveredAt ?? isoSeconds(nowMs),
    redelivery: input.redelivery ?? false,
    duration: input.duration ?? 0.27,
    status: input.status ?? deliveryStatusText(statusCode),
    statusCode,
    event: input.event,
    action: input.action ?? null,
    installationId: input.installationId ?? null,
    repositoryId: input.repositoryId ?? null,
    throttledAt: input.throttledAt ?? null,
  };
  tenant.deliveries.push(delivery);
  return delivery;
}

/** Newest first, as GitHub lists them. */
export function deliveriesNewestFirst(tenant: Tenant): StoredDelivery[] {
  return [...tenant.deliveries].sort((a, b) => {
    const byTime = Date.parse(b.deliveredAt) - Date.parse(a.deliveredAt);
    if (byTime !== 0) return byTime;
    return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
  });
}

export function deliveryView(d: StoredDelivery): Delivery {
  return {
    id: d.id.toString(),
    guid: d.guid,
    delivered_at: d.deliveredAt,
    redelivery: d.redelivery,
    duration: d.duration,
    status: d.status,
    status_code: d.statusCode,
    event: d.event,
    action: d.action,
    installation_id: d.installationId,
    repository_id: d.repositoryId,
    throttled_at: d.throttledAt,
  };
}
