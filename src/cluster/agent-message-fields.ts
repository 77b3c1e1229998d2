// Field checks for the messages of agent-protocol.ts, shared by the parsers of
// both directions. Pure and without imports, so it runs in workerd and in Node.
// Every error names the field and shows the value it got (messages carry no secrets).

export class AgentMessageError extends Error {
  override readonly name = "AgentMessageError";
}

export type Fields = Record<string, unknown>;

/** A Worker receives WebSocket messages of at most 1 MiB; nothing larger is a valid message. */
export const MAX_MESSAGE_CHARS = 1024 * 1024;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
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

export function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

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

/** Refuse fields the protocol does not define: a typo must not pass silently. */
export function onlyKeys(o: Fields, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key)) fail(`${where}.${key}`, `no such field (allowed: ${allowed.join(", ")})`, o[key]);
  }
}

function text(o: Fields, key: string, where: string, max: number): string {
  const v = o[key];
  if (typeof v !== "string" || v.length === 0 || v.length > max) fail(`${where}.${key}`, `a string of 1 to ${max} characters`, v);
  return v;
}

export function namespaceValue(v: unknown, field: string): string {
  if (typeof v !== "string" || !DNS_LABEL.test(v)) fail(field, "a namespace name (DNS label)", v);
  return v;
}

/** A cluster's name (AGENT_CLUSTER): a DNS label like a namespace. */
export function clusterValue(v: unknown, field: string): string {
  if (typeof v !== "string" || !DNS_LABEL.test(v)) fail(field, "a cluster name (DNS label)", v);
  return v;
}

export function namespaceField(o: Fields, key: string, where: string): string {
  return namespaceValue(o[key], `${where}.${key}`);
}

export function nameField(o: Fields, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== "string" || v.length > 253 || !DNS_SUBDOMAIN.test(v)) fail(`${where}.${key}`, "an object name (DNS subdomain)", v);
  return v;
}

export function uidField(o: Fields, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== "string" || !UID.test(v)) fail(`${where}.${key}`, "an object uid", v);
  return v;
}

/** An id chosen by the sender (an order's or a snapshot's): 1 to 128 printable ASCII characters. */
export function idField(o: Fields, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== "string" || !TOKEN_LIKE_ID.test(v)) fail(`${where}.${key}`, "an id of 1 to 128 printable ASCII characters", v);
  return v;
}

export function timestampField(o: Fields, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== "string" || !RFC3339.test(v) || Number.isNaN(Date.parse(v))) fail(`${where}.${key}`, "an RFC 3339 timestamp", v);
  return v;
}

export function repositoryField(o: Fields, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== "string" || !REPOSITORY.test(v)) fail(`${where}.${key}`, 'a repository "owner/name"', v);
  return v;
}

/** A positive safe integer (a run id, a part number). */
export function positiveIntField(o: Fields, key: string, where: string, max = Number.MAX_SAFE_INTEGER): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1 || v > max) fail(`${where}.${key}`, `an integer from 1 to ${max}`, v);
  return v;
}

export function booleanField(o: Fields, key: string, where: string): boolean {
  const v = o[key];
  if (typeof v !== "boolean") fail(`${where}.${key}`, "true or false", v);
  return v;
}

export function textField(o: Fields, key: string, where: string, max = 2000): string {
  return text(o, key, where, max);
}

export function arrayField(o: Fields, key: string, where: string, max: number): unknown[] {
  const v = o[key];
  if (!Array.isArray(v) || v.length > max) fail(`${where}.${key}`, `an array of at most ${max} items`, v);
  return v;
}

export function oneOfField<T extends string>(o: Fields, key: string, where: string, values: readonly T[]): T {
  const v = o[key];
  if (typeof v !== "string" || !(values as readonly string[]).includes(v)) fail(`${where}.${key}`, `one of ${values.join(", ")}`, v);
  return v as T;
}
