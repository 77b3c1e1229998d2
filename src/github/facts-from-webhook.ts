// Turns a verified GitHub webhook into the facts it teaches. Pure: the caller
// verified the signature and parsed the JSON; valibot schemas check the shape.
import * as v from "valibot";
import type { Fact } from "../model/facts.ts";
import { namesOfJob, namesOfRun } from "./job-names.ts";
import { installationChange, type InstallationChange } from "./installation-from-webhook.ts";
import { isId, isObj, must, shown, type Obj } from "./payload-fields.ts";
import { isObjectName, isOwnerRepo as isRepo } from "../model/shapes.ts";

export type WebhookOutcome =
  | { kind: "facts"; facts: Fact[]; summary: string }
  | { kind: "installation"; change: InstallationChange; summary: string }
  | { kind: "ignored"; why: string }
  | { kind: "invalid"; error: string };

/** Runner group of GitHub-hosted runners: nothing of ours to reap. */
const GITHUB_HOSTED_GROUP = "GitHub Actions";

const isText = (v: unknown): v is string => typeof v === "string" && v !== "";
const isTime = (v: unknown): v is string => typeof v === "string" && !Number.isNaN(Date.parse(v));
// A runner's name is a Kubernetes object name, by the same rule as the agent protocol's (src/model/shapes.ts),
// so a runner recorded from a webhook can always be put in a read order.
const isRunnerName = isObjectName;

const anObject = (path: string) => (issue: v.BaseIssue<unknown>) => `${path} must be an object, got ${shown(issue.input)}`;

/** An object at `path` whose fields are checked even when absent, so that each field's own message names it. */
function fields<E extends v.ObjectEntries>(path: string, entries: E) {
  return v.pipe(
    v.custom<Obj>(isObj, anObject(path)),
    v.transform((o) => ({ ...Object.fromEntries(Object.keys(entries).map((k) => [k, undefined])), ...o })),
    v.looseObject(entries),
  );
}

// The payloads' shapes, in the order their fields are checked (the first problem is the one named).
// No repository at all is checked as one without a name: the message names repository.full_name.
const repository = v.pipe(
  v.unknown(),
  v.transform((r) => r ?? {}),
  fields("repository", { full_name: must("repository.full_name", "owner/repo", isRepo) }),
);
const jobFields = { run_id: must("run_id", "a positive integer", isId), id: must("id", "a positive integer", isId) };
const JobStarted = fields("payload", {
  repository,
  workflow_job: fields("workflow_job", { ...jobFields, started_at: must("started_at", "a timestamp", isTime) }),
});
const JobCompleted = fields("payload", {
  repository,
  workflow_job: fields("workflow_job", {
    ...jobFields,
    completed_at: must("completed_at", "a timestamp", isTime),
    conclusion: must("conclusion", "a conclusion", isText),
  }),
});
const RunCompleted = fields("payload", {
  repository,
  workflow_run: fields("workflow_run", {
    id: must("id", "a positive integer", isId),
    run_attempt: must("run_attempt", "a positive integer", isId),
    updated_at: must("updated_at", "a timestamp", isTime),
    conclusion: must("conclusion", "a conclusion", isText),
  }),
});

class Invalid extends Error {}

/** The payload as `schema` reads it, or Invalid naming the first field that is wrong. */
function parsed<S extends v.GenericSchema>(schema: S, payload: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, payload, { abortEarly: true });
  if (!result.success) throw new Invalid(result.issues[0].message);
  return result.output;
}

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

const InstallationId = v.object({ installation: v.object({ id: v.custom<number>(isId) }) });
const installationId = (payload: Obj): number | undefined => (v.is(InstallationId, payload) ? payload.installation.id : undefined);

function fromWorkflowJob(action: "in_progress" | "completed", source: string, payload: Obj): WebhookOutcome {
  const job = payload.workflow_job;
  if (!isObj(job)) throw new Invalid(`workflow_job must be an object, got ${shown(job)}`);
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
  const runnerId = job.runner_id;
  // The registration that took the job: null or 0 (older payloads, GHES) is no id, anything else must be one.
  if (runnerId !== undefined && runnerId !== null && runnerId !== 0 && !isId(runnerId)) {
    throw new Invalid(`workflow_job.runner_id must be a positive integer or null, got ${shown(runnerId)}`);
  }
  const common = (p: { repository: { full_name: string }; workflow_job: { run_id: number; id: number } }) => ({
    runner,
    repo: p.repository.full_name,
    runId: p.workflow_job.run_id,
    // Older payloads lack run_attempt; 0 means unknown, and then only the job's own completion counts.
    runAttempt: isId(attempt) ? attempt : 0,
    jobId: p.workflow_job.id,
    ...(isId(runnerId) ? { runnerId } : {}),
    installationId: installationId(payload),
    source,
    names: namesOfJob(job),
  });
  if (action === "in_progress") {
    const p = parsed(JobStarted, payload);
    const fact = { type: "job-started" as const, ...common(p), startedAt: p.workflow_job.started_at };
    return { kind: "facts", facts: [fact], summary: `job ${fact.jobId} of run ${fact.runId} started on ${runner}` };
  }
  const p = parsed(JobCompleted, payload);
  const { completed_at: completedAt, conclusion } = p.workflow_job;
  const startedAt = isTime(job.started_at) ? job.started_at : undefined;
  const fact = { type: "job-completed" as const, ...common(p), startedAt, completedAt, conclusion };
  return { kind: "facts", facts: [fact], summary: `job ${fact.jobId} on ${runner} completed: ${conclusion}` };
}

function fromWorkflowRun(source: string, payload: Obj): WebhookOutcome {
  const p = parsed(RunCompleted, payload);
  const run = p.workflow_run;
  const fact = {
    type: "run-completed" as const,
    repo: p.repository.full_name,
    runId: run.id,
    runAttempt: run.run_attempt,
    updatedAt: run.updated_at,
    conclusion: run.conclusion,
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
