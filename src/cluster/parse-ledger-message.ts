// The agent's side of GET /agent: one WebSocket text message from the ledger,
// checked field by field. Throws AgentMessageError naming the field and value.
// Pure: usable in workerd and Node.
import type { LedgerMessage } from "./agent-protocol.ts";
import { idField, messageFields, nameField, namespaceField, onlyKeys, positiveIntField, textField, uidField } from "./agent-message-fields.ts";

export { AgentMessageError } from "./agent-message-fields.ts";

/** One ledger -> agent message (a delete order or a read) from its JSON text. */
export function parseLedgerMessage(text: string): LedgerMessage {
  const o = messageFields(text, ["order", "read"]);
  if (o.type === "read") {
    onlyKeys(o, ["type", "id", "namespace", "name"], "read");
    return { type: "read", id: idField(o, "id", "read"), namespace: namespaceField(o, "namespace", "read"), name: nameField(o, "name", "read") };
  }
  onlyKeys(o, ["type", "id", "namespace", "name", "uid", "runId", "reason"], "order");
  return {
    type: "order",
    id: idField(o, "id", "order"),
    namespace: namespaceField(o, "namespace", "order"),
    name: nameField(o, "name", "order"),
    uid: uidField(o, "uid", "order"),
    runId: positiveIntField(o, "runId", "order"),
    reason: textField(o, "reason", "order"),
  };
}
