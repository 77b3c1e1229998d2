// One secret on the Worker, one token per cluster: the token for cluster C is
// the hex HMAC-SHA256 of C keyed with AGENT_TOKEN, so `printf %s C | openssl
// dgst -sha256 -hmac "$AGENT_TOKEN"` makes it and a new cluster needs no Worker
// change. AGENT_TOKEN itself admits the cluster "default" only, so a
// single-cluster install keeps working unchanged.
import { DEFAULT_CLUSTER } from "../cluster/agent-protocol.ts";
import { constantTimeEqual } from "./constant-time.ts";

/** The token an agent of `cluster` presents (hex, lowercase). */
export async function clusterToken(agentToken: string, cluster: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(agentToken), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(cluster)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether `presented` admits an agent of `cluster`; both comparisons run, in constant time. */
export async function admitsCluster(agentToken: string, cluster: string, presented: string): Promise<boolean> {
  const own = constantTimeEqual(presented.toLowerCase(), await clusterToken(agentToken, cluster));
  const master = constantTimeEqual(presented, agentToken) && cluster === DEFAULT_CLUSTER;
  return own || master;
}
