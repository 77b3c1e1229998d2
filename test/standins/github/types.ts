// Wire types shared by the stand-in GitHub server (Node) and its control client
// (which runs inside workerd), so this file must import nothing.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

type JobStatus = "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
export type RunStatus = JobStatus;
export type Conclusion = "success" | "failure" | "neutral" | "cancelled" | "skipped" | "timed_out" | "action_required" | "stale" | "startup_failure" | null;

type WorkflowJobStep = {
  name: string;
  status: JobStatus;
  conclusion: Conclusion;
  number: number;
  started_at: string | null;
  completed_at: string | null;
};

/** A job as GET /repos/{owner}/{repo}/actions/jobs/{job_id} returns it. */
export type WorkflowJob = {
  id: number;
  run_id: number;
  run_url: string;
  run_attempt: number;
  node_id: string;
  head_sha: string;
  head_branch: string;
  url: string;
  html_url: string;
  status: JobStatus;
  conclusion: Conclusion;
  created_at: string;
  started_at: string;
  completed_at: string | null;
  name: string;
  steps: WorkflowJobStep[];
  check_run_url: string;
  labels: string[];
  runner_id: number | null;
  runner_name: string | null;
  runner_group_id: number | null;
  runner_group_name: string | null;
  workflow_name: string;
};

/** A run (one attempt of it) as GET /repos/{owner}/{repo}/actions/runs/{run_id} returns it. */
export type WorkflowRun = {
  id: number;
  name: string;
  node_id: string;
  head_branch: string;
  head_sha: string;
  path: string;
  display_title: string;
  run_number: number;
  event: string;
  status: RunStatus;
  conclusion: Conclusion;
  workflow_id: number;
  check_suite_id: number;
  check_suite_node_id: string;
  url: string;
  html_url: string;
  pull_requests: Json[];
  created_at: string;
  updated_at: string;
  actor: Json;
  triggering_actor: Json;
  run_attempt: number;
  referenced_workflows: Json[];
  run_started_at: string;
  jobs_url: string;
  logs_url: string;
  check_suite_url: string;
  artifacts_url: string;
  cancel_url: string;
  rerun_url: string;
  previous_attempt_url: string | null;
  workflow_url: string;
  head_commit: Json;
  repository: Json;
  head_repository: Json;
};

/** Upsert a job. `repo` is "owner/repo". Without `id` a new job gets a fresh id;
 * `run_id` is required for a new job; `run_attempt` defaults to the run's latest attempt. */
export type JobInput = { repo: string } & Partial<WorkflowJob>;

/** Upsert one attempt of a run. `run_attempt` defaults to the latest attempt (1 for a new run).
 * Fields not given are derived from the attempt's jobs (status, conclusion, updated_at). */
export type RunInput = { repo: string } & Partial<Omit<WorkflowRun, "repository" | "head_repository">>;

export type Permissions = Record<string, "read" | "write">;

export type InstallationInput = {
  id: number;
  /** "owner/repo" names the installation covers (repository_selection "selected"). */
  repositories: string[];
  /** Defaults to {actions: "read", metadata: "read"}. */
  permissions?: Permissions;
  /** Account login; defaults to the owner of the first repository. */
  account?: string;
};

export type Installation = {
  id: number;
  account: string;
  repositories: string[];
  permissions: Permissions;
  /** When the account suspended the App's installation (ISO); null while it is active. */
  suspendedAt: string | null;
};

export type DeliveryInput = {
  guid: string;
  event: string;
  action?: string | null;
  /** HTTP status the App's endpoint answered; default 200. */
  statusCode?: number;
  /** Defaults to "OK" for 2xx, else "Invalid HTTP Response: <code>". */
  status?: string;
  /** ISO time; default now. */
  deliveredAt?: string;
  redelivery?: boolean;
  installationId?: number | null;
  repositoryId?: number | null;
  duration?: number;
  throttledAt?: string | null;
};

/** A delivery as the list endpoint shows it, but with `id` as a decimal string
 * (on the GitHub wire it is a bare JSON number above 2^53). */
export type Delivery = {
  id: string;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  duration: number;
  status: string;
  status_code: number;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  throttled_at: string | null;
};

export type FaultInput = {
  /** Matches every API call when omitted. `pathIncludes` is tested against the API
   * path after the tenant prefix, with its query string (e.g. "/actions/jobs/"). */
  match?: { method?: string; pathIncludes?: string };
  /** Answer with this status; when omitted the call is answered normally (after delayMs). */
  status?: number;
  retryAfterSeconds?: number;
  rateLimitResetInSeconds?: number;
  delayMs?: number;
  /** How many calls it hits; unlimited when omitted (until clearFaults). */
  times?: number;
  message?: string;
  /** Answer this text as the body instead of GitHub's error (a 200 `{}`, an HTML page), as `contentType` (JSON by default). */
  rawBody?: string;
  contentType?: string;
  /** A Location header (with a 3xx status: a redirect, absolute or relative to the request). */
  location?: string;
};

export type AuthKind = "jwt" | "installation" | "none";

export type CallRecord = {
  method: string;
  path: string;
  query: Record<string, string>;
  auth: AuthKind;
  status: number;
  /** A GHES tenant's host was asked for a path outside /api/v3 (answered with the web's HTML 404). */
  outsideApi?: true;
};

export type TokenRequest = {
  installationId: number;
  /** The `permissions` of the request body, or null when none were asked. */
  permissions: Permissions | null;
  repositories: string[] | null;
  status: number;
};

export type Redelivery = {
  deliveryId: string;
  guid: string;
  /** Id of the delivery appended for this attempt. */
  newDeliveryId: string;
  statusCode: number;
};

export type RateLimitState = { limit: number; remaining: number; used: number; reset: number };

export type TenantOptions = {
  appId?: number;
  /** Requests per hour for this tenant (default 5000). */
  rateLimit?: number;
  /**
   * Serve this tenant as a GitHub Enterprise Server: on a port of its own, the API
   * under /api/v3 (baseUrl is then http://127.0.0.1:PORT/api/v3), the HTML "not
   * found" page elsewhere, answers carrying x-github-enterprise-version. Rate limits
   * are off by default on GHES; with `rateLimits: false` (the default here) answers
   * carry no x-ratelimit-* headers.
   */
  ghes?: true | { version?: string; rateLimits?: boolean };
};

export type TenantInfo = {
  id: string;
  /** Give this to the product as GITHUB_API_URL. */
  baseUrl: string;
  /** Where the control API of this tenant is. */
  controlUrl: string;
  /** The web (https://github.com, or https://HOST on GHES): the manifest form and the install page (web.ts). */
  webUrl?: string;
  appId: number;
  privateKeyPkcs1: string;
  privateKeyPkcs8: string;
};
