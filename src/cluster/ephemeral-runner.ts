// One EphemeralRunner module for the Worker (direct mode, runner-answers.ts) and
// the agent (kube-runners.ts, watch-runners.ts): ARC's API coordinates and one
// reader of an EphemeralRunner object as the API server sends it (the same
// fields in ARC 0.13.1, 0.14.2 and master). Pure valibot: runs in workerd and Node.
import * as v from "valibot";
import { type ArcFields, arcFieldsOf } from "./arc-failure.ts";
import { issueText } from "./agent-message-fields.ts";
import { isPlainObject as isObj } from "../model/shapes.ts";

export const GROUP = "actions.github.com";
export const VERSION = "v1alpha1";
export const PLURAL = "ephemeralrunners";
export const PAGE_SIZE = 500;

/** An EphemeralRunner (or a page of them) that cannot be read; the message names the field by its path. */
export class EphemeralRunnerError extends Error {
  override readonly name = "EphemeralRunnerError";
}

const NON_EMPTY = "a non-empty string";
const nonEmpty = v.pipe(v.string(NON_EMPTY), v.minLength(1, NON_EMPTY));
const timestamp = v.optional(v.nullable(v.string("a timestamp string")));
/**
 * The run a runner is busy with: a positive safe integer. Anything else (absent, 0, negative, a fraction,
 * a string, beyond 2^53) is no run: the runner reads as idle, and an idle runner is never deleted.
 */
const runId = v.fallback(v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1))), undefined);
/**
 * `status.runnerId`, the registration ARC's controller made (from the JIT config, before any job): a positive
 * safe integer. Anything else (absent, 0 before the controller wrote it) is no id: identity then falls back
 * to name, run and uid, never to "another registration".
 */
const registrationId = runId;
const repository = v.fallback(v.optional(v.pipe(v.string(), v.minLength(1))), undefined);

/** An object whose missing required field reads "expected <what that field is>", not "an object". */
function objectOf<E extends v.ObjectEntries>(entries: E, required: Record<string, string> = {}) {
  return v.looseObject(entries, (issue) => {
    const key = issue.path?.at(-1)?.key;
    return issue.input === undefined && typeof key === "string" && required[key] ? required[key] : "an object";
  });
}

const EphemeralRunnerObjectSchema = objectOf(
  {
    metadata: objectOf(
      { namespace: v.optional(v.string("a string")), name: nonEmpty, uid: nonEmpty, creationTimestamp: timestamp, deletionTimestamp: timestamp },
      { name: NON_EMPTY, uid: NON_EMPTY },
    ),
    status: v.optional(v.nullable(objectOf({ runnerId: registrationId, workflowRunId: runId, jobRepositoryName: repository }))),
  },
  { metadata: "an object" },
);

/** What both sides read of one EphemeralRunner: identity, times, its job's run and repository, and ARC's own fields. */
export type EphemeralRunner = {
  namespace?: string;
  name: string;
  uid: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  runnerId?: number;
  workflowRunId?: number;
  jobRepositoryName?: string;
} & ArcFields;

/** The fields the schema (or the fast path) found valid, before ARC's own are added. */
interface ReadFields {
  name: string;
  uid: string;
  namespace?: string | undefined;
  creationTimestamp?: string | null | undefined;
  deletionTimestamp?: string | null | undefined;
  runnerId?: number | undefined;
  workflowRunId?: number | undefined;
  jobRepositoryName?: string | undefined;
}

/** The EphemeralRunner of valid fields and the object they came from (ARC's fields are read from it): one builder for both paths. */
function runnerOf(f: ReadFields, obj: unknown): EphemeralRunner {
  const out: EphemeralRunner = { name: f.name, uid: f.uid };
  if (f.namespace) out.namespace = f.namespace;
  if (f.creationTimestamp) out.creationTimestamp = f.creationTimestamp;
  if (f.deletionTimestamp) out.deletionTimestamp = f.deletionTimestamp;
  if (f.runnerId !== undefined) out.runnerId = f.runnerId;
  if (f.workflowRunId !== undefined) out.workflowRunId = f.workflowRunId;
  if (f.jobRepositoryName !== undefined) out.jobRepositoryName = f.jobRepositoryName;
  return Object.assign(out, arcFieldsOf(obj));
}

const EphemeralRunnerSchema = v.pipe(
  EphemeralRunnerObjectSchema,
  v.transform(({ metadata: m, status: s, ...rest }) =>
    runnerOf(
      {
        name: m.name,
        uid: m.uid,
        namespace: m.namespace,
        creationTimestamp: m.creationTimestamp,
        deletionTimestamp: m.deletionTimestamp,
        runnerId: s?.runnerId,
        workflowRunId: s?.workflowRunId,
        jobRepositoryName: s?.jobRepositoryName,
      },
      { metadata: m, status: s, ...rest },
    ),
  ),
);

// The schema's rules for the fields it falls back on (runId, registrationId, repository above): the value, or no value.
const positiveSafeInteger = (x: unknown): number | undefined => (typeof x === "number" && Number.isSafeInteger(x) && x >= 1 ? x : undefined);
const nonEmptyText = (x: unknown): string | undefined => (typeof x === "string" && x.length >= 1 ? x : undefined);
const isTimestamp = (x: unknown): x is string | null | undefined => x === undefined || x === null || typeof x === "string";

/**
 * The schema's answer for an object that passes it, without running valibot (its per-item run and the
 * garbage it leaves were a sixth of a steady direct-mode sweep's CPU at 10,000 runners): undefined for
 * any object it does not take on sight, which the schema then reads, and names what is wrong with.
 * Field for field and in the same order as the schema's output (test/unit/ephemeral-runner-fast.test.ts).
 */
function readUsual(value: unknown): EphemeralRunner | undefined {
  if (!isObj(value)) return undefined;
  const m = value["metadata"];
  const s = value["status"];
  if (!isObj(m) || (s !== undefined && s !== null && !isObj(s))) return undefined;
  const { name, uid, namespace, creationTimestamp, deletionTimestamp } = m;
  if (typeof name !== "string" || name === "" || typeof uid !== "string" || uid === "") return undefined;
  if ((namespace !== undefined && typeof namespace !== "string") || !isTimestamp(creationTimestamp) || !isTimestamp(deletionTimestamp)) return undefined;
  return runnerOf(
    {
      name,
      uid,
      namespace,
      creationTimestamp,
      deletionTimestamp,
      runnerId: positiveSafeInteger(s?.["runnerId"]),
      workflowRunId: positiveSafeInteger(s?.["workflowRunId"]),
      jobRepositoryName: nonEmptyText(s?.["jobRepositoryName"]),
    },
    value,
  );
}

/** A list page: its items (each read on its own) and where the next page and a watch start. */
const EphemeralRunnerPageSchema = objectOf(
  {
    items: v.array(v.unknown(), "an array"),
    metadata: v.optional(objectOf({ continue: v.optional(v.string("a string")), resourceVersion: v.optional(v.string("a string")) })),
  },
  { items: "an array" },
);
export type EphemeralRunnerPage = v.InferOutput<typeof EphemeralRunnerPageSchema>;

function parse<S extends v.GenericSchema>(schema: S, value: unknown, where: string): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (result.success) return result.output;
  throw new EphemeralRunnerError(issueText(result.issues[0], where));
}

/** One EphemeralRunner; throws EphemeralRunnerError naming the field ("items[1].metadata.uid: expected …"). */
export const readEphemeralRunner = (value: unknown, where = "EphemeralRunner"): EphemeralRunner =>
  readUsual(value) ?? parse(EphemeralRunnerSchema, value, where);

/** The schema alone: what readEphemeralRunner must answer for every value (its fast path is held to it by a test). */
export const readEphemeralRunnerBySchema = (value: unknown, where = "EphemeralRunner"): EphemeralRunner => parse(EphemeralRunnerSchema, value, where);

/** A list page (its items unread: the caller decides what one bad item means). */
export const readEphemeralRunnerPage = (value: unknown, where = "EphemeralRunnerList"): EphemeralRunnerPage => parse(EphemeralRunnerPageSchema, value, where);
