// The messages between the in-cluster agent (src/agent) and the ledger, one
// JSON object per WebSocket text message. The agent dials out to GET /agent
// with `Authorization: Bearer AGENT_TOKEN`; nothing dials in.
//
// The flow, on every connection:
//   1. A wrong or missing token is answered 401 before the upgrade (the agent
//      logs the status and backs off); a good one is upgraded.
//   2. agent -> ledger: hello, then, once it has listed every namespace, the
//      whole view as snapshot parts 1..parts of one id, back to back. Until the
//      last part the ledger knows nothing new (a partial view must not read as
//      runners gone). Then upsert/remove as the watch sees changes.
//   3. ledger -> agent: orders at any time; each gets one report (unless the
//      connection drops first: the next snapshot settles it). An order before the
//      snapshot is refused ("has not listed namespace …").
//   4. The agent pings (protocol ping frames) every 30 s and redials when a pong
//      does not come by the next ping; the ledger closes a replaced connection
//      with CLOSE_REPLACED.
// Both sides parse with parse-agent-message.ts / parse-ledger-message.ts, which
// refuse unknown fields: a new field means a new hello.version on both sides.

/** What the judge needs of one EphemeralRunner, as the agent's watch cache holds it. */
export interface AgentRunner {
  namespace: string;
  name: string;
  uid: string;
  creationTimestamp: string;
  deletionTimestamp?: string;
  workflowRunId?: number;
  jobRepositoryName?: string;
  /**
   * Issue 24, sent only for a runner ARC marked Failed: its phase, status.reason and status.message (cleaned,
   * bounded), the latest of status.failures, and its scale set label. Update the Worker before the agent: an
   * older Worker's parser refuses the field.
   */
  arc?: AgentArcFields;
}

/** What the agent reports of a Failed runner (src/cluster/arc-failure.ts). */
export interface AgentArcFields {
  phase: string;
  reason?: string;
  message?: string;
  failedAt?: string;
  scaleSet?: string;
}

/** Agent -> ledger. */
export type AgentMessage =
  /**
   * First message after every connect. `cluster` repeats the upgrade's cluster and
   * must match it; it is omitted for "default", so that an older Worker (whose
   * parser refuses unknown fields) still accepts a single-cluster agent.
   */
  | { type: "hello"; version: string; namespaces: string[]; dryRun: boolean; cluster?: string }
  /**
   * The whole view of the agent's namespaces: after every connect and after every
   * fresh list (410). A Worker receives WebSocket messages of at most 1 MiB, so a
   * large view comes in parts: `id` names one snapshot, `part` counts 1..`parts`,
   * and the parts of one snapshot arrive back to back, with no other message
   * between them. The view is complete (anything absent from it is gone) only when
   * part `parts` of that id has arrived.
   */
  | { type: "snapshot"; id: string; part: number; parts: number; runners: AgentRunner[] }
  /** A watch event: the runner was added or changed. */
  | { type: "upsert"; runner: AgentRunner }
  /** A watch event: the runner left the cluster. */
  | { type: "remove"; namespace: string; name: string; uid: string }
  /** The answer to a read: the object as the API server has it now, or null for 404; `why` when the read failed. */
  | { type: "read-report"; id: string; runner: AgentRunner | null; why?: string }
  /** The outcome of an order. */
  | { type: "report"; id: string; uid: string; outcome: OrderOutcome; why: string };

/**
 * deleted: the API server accepted the DELETE (uid precondition).
 * gone: nothing with that uid to delete: 404, or 409 because the name now has another uid
 *   (the API server's uid precondition), or the agent's synced view has no object of that name.
 * refused: the agent's own check failed (other uid, being deleted, other run, foreign namespace,
 *   view not synced yet, dry run: why is then exactly "dry run").
 * failed: the API server answered an error (the Status message is in why).
 */
export const OUTCOMES = ["deleted", "gone", "refused", "failed"] as const;
export type OrderOutcome = (typeof OUTCOMES)[number];

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

/**
 * Ledger -> agent: read this runner by name from the API server now (a GET), not
 * from the watch cache. The ledger asks when its view lacks a runner whose facts
 * are newer than the view: a fresh read is the evidence of absence a stale view is
 * not. An agent that does not know reads ignores them; the ledger then waits for
 * a newer view.
 */
export interface ReadOrder {
  type: "read";
  id: string;
  namespace: string;
  name: string;
}

export type LedgerMessage = DeleteOrder | ReadOrder;

/**
 * The close code the ledger uses when a second agent connects and replaces this
 * one. The replaced agent waits its longest back-off before dialing again, so
 * two agents by mistake alternate slowly instead of fighting.
 */
export const CLOSE_REPLACED = 4001;

/** The upgrade's header naming the agent's cluster (absent: "default"); checked with the token before the upgrade. */
export const CLUSTER_HEADER = "x-arc-reaper-cluster";
export const DEFAULT_CLUSTER = "default";
