// The ledger's side of GET /agent: one WebSocket text message from the agent,
// checked field by field. Throws AgentMessageError naming the field and value.
// Pure: usable in workerd.
import type { AgentMessage, AgentRunner, NamespaceFreshness } from "./agent-protocol.ts";
import { OUTCOMES } from "./agent-protocol.ts";
import {
  arrayField,
  booleanField,
  clusterValue,
  fail,
  idField,
  isFields,
  messageFields,
  nameField,
  namespaceField,
  namespaceValue,
  oneOfField,
  onlyKeys,
  positiveIntField,
  repositoryField,
  textField,
  timestampField,
  uidField,
  type Fields,
} from "./agent-message-fields.ts";

export { AgentMessageError } from "./agent-message-fields.ts";

/** At most this many runners in one snapshot part (a part stays well under 1 MiB). */
export const MAX_RUNNERS_PER_PART = 1000;
const MAX_NAMESPACES = 100;
const MAX_PARTS = 10_000;

export function parseAgentRunner(value: unknown, where: string): AgentRunner {
  if (!isFields(value)) fail(where, "an object", value);
  onlyKeys(value, ["namespace", "name", "uid", "creationTimestamp", "deletionTimestamp", "workflowRunId", "jobRepositoryName"], where);
  const runner: AgentRunner = {
    namespace: namespaceField(value, "namespace", where),
    name: nameField(value, "name", where),
    uid: uidField(value, "uid", where),
    creationTimestamp: timestampField(value, "creationTimestamp", where),
  };
  if (value["deletionTimestamp"] !== undefined) runner.deletionTimestamp = timestampField(value, "deletionTimestamp", where);
  if (value["workflowRunId"] !== undefined) runner.workflowRunId = positiveIntField(value, "workflowRunId", where);
  if (value["jobRepositoryName"] !== undefined) runner.jobRepositoryName = repositoryField(value, "jobRepositoryName", where);
  return runner;
}

function parseHello(o: Fields): AgentMessage {
  onlyKeys(o, ["type", "version", "namespaces", "dryRun", "cluster"], "hello");
  const list = arrayField(o, "namespaces", "hello", MAX_NAMESPACES);
  if (list.length === 0) fail("hello.namespaces", "at least one namespace", list);
  const namespaces = list.map((ns, i) => namespaceValue(ns, `hello.namespaces[${i}]`));
  const dup = namespaces.find((ns, i) => namespaces.indexOf(ns) !== i);
  if (dup !== undefined) fail("hello.namespaces", "no namespace twice", dup);
  const hello: AgentMessage = { type: "hello", version: textField(o, "version", "hello", 64), namespaces, dryRun: booleanField(o, "dryRun", "hello") };
  if (o["cluster"] !== undefined) hello.cluster = clusterValue(o["cluster"], "hello.cluster");
  return hello;
}

/** An age in ms: a whole number from 0 to about 10 years. */
const MAX_AGE_MS = 10 * 365 * 86_400_000;

function parseFreshness(value: unknown, where: string): NamespaceFreshness[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_NAMESPACES) fail(where, `an array of 1 to ${MAX_NAMESPACES} namespaces`, value);
  const seen = new Set<string>();
  return value.map((item, i) => {
    const at = `${where}[${i}]`;
    if (!isFields(item)) fail(at, "an object", item);
    onlyKeys(item, ["namespace", "wholeMsAgo", "unreadable"], at);
    const f: NamespaceFreshness = { namespace: namespaceField(item, "namespace", at) };
    if (seen.has(f.namespace)) fail(`${at}.namespace`, "each namespace once", f.namespace);
    seen.add(f.namespace);
    const age = item["wholeMsAgo"];
    if (age !== undefined) {
      if (typeof age !== "number" || !Number.isSafeInteger(age) || age < 0 || age > MAX_AGE_MS) fail(`${at}.wholeMsAgo`, `an integer from 0 to ${MAX_AGE_MS}`, age);
      f.wholeMsAgo = age;
    }
    if (item["unreadable"] !== undefined) f.unreadable = textField(item, "unreadable", at, 500);
    return f;
  });
}

function parseSnapshot(o: Fields): AgentMessage {
  onlyKeys(o, ["type", "id", "part", "parts", "runners", "namespaces"], "snapshot");
  const id = idField(o, "id", "snapshot");
  const parts = positiveIntField(o, "parts", "snapshot", MAX_PARTS);
  const part = positiveIntField(o, "part", "snapshot", parts);
  const list = arrayField(o, "runners", "snapshot", MAX_RUNNERS_PER_PART);
  const runners = list.map((r, i) => parseAgentRunner(r, `snapshot.runners[${i}]`));
  const seen = new Set<string>();
  for (const r of runners) {
    const key = `${r.namespace}/${r.name}`;
    if (seen.has(key)) fail("snapshot.runners", "each namespace/name once", key);
    seen.add(key);
  }
  const snapshot: AgentMessage = { type: "snapshot", id, part, parts, runners };
  if (o["namespaces"] !== undefined) {
    if (part !== parts) fail("snapshot.namespaces", "only on the last part", o["namespaces"]);
    snapshot.namespaces = parseFreshness(o["namespaces"], "snapshot.namespaces");
  }
  return snapshot;
}

function parseRemove(o: Fields): AgentMessage {
  onlyKeys(o, ["type", "namespace", "name", "uid"], "remove");
  return { type: "remove", namespace: namespaceField(o, "namespace", "remove"), name: nameField(o, "name", "remove"), uid: uidField(o, "uid", "remove") };
}

function parseReport(o: Fields): AgentMessage {
  onlyKeys(o, ["type", "id", "uid", "outcome", "why"], "report");
  return {
    type: "report",
    id: idField(o, "id", "report"),
    uid: uidField(o, "uid", "report"),
    outcome: oneOfField(o, "outcome", "report", OUTCOMES),
    why: textField(o, "why", "report"),
  };
}

function parseReadReport(o: Fields): AgentMessage {
  onlyKeys(o, ["type", "id", "runner", "why"], "read-report");
  const id = idField(o, "id", "read-report");
  const runner = o["runner"] === null ? null : parseAgentRunner(o["runner"], "read-report.runner");
  const message: AgentMessage = { type: "read-report", id, runner };
  if (o["why"] !== undefined) message.why = textField(o, "why", "read-report");
  return message;
}

/** One agent -> ledger message from its JSON text; throws AgentMessageError on anything else. */
export function parseAgentMessage(text: string): AgentMessage {
  const o = messageFields(text, ["hello", "snapshot", "namespaces", "upsert", "remove", "report", "read-report"]);
  switch (o.type) {
    case "hello":
      return parseHello(o);
    case "snapshot":
      return parseSnapshot(o);
    case "upsert":
      onlyKeys(o, ["type", "runner"], "upsert");
      return { type: "upsert", runner: parseAgentRunner(o["runner"], "upsert.runner") };
    case "remove":
      return parseRemove(o);
    case "namespaces":
      onlyKeys(o, ["type", "namespaces"], "namespaces");
      return { type: "namespaces", namespaces: parseFreshness(o["namespaces"], "namespaces.namespaces") };
    case "read-report":
      return parseReadReport(o);
    default:
      return parseReport(o);
  }
}
