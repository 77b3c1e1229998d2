// The cluster a sweep (or the alarm) talks to, by CLUSTER_MODE: the API server
// directly, or the in-cluster agent. The judge never knows which.
import type { ClusterSettings } from "../config/settings.ts";
import { agentCluster, type AgentPort } from "./agent-cluster.ts";
import { ClusterError, createCluster, type Cluster } from "./ephemeral-runners.ts";

export function clusterFor(settings: ClusterSettings, opts: { onRequest?: () => void; agent?: AgentPort } = {}): Cluster {
  if (settings.mode === "direct") {
    return createCluster({ apiUrl: settings.apiUrl, token: settings.token, access: settings.access, onRequest: opts.onRequest });
  }
  return opts.agent ? agentCluster(opts.agent) : agentNotConnected();
}

// Agent mode without the ledger's agent link: a cluster that cannot be reached,
// where every runner is kept and every call is an error that says why.
function agentNotConnected(): Cluster {
  const error = (): ClusterError => new ClusterError(null, "CLUSTER_MODE=agent: no agent is connected");
  return {
    errorKind: "agent",
    listRunners: () => Promise.reject(error()),
    readRunner: () => Promise.reject(error()),
    deleteRunner: () => Promise.resolve({ kind: "failed", status: null, why: error().message }),
  };
}
