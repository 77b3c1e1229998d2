// The names people know a job by (workflow, job, branch) and its run's page,
// read from a delivery or a REST answer. Repository authors write these
// strings: they are cleaned and bounded here, once, before they are stored;
// the pages escape them again when they show them.
import type { JobNames } from "../model/facts.ts";
import { cutText } from "../model/text-length.ts";

/** Longest name kept, in UTF-16 units (model/text-length.ts); longer ones end in an ellipsis. */
export const MAX_NAME_CHARS = 200;
/** A longer URL is dropped rather than cut (a cut URL leads somewhere else). */
const MAX_URL_CHARS = 1000;

// Control characters, and the bidirectional embeddings, overrides and isolates
// (U+202A..U+202E, U+2066..U+2069) and marks that can make text read as
// something else: none belongs in a workflow, job or branch name.
const UNSAFE_CHARS = "[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]";
const UNSAFE = new RegExp(UNSAFE_CHARS, "g");
const HAS_UNSAFE = new RegExp(UNSAFE_CHARS);

/** A name cleaned and bounded; undefined when there is none. */
export function boundName(value: unknown): string | undefined {
  return boundText(value, MAX_NAME_CHARS);
}

/** Any author- or controller-written text cleaned the same way, bounded to `max` UTF-16 units. */
export function boundText(value: unknown, max: number): string | undefined {
  if (typeof value !== "string") return undefined;
  // Tabs and newlines become spaces first; spaces left side by side by a dropped character become one.
  const clean = value.replace(/\s+/g, " ").replace(UNSAFE, "").replace(/ {2,}/g, " ").trim();
  if (clean === "") return undefined;
  // In UTF-16 units, as the agent protocol's schemas count (model/text-length.ts); never half a surrogate pair.
  return cutText(clean, max);
}

/** An https URL as given, or undefined: nothing else is ever made a link. */
export function httpsUrl(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > MAX_URL_CHARS || HAS_UNSAFE.test(value)) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.username === "" && url.password === "" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** A job's html_url is its run's page followed by /job/N or /jobs/N: the run's page, when it has that shape. */
function runUrlOfJob(jobUrl: unknown, runId: unknown): string | undefined {
  const url = httpsUrl(jobUrl);
  const m = url && /^(https:\/\/.+\/actions\/runs\/(\d+))\/jobs?\/\d+$/.exec(url);
  return m && String(runId) === m[2] ? m[1] : undefined;
}

/** Only the names that are there, so that a missing one never hides one known from another source. */
function present(names: JobNames): JobNames | undefined {
  const kept = Object.fromEntries(Object.entries(names).filter(([, v]) => v !== undefined)) as JobNames;
  return Object.keys(kept).length > 0 ? kept : undefined;
}

type Obj = Record<string, unknown>;

/** From a workflow_job payload's `workflow_job`, or a REST job (the same field names). */
export function namesOfJob(job: Obj): JobNames | undefined {
  return present({
    workflow: boundName(job.workflow_name),
    job: boundName(job.name),
    branch: boundName(job.head_branch),
    runUrl: runUrlOfJob(job.html_url, job.run_id),
  });
}

/** A run's html_url, when it is the page of that run (…/actions/runs/ID). */
function runUrlOfRun(url: unknown, runId: unknown): string | undefined {
  const https = httpsUrl(url);
  return https && new RegExp(`/actions/runs/${String(runId)}$`).test(https) ? https : undefined;
}

/** From a workflow_run payload's `workflow_run`, or a REST run. */
export function namesOfRun(run: Obj): JobNames | undefined {
  return present({ workflow: boundName(run.name), branch: boundName(run.head_branch), runUrl: runUrlOfRun(run.html_url, run.id) });
}
