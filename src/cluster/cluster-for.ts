// The cluster a sweep (or the alarm) talks to in direct mode: the API server over HTTPS.
// Agent mode binds each watched cluster to its agent's view instead (the ledger's agent link).
import type { ClusterSettings } from "../config/settings.ts";
import { createCluster, type Cluster, type ClusterOptions } from "./ephemeral-runners.ts";

export function clusterFor(settings: Extract<ClusterSettings, { mode: "direct" }>, opts: Pick<ClusterOptions, "onRequest" | "tables"> = {}): Cluster {
  return createCluster({
    apiUrl: settings.apiUrl,
    token: settings.token,
    access: settings.access,
    onRequest: opts.onRequest,
    ...(opts.tables ? { tables: opts.tables } : {}),
  });
}
