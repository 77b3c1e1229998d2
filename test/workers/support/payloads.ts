// Real webhook payloads from @octokit/webhooks-examples (handed over by the
// global setup), with only the fields a case needs set on top.
import { inject } from "vitest";

const examples = inject("webhookExamples");

type Json = Record<string, unknown>;

function example(event: string, action: string, pick: (p: Json) => boolean = () => true): Json {
  const entry = examples.find((e) => e.name === event);
  const found = entry?.examples.find((p) => p.action === action && pick(p));
  if (!found) throw new Error(`no ${event}.${action} example in @octokit/webhooks-examples`);
  return structuredClone(found);
}

export interface JobPayloadOptions {
  runner?: string | null;
  repo?: string;
  runId?: number;
  runAttempt?: number;
  jobId?: number;
  startedAt?: string;
  completedAt?: string;
  conclusion?: string;
  runnerGroup?: string;
  /** workflow_job.runner_id: the registration that took the job (default: the example's). */
  runnerId?: number | null;
  installationId?: number;
  /** Raw fields set on workflow_job as they are (names, html_url): hostile values included. */
  fields?: Json;
}

export function workflowJobPayload(action: "queued" | "in_progress" | "completed", o: JobPayloadOptions = {}): Json {
  // The examples' in_progress payload is the self-hosted one; others come from GitHub-hosted jobs.
  const payload = example("workflow_job", action);
  const job = payload.workflow_job as Json;
  if (o.runner !== undefined) job.runner_name = o.runner;
  if (o.runId !== undefined) job.run_id = o.runId;
  if (o.runAttempt !== undefined) job.run_attempt = o.runAttempt;
  if (o.jobId !== undefined) job.id = o.jobId;
  if (o.runnerId !== undefined) job.runner_id = o.runnerId;
  if (o.startedAt !== undefined) job.started_at = o.startedAt;
  if (action === "completed") {
    job.completed_at = o.completedAt ?? job.completed_at;
    job.conclusion = o.conclusion ?? job.conclusion;
  }
  job.runner_group_name = o.runnerGroup ?? "arc-runners";
  Object.assign(job, o.fields ?? {});
  job.status = action;
  if (o.repo !== undefined) (payload.repository as Json).full_name = o.repo;
  if (o.installationId !== undefined) payload.installation = { id: o.installationId, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==" };
  return payload;
}

export interface RunPayloadOptions {
  repo?: string;
  runId?: number;
  runAttempt?: number;
  updatedAt?: string;
  conclusion?: string;
  installationId?: number;
  /** Raw fields set on workflow_run as they are (name, head_branch, html_url). */
  fields?: Json;
}

export function workflowRunPayload(o: RunPayloadOptions = {}): Json {
  const payload = example("workflow_run", "completed");
  const run = payload.workflow_run as Json;
  if (o.runId !== undefined) {
    run.id = o.runId;
    run.html_url = String(run.html_url).replace(/\/\d+$/, `/${o.runId}`); // the page of this run, as GitHub would send it
  }
  if (o.runAttempt !== undefined) run.run_attempt = o.runAttempt;
  if (o.updatedAt !== undefined) run.updated_at = o.updatedAt;
  run.status = "completed";
  run.conclusion = o.conclusion ?? run.conclusion ?? "success";
  Object.assign(run, o.fields ?? {});
  if (o.repo !== undefined) {
    (payload.repository as Json).full_name = o.repo;
    (run.repository as Json).full_name = o.repo;
  }
  if (o.installationId !== undefined) payload.installation = { id: o.installationId, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==" };
  return payload;
}

export function pingPayload(): Json {
  const entry = examples.find((e) => e.name === "ping");
  return structuredClone(entry!.examples[0]!);
}
