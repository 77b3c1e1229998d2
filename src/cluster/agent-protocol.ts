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
}

/**
 * How whole the agent's cache of one namespace is. `wholeMsAgo`: how long before
 * the message was sent its list or watch was last whole (a list's start, a watch
 * bookmark); absent: never. An age, not a time, so that the two clocks need not
 * agree. `unreadable`: why the last list or watch of it failed (e.g. 403: its Role
 * removed); its runners are then ambiguous, never absent.
 */
export interface NamespaceFreshness {
  namespace: string;
  wholeMsAgo?: number;
  unreadable?: string;
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
   * between them. The view is complete only when part `parts` of that id has arrived;
   * the last part says how whole each namespace is (`namespaces`): absence in a
   * namespace dates from its own time, never from when the snapshot arrived. A
   * snapshot without it (an older agent) says nothing of absence: reads decide.
   */
  | { type: "snapshot"; id: string; part: number; parts: number; runners: AgentRunner[]; namespaces?: NamespaceFreshness[] }
  /** How whole some namespaces are now (a watch bookmark, a failed list or watch); sent only after the snapshot. */
  | { type: "namespaces"; namespaces: NamespaceFreshness[] }
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
 *   (the API server's uid precondition), or a read by name answered 404. Never the agent's
 *   watch cache alone: a stalled watch misses objects created since.
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

/**
 * How long the agent lets one call to the API server take (a GET, a DELETE). The
 * ledger waits at least this long for a read, and twice for an order (a GET when
 * the object is missing from the agent's cache, then the DELETE).
 */
export const AGENT_API_TIMEOUT_MS = 15_000;

/** The upgrade's header naming the agent's cluster (absent: "default"); checked with the token before the upgrade. */
export const CLUSTER_HEADER = "x-arc-reaper-cluster";
export const DEFAULT_CLUSTER = "default";
