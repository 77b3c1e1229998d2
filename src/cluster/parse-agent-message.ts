// The ledger's side of GET /agent: one WebSocket text message from the agent,
// read with its schema (agent-protocol.ts), then the checks across fields no
// schema of one field can make. Throws AgentMessageError naming the field (its
// path) and the value. Pure: usable in workerd.
import { AGENT_MESSAGE_SCHEMAS, AgentRunnerSchema, type AgentMessage, type AgentRunner } from "./agent-protocol.ts";
import { fail, messageFields, parseWith } from "./agent-message-fields.ts";

export { AgentMessageError } from "./agent-message-fields.ts";
export { MAX_RUNNERS_PER_PART } from "./agent-protocol.ts";

const TYPES = Object.keys(AGENT_MESSAGE_SCHEMAS) as (keyof typeof AGENT_MESSAGE_SCHEMAS)[];

export function parseAgentRunner(value: unknown, where: string): AgentRunner {
  return parseWith(AgentRunnerSchema, value, where);
}

function once<T>(items: readonly T[], key: (item: T) => string, field: string, expected: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) fail(field, expected, k);
    seen.add(k);
  }
}

/** One agent -> ledger message from its JSON text; throws AgentMessageError on anything else. */
export function parseAgentMessage(text: string): AgentMessage {
  const o = messageFields(text, TYPES);
  const type = o.type as keyof typeof AGENT_MESSAGE_SCHEMAS;
  const m = parseWith(AGENT_MESSAGE_SCHEMAS[type], o, type) as AgentMessage;
  switch (m.type) {
    case "hello":
      once(m.namespaces, (ns) => ns, "hello.namespaces", "no namespace twice");
      break;
    case "snapshot":
      if (m.part > m.parts) fail("snapshot.part", `an integer from 1 to ${m.parts}`, m.part);
      once(m.runners, (r) => `${r.namespace}/${r.name}`, "snapshot.runners", "each namespace/name once");
      if (m.namespaces !== undefined) {
        if (m.part !== m.parts) fail("snapshot.namespaces", "only on the last part", m.namespaces);
        once(m.namespaces, (n) => n.namespace, "snapshot.namespaces", "each namespace once");
      }
      break;
    case "namespaces":
      once(m.namespaces, (n) => n.namespace, "namespaces.namespaces", "each namespace once");
      break;
  }
  return m;
}
