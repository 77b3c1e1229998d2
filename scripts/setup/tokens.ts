// Tokens made here, from the operating system's CSPRNG, and each cluster's
// agent token derived as the Worker checks it (src/http/agent-token.ts).
import { randomBytes } from "node:crypto";
export { clusterToken } from "../../src/http/agent-token.ts";

/** 64 hex characters (256 bits): fits ADMIN_TOKEN (16+), METRICS_TOKEN (16+) and AGENT_TOKEN (32+). */
export function newToken(): string {
  return randomBytes(32).toString("hex");
}
