// Delete orders from the ledger, checked against the agent's own watch cache
// before anything is deleted. Idempotent by uid: a second order for a uid that
// was already deleted (or is being deleted by us right now) is answered with
// the same outcome, without a second DELETE. An object missing from the cache
// is never by itself an answer: a stalled watch misses runners created since,
// so the agent reads the name from the API server and judges what it says.
import type { AgentMessage, AgentRunner, DeleteOrder, OrderOutcome } from "../cluster/agent-protocol.ts";
import type { DeleteResult, KubeRunners } from "./kube-runners.ts";
import { errorText } from "../model/error-text.ts";
import type { Log } from "./log.ts";
import type { RunnerView } from "./runner-view.ts";

type Report = Extract<AgentMessage, { type: "report" }>;
type Verdict = { outcome: OrderOutcome; why: string };

/** How many settled uids are remembered (oldest forgotten first). */
const REMEMBERED_UIDS = 10_000;

/** Whether the order may be looked at at all: the namespace is this agent's and has been listed. */
function checkNamespace(order: DeleteOrder, view: RunnerView): Verdict | undefined {
  if (!view.watches(order.namespace))
    return { outcome: "refused", why: `namespace ${order.namespace} is not among this agent's namespaces (${view.namespaces.join(", ")})` };
  if (!view.synced(order.namespace)) return { outcome: "refused", why: `the agent has not listed namespace ${order.namespace} yet` };
  return undefined;
}

/**
 * The agent's own check of an order against the object (from its cache, or read from the API
 * server when the cache lacks it): undefined when it may go ahead.
 */
function checkOrder(order: DeleteOrder, runner: AgentRunner | null): Verdict | undefined {
  const where = `${order.namespace}/${order.name}`;
  if (runner === null) return { outcome: "gone", why: `no EphemeralRunner ${where}: the API server answered 404 to a read by name` };
  if (runner.uid !== order.uid) return { outcome: "refused", why: `${where} now has uid ${runner.uid}, not ${order.uid}: another runner took the name` };
  if (runner.deletionTimestamp !== undefined) return { outcome: "refused", why: `${where} is already being deleted (since ${runner.deletionTimestamp})` };
  if (order.cause === "failed") {
    // A Failed runner has no run to check: the object must still be Failed and carry no run (ARC did not reuse it).
    if (runner.arc?.phase !== "Failed")
      return { outcome: "refused", why: `${where} is not Failed (anymore): only a Failed runner is deleted for cause failed` };
    if (runner.workflowRunId !== undefined)
      return { outcome: "refused", why: `${where} is Failed but on run ${runner.workflowRunId}: only a Failed runner without a run is deleted` };
    return undefined;
  }
  if (runner.workflowRunId !== undefined && runner.workflowRunId !== order.runId) {
    return { outcome: "refused", why: `${where} is on run ${runner.workflowRunId}, not run ${order.runId}: the runner moved on` };
  }
  return undefined;
}

export class OrderDesk {
  /** Settled or in-flight DELETEs by uid. */
  private readonly byUid = new Map<string, Promise<DeleteResult>>();
  private readonly view: RunnerView;
  private readonly kube: KubeRunners;
  private readonly dryRun: boolean;
  private readonly log: Log;

  constructor(opts: { view: RunnerView; kube: KubeRunners; dryRun: boolean; log: Log }) {
    this.view = opts.view;
    this.kube = opts.kube;
    this.dryRun = opts.dryRun;
    this.log = opts.log;
  }

  async apply(order: DeleteOrder): Promise<Report> {
    const verdict = await this.decide(order);
    const fields = {
      id: order.id,
      namespace: order.namespace,
      name: order.name,
      uid: order.uid,
      ...(order.runId === undefined ? {} : { runId: order.runId }),
      ...(order.cause === undefined ? {} : { cause: order.cause }),
      outcome: verdict.outcome,
      why: verdict.why,
    };
    this.log(verdict.outcome === "failed" ? "warn" : "info", "order", { ...fields, reason: order.reason });
    return { type: "report", id: order.id, uid: order.uid, outcome: verdict.outcome, why: verdict.why };
  }

  private async decide(order: DeleteOrder): Promise<Verdict> {
    const earlier = this.byUid.get(order.uid);
    if (earlier !== undefined) {
      const r = await earlier;
      if (r.outcome !== "failed") return { outcome: r.outcome, why: `${r.why} (already done for an earlier order; no second DELETE)` };
    }
    const outside = checkNamespace(order, this.view);
    if (outside !== undefined) return outside;
    // Missing from the cache (a stalled watch misses what was created since): the API server says.
    const cached = this.view.get(order.namespace, order.name);
    let runner: AgentRunner | null;
    try {
      runner = cached ?? (await this.kube.read(order.namespace, order.name));
    } catch (e) {
      return {
        outcome: "failed",
        why: `${order.namespace}/${order.name} is not in the agent's watch cache and could not be read: ${errorText(e).slice(0, 300)}`,
      };
    }
    if (cached === undefined)
      this.log("info", "order for a runner missing from the watch cache: read from the API server", {
        id: order.id,
        namespace: order.namespace,
        name: order.name,
        found: runner !== null,
      });
    const refusal = checkOrder(order, runner);
    if (refusal !== undefined) return refusal;
    if (this.dryRun) return { outcome: "refused", why: "dry run" };
    const pending = this.kube.delete(order.namespace, order.name, order.uid);
    this.remember(order.uid, pending);
    const result = await pending;
    // A failure may be retried by a later order; deleted and gone are final.
    if (result.outcome === "failed") this.byUid.delete(order.uid);
    return result;
  }

  private remember(uid: string, p: Promise<DeleteResult>): void {
    this.byUid.set(uid, p);
    while (this.byUid.size > REMEMBERED_UIDS) {
      const oldest = this.byUid.keys().next().value;
      if (oldest === undefined) break;
      this.byUid.delete(oldest);
    }
  }
}
