// The ledger's side of GET /agent: one WebSocket text message from the agent,
// checked field by field. Throws AgentMessageError naming the field and value.
// Pure: usable in workerd.
import type { AgentArcFields, AgentMessage, AgentRunner } from "./agent-protocol.ts";
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
  onlyKeys(value, ["namespace", "name", "uid", "creationTimestamp", "deletionTimestamp", "workflowRunId", "jobRepositoryName", "arc"], where);
  const runner: AgentRunner = {
    namespace: namespaceField(value, "namespace", where),
    name: nameField(value, "name", where),
    uid: uidField(value, "uid", where),
    creationTimestamp: timestampField(value, "creationTimestamp", where),
  };
  if (value["deletionTimestamp"] !== undefined) runner.deletionTimestamp = timestampField(value, "deletionTimestamp", where);
  if (value["workflowRunId"] !== undefined) runner.workflowRunId = positiveIntField(value, "workflowRunId", where);
  if (value["jobRepositoryName"] !== undefined) runner.jobRepositoryName = repositoryField(value, "jobRepositoryName", where);
  if (value["arc"] !== undefined) runner.arc = parseArcFields(value["arc"], `${where}.arc`);
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

function parseSnapshot(o: Fields): AgentMessage {
  onlyKeys(o, ["type", "id", "part", "parts", "runners"], "snapshot");
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
  return { type: "snapshot", id, part, parts, runners };
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
  const o = messageFields(text, ["hello", "snapshot", "upsert", "remove", "report", "read-report"]);
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
    case "read-report":
      return parseReadReport(o);
    default:
      return parseReport(o);
  }
}

/** A Failed runner's `arc` (issue 24): strings of bounded length, the time a time, nothing else (cleaned again where shown). */
function parseArcFields(value: unknown, where: string): AgentArcFields {
  if (!isFields(value)) fail(where, "an object", value);
  const bounds: Record<string, number> = { phase: 40, reason: 200, message: 1000, failedAt: 40, scaleSet: 63 };
  for (const [k, v] of Object.entries(value)) {
    const max = bounds[k];
    if (max === undefined) fail(`${where}.${k}`, "no such field", v);
    if (typeof v !== "string" || v === "" || Array.from(v).length > max) fail(`${where}.${k}`, `a string of 1 to ${max} characters`, v);
  }
  if (typeof value["phase"] !== "string") fail(`${where}.phase`, "a phase", undefined);
  if (value["failedAt"] !== undefined && !Number.isFinite(Date.parse(String(value["failedAt"])))) fail(`${where}.failedAt`, "a time", value["failedAt"]);
  return value as unknown as AgentArcFields;
}
