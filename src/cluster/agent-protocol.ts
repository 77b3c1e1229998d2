// The messages between the in-cluster agent (src/agent) and the ledger, one
// JSON object per WebSocket text message. The agent dials out to GET /agent
// with `Authorization: Bearer AGENT_TOKEN`; nothing dials in.

/** What the judge needs of one EphemeralRunner, as the agent's watch cache holds it. */
export interface AgentRunner {
  namespace: string;
  name: string;
  uid: string;
  creationTimestamp: string;
  deletionTimestamp?: string;
  workflowRunId?: number;
  jobRepositoryName?: string;
}

/** Agent -> ledger. */
export type AgentMessage =
  /** First message after every connect. */
  | { type: "hello"; version: string; namespaces: string[]; dryRun: boolean }
  /** The whole view of the agent's namespaces: after every connect and after every fresh list (410). */
  | { type: "snapshot"; runners: AgentRunner[] }
  /** A watch event: the runner was added or changed. */
  | { type: "upsert"; runner: AgentRunner }
  /** A watch event: the runner left the cluster. */
  | { type: "remove"; namespace: string; name: string; uid: string }
  /** The outcome of an order. */
  | { type: "report"; id: string; uid: string; outcome: OrderOutcome; why: string };

/**
 * deleted: the API server accepted the DELETE (uid precondition).
 * gone: 404, nothing to delete.
 * refused: the agent's own check failed (other uid, being deleted, other run, foreign namespace, dry run).
 * failed: the API server answered an error (the Status message is in why).
 */
export type OrderOutcome = "deleted" | "gone" | "refused" | "failed";

/** Ledger -> agent: delete exactly this object, if the agent's view still agrees. Idempotent by uid. */
export interface DeleteOrder {
  type: "order";
  id: string;
  namespace: string;
  name: string;
  uid: string;
  runId: number;
  reason: string;
}

export type LedgerMessage = DeleteOrder;
