// Turns a verified GitHub webhook into the facts it teaches. Pure: the caller
// verified the signature and parsed the JSON; this checks the shape.
import type { Fact } from "../model/facts.ts";
import { namesOfJob, namesOfRun } from "./job-names.ts";
import { installationChange, type InstallationChange } from "./installation-from-webhook.ts";

export type WebhookOutcome =
  | { kind: "facts"; facts: Fact[]; summary: string }
  | { kind: "installation"; change: InstallationChange; summary: string }
  | { kind: "ignored"; why: string }
  | { kind: "invalid"; error: string };

/** Runner group of GitHub-hosted runners: nothing of ours to reap. */
const GITHUB_HOSTED_GROUP = "GitHub Actions";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

class Invalid extends Error {}

function field<T>(obj: Obj, path: string, check: (v: unknown) => v is T, what: string): T {
  const value = path.split(".").reduce<unknown>((o, k) => (isObj(o) ? o[k] : undefined), obj);
  if (!check(value)) {
    throw new Invalid(`${path} must be ${what}, got ${value === undefined ? "nothing" : JSON.stringify(value)}`);
  }
  return value;
}
const isId = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v > 0;
const isText = (v: unknown): v is string => typeof v === "string" && v !== "";
const isTime = (v: unknown): v is string => typeof v === "string" && !Number.isNaN(Date.parse(v));
const isRepo = (v: unknown): v is string => typeof v === "string" && /^[^/\s]+\/[^/\s]+$/.test(v);
// A Kubernetes object name: what ARC names the runner after.
const isRunnerName = (v: unknown): v is string =>
  typeof v === "string" && /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(v);

export function factsFromWebhook(event: string, deliveryId: string, payload: unknown): WebhookOutcome {
  if (!isObj(payload)) return { kind: "invalid", error: "payload must be a JSON object" };
  const action = payload.action;
  try {
    if (event === "workflow_job" && (action === "in_progress" || action === "completed")) {
      return fromWorkflowJob(action, deliveryId, payload);
    }
    if (event === "workflow_run" && action === "completed") {
      return fromWorkflowRun(deliveryId, payload);
    }
    const change = installationChange(event, payload);
    if (change && "error" in change) return { kind: "invalid", error: change.error };
    if (change) return { kind: "installation", change, summary: `${event}.${String(action)}: installation ${change.id}` };
  } catch (e) {
    if (e instanceof Invalid) return { kind: "invalid", error: `${event}.${String(action)}: ${e.message}` };
    throw e;
  }
  return { kind: "ignored", why: `${event}${typeof action === "string" ? `.${action}` : ""} is not something arc-reaper acts on` };
}

function installationId(payload: Obj): number | undefined {
  const id = isObj(payload.installation) ? payload.installation.id : undefined;
  return isId(id) ? id : undefined;
}

function fromWorkflowJob(action: "in_progress" | "completed", source: string, payload: Obj): WebhookOutcome {
  const job = field(payload, "workflow_job", isObj, "an object");
  const runner = job.runner_name;
  if (runner === null || runner === undefined || runner === "") {
    return { kind: "ignored", why: `workflow_job.${action}: the job has no runner (cancelled before one took it)` };
  }
  if (job.runner_group_name === GITHUB_HOSTED_GROUP) {
    return { kind: "ignored", why: `workflow_job.${action}: job ran on a GitHub-hosted runner` };
  }
  if (!isRunnerName(runner)) {
    return {
      kind: "ignored",
      why: `workflow_job.${action}: runner ${JSON.stringify(runner)} cannot be an ARC EphemeralRunner name`,
    };
  }
  const attempt = job.run_attempt;
  const common = {
    runner,
    repo: field(payload, "repository.full_name", isRepo, "owner/repo"),
    runId: field(job, "run_id", isId, "a positive integer"),
    // Older payloads lack run_attempt; 0 means unknown, and then only the job's own completion counts.
    runAttempt: isId(attempt) ? attempt : 0,
    jobId: field(job, "id", isId, "a positive integer"),
    installationId: installationId(payload),
    source,
    names: namesOfJob(job),
  };
  if (action === "in_progress") {
    const startedAt = field(job, "started_at", isTime, "a timestamp");
    return {
      kind: "facts",
      facts: [{ type: "job-started", ...common, startedAt }],
      summary: `job ${common.jobId} of run ${common.runId} started on ${runner}`,
    };
  }
  const completedAt = field(job, "completed_at", isTime, "a timestamp");
  const conclusion = field(job, "conclusion", isText, "a conclusion");
  const startedAt = isTime(job.started_at) ? job.started_at : undefined;
  return {
    kind: "facts",
    facts: [{ type: "job-completed", ...common, startedAt, completedAt, conclusion }],
    summary: `job ${common.jobId} on ${runner} completed: ${conclusion}`,
  };
}

function fromWorkflowRun(source: string, payload: Obj): WebhookOutcome {
  const run = field(payload, "workflow_run", isObj, "an object");
  const fact = {
    type: "run-completed" as const,
    repo: field(payload, "repository.full_name", isRepo, "owner/repo"),
    runId: field(run, "id", isId, "a positive integer"),
    runAttempt: field(run, "run_attempt", isId, "a positive integer"),
    updatedAt: field(run, "updated_at", isTime, "a timestamp"),
    conclusion: field(run, "conclusion", isText, "a conclusion"),
    installationId: installationId(payload),
    source,
    names: namesOfRun(run),
  };
  return {
    kind: "facts",
    facts: [fact],
    summary: `run ${fact.runId} attempt ${fact.runAttempt} completed: ${fact.conclusion}`,
  };
}
