// The agent's side of GET /agent: one WebSocket text message from the ledger,
// read with its schema (agent-protocol.ts). Throws AgentMessageError naming the
// field (its path) and the value. Pure: usable in workerd and Node.
import { DeleteOrderSchema, FinishOrderSchema, ReadOrderSchema, type LedgerMessage } from "./agent-protocol.ts";
import { messageFields, parseWith } from "./agent-message-fields.ts";

/** One ledger -> agent message (a delete order, a read or a finish order) from its JSON text. */
export function parseLedgerMessage(text: string): LedgerMessage {
  const o = messageFields(text, ["order", "read", "finish"]);
  if (o.type === "finish") return parseWith(FinishOrderSchema, o, "finish");
  return o.type === "read" ? parseWith(ReadOrderSchema, o, "read") : parseWith(DeleteOrderSchema, o, "order");
}
