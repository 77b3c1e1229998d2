// The fields of the messages of agent-protocol.ts as valibot schemas, shared by
// the parsers of both directions; pure (valibot only), so it runs in workerd and
// in Node. Every error names the field by its path and shows the value it got
// (messages carry no secrets): "hello.namespaces[0]: expected a namespace name
// (DNS label), got "Arc_Runners"".
import * as v from "valibot";
import { fitsText } from "../model/text-length.ts";
import { DNS_LABEL, DNS_SUBDOMAIN, isPlainObject } from "../model/shapes.ts";

export class AgentMessageError extends Error {
  override readonly name = "AgentMessageError";
}

export type Fields = Record<string, unknown>;

/** A Worker receives WebSocket messages of at most 1 MiB; nothing larger is a valid message. */
const MAX_MESSAGE_CHARS = 1024 * 1024;

const UID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const TOKEN_LIKE_ID = /^[\x21-\x7e]{1,128}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const REPOSITORY = /^[^\s/]{1,100}\/[^\s/]{1,100}$/;

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

export function fail(field: string, expected: string, value: unknown): never {
  throw new AgentMessageError(`${field}: expected ${expected}, got ${show(value)}`);
}

export const isFields = (value: unknown): value is Fields => isPlainObject(value);

/** The message as a JSON object with a string `type` among `types`. */
export function messageFields(text: string, types: readonly string[]): Fields & { type: string } {
  if (typeof text !== "string") fail("message", "a JSON text", text);
  if (text.length > MAX_MESSAGE_CHARS) {
    throw new AgentMessageError(`message: expected at most ${MAX_MESSAGE_CHARS} characters, got ${text.length}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new AgentMessageError(`message: not JSON (${e instanceof Error ? e.message : String(e)}): ${show(text)}`);
  }
  if (!isFields(parsed)) fail("message", "a JSON object", parsed);
  const type = parsed["type"];
  if (typeof type !== "string" || !types.includes(type)) fail("type", `one of ${types.map((t) => `"${t}"`).join(", ")}`, type);
  return parsed as Fields & { type: string };
}

/** What each field schema expects, in words: the message when the field is missing or wrong. */
const expectations = new WeakMap<object, string>();

/** A field schema whose every failure (wrong type, wrong shape, missing) reads "expected <what>". */
function field<S extends v.GenericSchema>(schema: S, what: string): S {
  expectations.set(schema, what);
  return schema;
}

const string = (what: string) => v.string(what);

export const namespaceSchema = field(
  v.pipe(string("a namespace name (DNS label)"), v.regex(DNS_LABEL, "a namespace name (DNS label)")),
  "a namespace name (DNS label)",
);
/** A cluster's name (AGENT_CLUSTER): a DNS label like a namespace. */
export const clusterSchema = field(
  v.pipe(string("a cluster name (DNS label)"), v.regex(DNS_LABEL, "a cluster name (DNS label)")),
  "a cluster name (DNS label)",
);
const NAME = "an object name (DNS subdomain)";
export const nameSchema = field(v.pipe(string(NAME), v.maxLength(253, NAME), v.regex(DNS_SUBDOMAIN, NAME)), NAME);
export const uidSchema = field(v.pipe(string("an object uid"), v.regex(UID, "an object uid")), "an object uid");
const ID = "an id of 1 to 128 printable ASCII characters";
/** An id chosen by the sender (an order's or a snapshot's). */
export const idSchema = field(v.pipe(string(ID), v.regex(TOKEN_LIKE_ID, ID)), ID);
const TIMESTAMP = "an RFC 3339 timestamp";
export const timestampSchema = field(
  v.pipe(
    string(TIMESTAMP),
    v.regex(RFC3339, TIMESTAMP),
    v.check((t) => !Number.isNaN(Date.parse(t)), TIMESTAMP),
  ),
  TIMESTAMP,
);
const REPO = 'a repository "owner/name"';
export const repositorySchema = field(v.pipe(string(REPO), v.regex(REPOSITORY, REPO)), REPO);
export const booleanSchema = field(v.boolean("true or false"), "true or false");

/** A positive safe integer (a run id, a part number) up to `max`. */
export function positiveIntSchema(max = Number.MAX_SAFE_INTEGER) {
  const what = `an integer from 1 to ${max}`;
  return field(v.pipe(v.number(what), v.safeInteger(what), v.minValue(1, what), v.maxValue(max, what)), what);
}

/** A whole number of ms from 0 to `max`. */
export function ageSchema(max: number) {
  const what = `an integer from 0 to ${max}`;
  return field(v.pipe(v.number(what), v.safeInteger(what), v.minValue(0, what), v.maxValue(max, what)), what);
}

export function textSchema(max = 2000) {
  const what = `a string of 1 to ${max} characters`;
  // The same length rule as the agent's cut (model/text-length.ts): UTF-16 units.
  return field(
    v.pipe(
      string(what),
      v.minLength(1, what),
      v.check((t) => fitsText(t, max), what),
    ),
    what,
  );
}

export function arraySchema<S extends v.GenericSchema>(item: S, max: number, min = 0, fewer = "") {
  const what = `an array of at most ${max} items`;
  return field(v.pipe(v.array(item, what), v.maxLength(max, what), v.minLength(min, fewer || what)), what);
}

export function oneOfSchema<const T extends readonly [string, ...string[]]>(values: T) {
  const what = `one of ${values.join(", ")}`;
  return field(v.picklist(values, what), what);
}

/** An object with exactly these fields (optional ones may be absent): an unknown field is refused, a typo must not pass silently. */
export function strictFields<E extends v.ObjectEntries>(entries: E) {
  return v.strictObject(entries, (issue) => {
    if (issue.expected === "never") return `no such field (allowed: ${Object.keys(entries).join(", ")})`;
    const key = issue.path?.at(-1)?.key;
    if (issue.input === undefined && typeof key === "string" && Object.hasOwn(entries, key)) return expectations.get(entries[key]!) ?? "a value";
    return "an object";
  });
}

/** `value` read with `schema`; throws AgentMessageError naming the field (`where` and the path inside) and the value. */
export function parseWith<S extends v.GenericSchema>(schema: S, value: unknown, where: string): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (result.success) return result.output;
  throw new AgentMessageError(issueText(result.issues[0], where));
}

/** One issue in words: "<where><path>: expected <message>, got <value>" (shared with ephemeral-runner.ts). */
export function issueText(issue: v.BaseIssue<unknown>, where: string): string {
  const path = issue.path ?? [];
  const at = where + path.map((p) => (typeof p.key === "number" ? `[${p.key}]` : `.${String(p.key)}`)).join("");
  // An unknown field: show its value, not its name (the name is in the path).
  const got = issue.expected === "never" ? path.at(-1)?.value : issue.input;
  return `${at}: expected ${issue.message}, got ${show(got)}`;
}
