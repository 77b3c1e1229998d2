// GET /agent: an in-cluster agent's one WebSocket (CLUSTER_MODE=agent). The
// cluster it names (X-Arc-Reaper-Cluster, "default" when absent) and its bearer
// are checked here, in constant time, before anything is upgraded; a refusal is
// counted in the isolate (door-tally.ts) and logged without the token. The upgrade itself is the ledger's,
// which holds the socket with the Hibernation API, one per cluster.
import type { Context } from "hono";
import { CLUSTER_HEADER, DEFAULT_CLUSTER } from "../cluster/agent-protocol.ts";
import type { Settings } from "../config/settings.ts";
import { ledgerFor } from "../durable/ledger-for.ts";
import { logLine } from "../log.ts";
import type { AppEnv } from "./app-env.ts";
import { admitsCluster } from "./agent-token.ts";
import { bearerToken } from "./constant-time.ts";
import { doorClient } from "./request-client.ts";
import { countAgentRefusal } from "./door-tally.ts";
import { DNS_LABEL } from "../model/shapes.ts";

export async function agentUpgrade(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  if (settings.cluster.mode !== "agent") {
    return c.json({ error: "GET /agent is for CLUSTER_MODE=agent; this arc-reaper runs CLUSTER_MODE=direct" }, 404);
  }
  const named = c.req.header(CLUSTER_HEADER)?.trim();
  const cluster = named === undefined || named === "" ? DEFAULT_CLUSTER : named;
  const token = bearerToken(c.req.header("authorization"));
  const validName = DNS_LABEL.test(cluster);
  if (!validName || !token || !(await admitsCluster(settings.cluster.agentToken, cluster, token))) {
    const why = !validName ? "the cluster is not a DNS label" : token ? "the token does not admit this cluster" : "no bearer token";
    // The label's values are bounded: an unknown name (anyone can send one) counts as "other".
    const known = validName && (cluster === DEFAULT_CLUSTER || settings.cluster.expectedClusters.includes(cluster));
    logLine({ msg: "agent refused", cluster: validName ? cluster : "(invalid)", why, client: doorClient(c).key });
    countAgentRefusal(c, settings.ledgerName, known ? cluster : "other");
    const error = validName
      ? `a valid agent token for cluster ${cluster} is required (AGENT_TOKEN admits only default; another cluster needs the token made for it)`
      : `${CLUSTER_HEADER} must be a cluster name (DNS label)`;
    return c.json({ error }, 401, { "www-authenticate": "Bearer" });
  }
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    return c.json({ error: "GET /agent expects a WebSocket upgrade" }, 426, { upgrade: "websocket" });
  }
  // The ledger tags the socket with the cluster as checked here, not as the agent spelled it.
  const headers = new Headers(c.req.raw.headers);
  headers.set(CLUSTER_HEADER, cluster);
  return ledgerFor(c.env, settings.ledgerName).fetch(new Request(c.req.raw.url, { method: "GET", headers }));
}
