// GET /agent: the in-cluster agent's one WebSocket (CLUSTER_MODE=agent). The
// bearer is checked here, in constant time, before anything is upgraded; the
// upgrade itself is the ledger's, which holds the socket with the Hibernation API.
import type { Context } from "hono";
import type { Settings } from "../config/settings.ts";
import { ledgerFor } from "../ledger/ledger-for.ts";
import type { AppEnv } from "./app-env.ts";
import { bearerToken, constantTimeEqual } from "./constant-time.ts";

export async function agentUpgrade(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  if (settings.cluster.mode !== "agent") {
    return c.json({ error: "GET /agent is for CLUSTER_MODE=agent; this arc-reaper runs CLUSTER_MODE=direct" }, 404);
  }
  const token = bearerToken(c.req.header("authorization"));
  if (!token || !constantTimeEqual(token, settings.cluster.agentToken)) {
    return c.json({ error: "a valid AGENT_TOKEN bearer token is required" }, 401, { "www-authenticate": "Bearer" });
  }
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    return c.json({ error: "GET /agent expects a WebSocket upgrade" }, 426, { upgrade: "websocket" });
  }
  return ledgerFor(c.env, settings.ledgerName).fetch(c.req.raw);
}
