// The in-cluster server's drain (GET /drain on its own socket, port 8081 in the pod, which the Service
// never routes to and the NetworkPolicy admits no one to): the pod's preStop hook calls it before the
// kubelet sends SIGTERM. workerd drains on SIGTERM with no timeout of its own, so an agent's open
// WebSocket would hold the pod until its grace period ends and it is killed; here every agent is told to
// reconnect (close 1012) and none is accepted any more, so SIGTERM finds nothing to wait for. Not
// reachable on Cloudflare: no socket or binding names this entrypoint there.
import { WorkerEntrypoint } from "cloudflare:workers";
import { settingsFor } from "../config/settings-for.ts";
import { ledgerFor, type WorkerEnv } from "../durable/ledger-for.ts";
import { logLine } from "../log.ts";

export class Drain extends WorkerEntrypoint<WorkerEnv> {
  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== "/drain") return Response.json({ error: "this socket answers GET /drain only" }, { status: 404 });
    const result = settingsFor(this.env, { quiet: true });
    // No agent can be attached to a server whose settings are not valid, or that is not in agent mode.
    if (!result.ok || result.settings.cluster.mode !== "agent") return Response.json({ closed: 0 });
    const closed = await ledgerFor(this.env, result.settings.ledgerName).drain();
    logLine({ msg: "drained", closed });
    return Response.json({ closed });
  }
}
