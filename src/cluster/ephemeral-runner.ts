// One EphemeralRunner module for the Worker (direct mode, runner-answers.ts) and
// the agent (kube-runners.ts, watch-runners.ts): ARC's API coordinates and one
// reader of an EphemeralRunner object as the API server sends it (the same
// fields in ARC 0.13.1, 0.14.2 and master). Pure valibot: runs in workerd and Node.
import * as v from "valibot";
import { type ArcFields, arcFieldsOf } from "./arc-failure.ts";
import { issueText } from "./agent-message-fields.ts";

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
const EphemeralRunnerSchema = v.pipe(
  EphemeralRunnerObjectSchema,
  v.transform(({ metadata: m, status: s, ...rest }) => {
    const out: {
      namespace?: string;
      name: string;
      uid: string;
      creationTimestamp?: string;
      deletionTimestamp?: string;
      runnerId?: number;
      workflowRunId?: number;
      jobRepositoryName?: string;
    } & ArcFields = {
      name: m.name,
      uid: m.uid,
    };
    if (m.namespace) out.namespace = m.namespace;
    if (m.creationTimestamp) out.creationTimestamp = m.creationTimestamp;
    if (m.deletionTimestamp) out.deletionTimestamp = m.deletionTimestamp;
    if (s?.runnerId !== undefined) out.runnerId = s.runnerId;
    if (s?.workflowRunId !== undefined) out.workflowRunId = s.workflowRunId;
    if (s?.jobRepositoryName !== undefined) out.jobRepositoryName = s.jobRepositoryName;
    return Object.assign(out, arcFieldsOf({ metadata: m, status: s, ...rest }));
  }),
);
export type EphemeralRunner = v.InferOutput<typeof EphemeralRunnerSchema>;

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
export const readEphemeralRunner = (value: unknown, where = "EphemeralRunner"): EphemeralRunner => parse(EphemeralRunnerSchema, value, where);

/** A list page (its items unread: the caller decides what one bad item means). */
export const readEphemeralRunnerPage = (value: unknown, where = "EphemeralRunnerList"): EphemeralRunnerPage => parse(EphemeralRunnerPageSchema, value, where);
