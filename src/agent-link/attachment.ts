// What rides on an agent's socket across hibernation (the Hibernation API keeps
// at most 2 KiB per socket): its connection id, cluster, hello and the snapshot
// in progress. The view and each namespace's freshness are in SQL.
import { DEFAULT_CLUSTER } from "../cluster/agent-protocol.ts";

export const AGENT_TAG = "agent";

export interface Attachment {
  /** This connection's own id: socket objects may be new ones after a hibernation. */
  conn: string;
  /** The cluster the Worker admitted it for. */
  cluster?: string;
  connectedAt: number;
  hello?: { version: string; namespaces: string[]; dryRun: boolean };
  /** The snapshot whose parts are arriving, the part expected next, and when part 1 arrived (ms). */
  incoming?: { id: string; next: number; parts: number; startedAt?: number };
  /** When the last complete snapshot arrived: from then on the view can be used (each namespace as whole as it says). */
  completeAt?: number;
}

export const CLUSTERS_KEY = "agent-clusters" as const;
export const clusterTag = (cluster: string): string => `cluster:${cluster}`;
export const connKey = (cluster: string) => `agent-conn:${cluster}` as const;
export const disconnectedKey = (cluster: string) => `agent-disconnected-at:${cluster}` as const;
export const clusterOfAttachment = (at: Attachment): string => at.cluster ?? DEFAULT_CLUSTER;

export function attachment(socket: WebSocket): Attachment {
  const at = socket.deserializeAttachment() as Attachment | null;
  return at ?? { conn: "unknown", connectedAt: Date.now() };
}
