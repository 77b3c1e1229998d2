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
// Every message is a valibot schema here, its type derived from it; both sides
// parse with parse-agent-message.ts / parse-ledger-message.ts, which refuse
// unknown fields: a new field means a new hello.version on both sides. The
// Worker learns new messages first: deploy it before the agents.
import * as v from "valibot";
import {
  ageSchema,
  arraySchema,
  booleanSchema,
  clusterSchema,
  idSchema,
  nameSchema,
  namespaceSchema,
  oneOfSchema,
  positiveIntSchema,
  repositorySchema,
  strictFields,
  textSchema,
  timestampSchema,
  uidSchema,
} from "./agent-message-fields.ts";

/** At most this many runners in one snapshot part (a part stays well under 1 MiB). */
export const MAX_RUNNERS_PER_PART = 1000;
const MAX_NAMESPACES = 100;
const MAX_PARTS = 10_000;
/** An age in ms: a whole number from 0 to about 10 years. */
const MAX_AGE_MS = 10 * 365 * 86_400_000;

/**
 * What the agent reports of ARC's fields (src/cluster/arc-failure.ts agentArcFields): for a runner ARC
 * marked Failed or Outdated, its phase, status.reason and status.message (cleaned, bounded), the latest
 * of status.failures; for those and for an idle runner (no run, not being deleted), its scale set label
 * and its runner version. A busy runner carries none. Bounded here; cleaned again where shown.
 */
const AgentArcFieldsSchema = v.pipe(
  strictFields({
    // Runners that never work: an idle runner's report has no phase (a phase-only change sends nothing).
    phase: v.exactOptional(textSchema(40)),
    reason: v.exactOptional(textSchema(200)),
    message: v.exactOptional(textSchema(1000)),
    failedAt: v.exactOptional(
      v.pipe(
        textSchema(40),
        v.check((t) => Number.isFinite(Date.parse(t)), "a time"),
      ),
    ),
    scaleSet: v.exactOptional(textSchema(63)),
    // --- runners that never work: the runner version (image tag or label); the Worker first, then the agent ---
    runnerVersion: v.exactOptional(textSchema(40)),
    // --- end of runners that never work ---
  }),
  // ARC's reason, message and failure time are sent only with the phase they explain.
  v.forward(
    v.partialCheck(
      [["phase"], ["reason"], ["message"], ["failedAt"]],
      (a) => a.phase !== undefined || (a.reason === undefined && a.message === undefined && a.failedAt === undefined),
      "the phase that reason, message or failedAt come with",
    ),
    ["phase"],
  ),
);
export type AgentArcFields = v.InferOutput<typeof AgentArcFieldsSchema>;

/** What the judge needs of one EphemeralRunner, as the agent's watch cache holds it. */
export const AgentRunnerSchema = strictFields({
  namespace: namespaceSchema,
  name: nameSchema,
  uid: uidSchema,
  creationTimestamp: timestampSchema,
  deletionTimestamp: v.exactOptional(timestampSchema),
  /** `status.runnerId` (the registration): update the Worker before the agent; an older Worker's parser refuses the field. */
  runnerId: v.exactOptional(positiveIntSchema()),
  workflowRunId: v.exactOptional(positiveIntSchema()),
  jobRepositoryName: v.exactOptional(repositorySchema),
  /** Update the Worker before the agent; an older Worker's parser refuses the field. */
  arc: v.exactOptional(AgentArcFieldsSchema),
});
export type AgentRunner = v.InferOutput<typeof AgentRunnerSchema>;

/**
 * How whole the agent's cache of one namespace is. `wholeMsAgo`: how long before
 * the message was sent its list or watch was last whole (a list's start, a watch
 * bookmark); absent: never. An age, not a time, so that the two clocks need not
 * agree. `unreadable`: why the last list or watch of it failed (e.g. 403: its Role
 * removed); its runners are then ambiguous, never absent.
 */
const NamespaceFreshnessSchema = strictFields({
  namespace: namespaceSchema,
  wholeMsAgo: v.exactOptional(ageSchema(MAX_AGE_MS)),
  unreadable: v.exactOptional(textSchema(500)),
});
export type NamespaceFreshness = v.InferOutput<typeof NamespaceFreshnessSchema>;
const namespacesSchema = arraySchema(NamespaceFreshnessSchema, MAX_NAMESPACES, 1, "at least one namespace");

/**
 * deleted: the API server accepted the DELETE (uid precondition).
 * gone: nothing with that uid to delete: 404, or 409 because the name now has another uid
 *   (the API server's uid precondition), or a read by name answered 404. Never the agent's
 *   watch cache alone: a stalled watch misses objects created since.
 * refused: the agent's own check failed (other uid, being deleted, other run, foreign namespace,
 *   view not synced yet, dry run: why is then exactly "dry run").
 * failed: the API server answered an error (its Status message is in why), gave an answer that is not
 *   its own (a 2xx that is neither the object nor a success Status), or could not be reached.
 */
const OUTCOMES = ["deleted", "gone", "refused", "failed"] as const;
export type OrderOutcome = (typeof OUTCOMES)[number];

/**
 * A finish order's outcome (REAPER_FINISH_STUCK). finished: the patch removed ARC's finalizers.
 * gone: 404, or the name now has another uid. refused: the agent's own check (not being deleted, a finalizer
 * not ARC's, dry run) or the API server's 403 (the Role overlay infra/agent/finish-stuck is not applied).
 * conflict: 409/422 (a test of the patch failed: the object changed). failed: any other error.
 */
const FINISH_OUTCOMES = ["finished", "gone", "refused", "conflict", "failed"] as const;
export type FinishOrderOutcome = (typeof FINISH_OUTCOMES)[number];

/** Agent -> ledger, by type. */
export const AGENT_MESSAGE_SCHEMAS = {
  /**
   * First message after every connect. `cluster` repeats the upgrade's cluster and
   * must match it; it is omitted for "default", so that an older Worker (whose
   * parser refuses unknown fields) still accepts a single-cluster agent.
   */
  hello: strictFields({
    type: v.literal("hello"),
    version: textSchema(64),
    namespaces: arraySchema(namespaceSchema, MAX_NAMESPACES, 1, "at least one namespace"),
    dryRun: booleanSchema,
    cluster: v.exactOptional(clusterSchema),
    /**
     * The cluster's identity: its kube-system namespace's uid, as the agent read it at start. Absent (an older
     * agent, or kube-system not readable): the ledger trusts no runner id in the cluster until one is reported.
     */
    identity: v.exactOptional(textSchema(128)),
  }),
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
  snapshot: strictFields({
    type: v.literal("snapshot"),
    id: idSchema,
    part: positiveIntSchema(MAX_PARTS),
    parts: positiveIntSchema(MAX_PARTS),
    runners: arraySchema(AgentRunnerSchema, MAX_RUNNERS_PER_PART),
    namespaces: v.exactOptional(namespacesSchema),
  }),
  /** How whole some namespaces are now (a watch bookmark, a failed list or watch); sent only after the snapshot. */
  namespaces: strictFields({ type: v.literal("namespaces"), namespaces: namespacesSchema }),
  /** A watch event: the runner was added or changed. */
  upsert: strictFields({ type: v.literal("upsert"), runner: AgentRunnerSchema }),
  /** A watch event: the runner left the cluster. */
  remove: strictFields({ type: v.literal("remove"), namespace: namespaceSchema, name: nameSchema, uid: uidSchema }),
  /** The outcome of an order. */
  report: strictFields({ type: v.literal("report"), id: idSchema, uid: uidSchema, outcome: oneOfSchema(OUTCOMES), why: textSchema() }),
  /** The outcome of a finish order (finish-patch.ts's FinishOutcome kinds). */
  "finish-report": strictFields({ type: v.literal("finish-report"), id: idSchema, uid: uidSchema, outcome: oneOfSchema(FINISH_OUTCOMES), why: textSchema() }),
  /** The answer to a read: the object as the API server has it now, or null for 404; `why` when the read failed. */
  "read-report": strictFields({ type: v.literal("read-report"), id: idSchema, runner: v.nullable(AgentRunnerSchema), why: v.exactOptional(textSchema()) }),
};
export type AgentMessage = { [K in keyof typeof AGENT_MESSAGE_SCHEMAS]: v.InferOutput<(typeof AGENT_MESSAGE_SCHEMAS)[K]> }[keyof typeof AGENT_MESSAGE_SCHEMAS];

/**
 * Ledger -> agent: delete exactly this object, if the agent's view still agrees. Idempotent by uid.
 * Either `runId` (the run the runner was judged on: the agent refuses a runner on another run) or
 * `cause: "failed"` (a runner ARC marked Failed, which has no run: the agent refuses it
 * unless the object is still Failed and carries no run). Never both, never neither.
 */
export const DeleteOrderSchema = v.pipe(
  strictFields({
    type: v.literal("order"),
    id: idSchema,
    namespace: namespaceSchema,
    name: nameSchema,
    uid: uidSchema,
    runId: v.exactOptional(positiveIntSchema()),
    cause: v.exactOptional(v.literal("failed")),
    reason: textSchema(),
  }),
  v.check((o) => (o.runId === undefined) !== (o.cause === undefined), 'either runId or cause "failed", not both'),
);
export type DeleteOrder = v.InferOutput<typeof DeleteOrderSchema>;

/**
 * Ledger -> agent: read this runner by name from the API server now (a GET), not
 * from the watch cache. The ledger asks when its view lacks a runner whose facts
 * are newer than the view: a fresh read is the evidence of absence a stale view is
 * not. An agent that does not know reads ignores them; the ledger then waits for
 * a newer view.
 */
export const ReadOrderSchema = strictFields({ type: v.literal("read"), id: idSchema, namespace: namespaceSchema, name: nameSchema });
export type ReadOrder = v.InferOutput<typeof ReadOrderSchema>;

/**
 * Ledger -> agent: finish this held deletion (REAPER_FINISH_STUCK): GitHub said its job completed. The agent
 * reads the object from the API server, checks the uid, that it is being deleted and that every finalizer is
 * ARC's, then sends the JSON patch (finish-patch.ts) that tests the uid and those finalizers and removes them.
 */
export const FinishOrderSchema = strictFields({
  type: v.literal("finish"),
  id: idSchema,
  namespace: namespaceSchema,
  name: nameSchema,
  uid: uidSchema,
  reason: textSchema(),
});
export type FinishOrder = v.InferOutput<typeof FinishOrderSchema>;

export type LedgerMessage = DeleteOrder | ReadOrder | FinishOrder;

/**
 * The close code the ledger uses when a second agent connects and replaces this
 * one. The replaced agent waits its longest back-off before dialing again, so
 * two agents by mistake alternate slowly instead of fighting.
 */
export const CLOSE_REPLACED = 4001;

/**
 * The close code (RFC 6455's "Service Restart") the ledger uses when its server is stopping (the in-cluster
 * pod's preStop, src/http/drain-entrypoint.ts): the agent reconnects soon, to the server that comes next,
 * at its shortest back-off; not an error.
 */
export const CLOSE_RESTARTING = 1012;

/**
 * How long the agent lets one call to the API server take (a GET, a DELETE). The
 * ledger waits at least this long for a read, and twice for an order (a GET when
 * the object is missing from the agent's cache, then the DELETE).
 */
export const AGENT_API_TIMEOUT_MS = 15_000;

/** The upgrade's header naming the agent's cluster (absent: "default"); checked with the token before the upgrade. */
export const CLUSTER_HEADER = "x-arc-reaper-cluster";
export const DEFAULT_CLUSTER = "default";
