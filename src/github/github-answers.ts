// What GitHub answers, read by a schema before anything is taken from it. An
// answer that is not the API's (a 200 `{}`, an HTML page, a job without a
// status) is an error the caller keeps and counts, never a job, a run or an
// empty list. The shapes ask no more than GitHub's OpenAPI description
// requires (test/node/github/github-answers-openapi.test.ts holds them to it) and
// leave the fields they do not read alone (loose objects).
import * as v from "valibot";
import { namesOfJob, namesOfRun } from "./job-names.ts";
import type { JobNames } from "../model/facts.ts";

const id = v.pipe(v.number(), v.integer(), v.minValue(1));
const time = v.pipe(
  v.string(),
  v.check((s) => !Number.isNaN(Date.parse(s)), "must be a timestamp"),
);
const optionalText = v.nullish(v.string());

/** A job's status as GitHub's description lists them. */
const JOB_STATUSES = ["queued", "in_progress", "completed", "waiting", "requested", "pending"] as const;

export const JobAnswer = v.looseObject({
  id,
  run_id: id,
  // Not among the required fields: 0 when absent (unknown), never a guessed 1.
  run_attempt: v.optional(id),
  status: v.picklist(JOB_STATUSES),
  conclusion: v.nullable(v.string()),
  started_at: v.nullish(time),
  completed_at: v.nullable(time),
  runner_name: v.nullable(v.string()),
  // The registration that took the job: null (or 0, as some servers send) before one did.
  runner_id: v.nullish(v.pipe(v.number(), v.safeInteger())),
  name: v.optional(v.string()),
  workflow_name: optionalText,
  head_branch: optionalText,
  html_url: optionalText,
});

export const RunAnswer = v.looseObject({
  id,
  run_attempt: v.optional(id),
  status: v.nullable(v.string()),
  conclusion: v.nullable(v.string()),
  updated_at: time,
  name: optionalText,
  head_branch: optionalText,
  html_url: optionalText,
});

export const RunJobsAnswer = v.looseObject({ total_count: v.pipe(v.number(), v.integer()), jobs: v.array(JobAnswer) });

const ListedRunAnswer = v.looseObject({ id, run_attempt: v.optional(id), status: v.nullable(v.string()) });
export const RunsAnswer = v.looseObject({ total_count: v.pipe(v.number(), v.integer()), workflow_runs: v.array(ListedRunAnswer) });

export const InstallationAnswer = v.looseObject({ id, suspended_at: v.nullish(v.string()) });

export const TokenAnswer = v.looseObject({ token: v.pipe(v.string(), v.nonEmpty()), expires_at: time });

/** A delivery as the listing shows it, its id already quoted (it exceeds 2^53). */
const DeliveryAnswer = v.looseObject({
  id: v.pipe(v.string(), v.regex(/^\d+$/)),
  guid: v.string(),
  delivered_at: time,
  redelivery: v.boolean(),
  status_code: v.pipe(v.number(), v.integer()),
  event: v.string(),
  action: v.nullable(v.string()),
});
export const DeliveriesAnswer = v.array(DeliveryAnswer);

/** The answer as `schema` reads it, or null and the first thing wrong with it in words ("status: …"). */
export function readAnswer<S extends v.GenericSchema>(schema: S, data: unknown): { ok: true; value: v.InferOutput<S> } | { ok: false; why: string } {
  const result = v.safeParse(schema, data, { abortEarly: true });
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const path = v.getDotPath(issue);
  const shown = typeof data === "string" ? `a text of ${data.length} characters, not JSON` : path ? `${path}: ${issue.message}` : issue.message;
  return { ok: false, why: shown };
}

export interface GithubJob {
  id: number;
  runId: number;
  /** 0 when GitHub did not say: then no run completion covers the job. */
  runAttempt: number;
  status: string;
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
  runnerName: string | null;
  /** The registration that took it (`runner_id`); absent: none yet, or GitHub sent null or 0. */
  runnerId?: number;
  names?: JobNames;
}

export function toJob(data: v.InferOutput<typeof JobAnswer>): GithubJob {
  return {
    id: data.id,
    runId: data.run_id,
    runAttempt: data.run_attempt ?? 0,
    status: data.status,
    conclusion: data.conclusion,
    startedAt: data.started_at ?? null,
    completedAt: data.completed_at,
    runnerName: data.runner_name,
    ...(typeof data.runner_id === "number" && data.runner_id > 0 ? { runnerId: data.runner_id } : {}),
    names: namesOfJob(data),
  };
}

export interface GithubRun {
  id: number;
  runAttempt: number;
  status: string;
  conclusion: string | null;
  updatedAt: string;
  names?: JobNames;
}

export function toRun(data: v.InferOutput<typeof RunAnswer>): GithubRun {
  return {
    id: data.id,
    runAttempt: data.run_attempt ?? 1,
    status: data.status ?? "",
    conclusion: data.conclusion,
    updatedAt: data.updated_at,
    names: namesOfRun(data),
  };
}
