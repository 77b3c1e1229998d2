// Finish orders from the ledger (REAPER_FINISH_STUCK): GitHub said the job of a
// deletion ARC holds completed. The agent reads the object from the API server
// (never its cache: the finalizers must be the ones there now), checks the uid,
// that it is being deleted and that every finalizer is ARC's, then sends the
// JSON patch that tests the uid and those finalizers and removes them.
import type { AgentMessage, FinishOrder } from "../cluster/agent-protocol.ts";
import { isArcFinalizer } from "../cluster/finish-patch.ts";
import type { FinishResult, KubeRunners } from "./kube-runners.ts";
import { errorText } from "../model/error-text.ts";
import type { Log } from "./log.ts";

type FinishReport = Extract<AgentMessage, { type: "finish-report" }>;

export async function applyFinish(
  order: FinishOrder,
  deps: { namespaces: readonly string[]; kube: KubeRunners; dryRun: boolean; log: Log },
): Promise<FinishReport> {
  const verdict = await decide(order, deps);
  deps.log(verdict.outcome === "failed" ? "warn" : "info", "finish order", {
    id: order.id,
    namespace: order.namespace,
    name: order.name,
    uid: order.uid,
    outcome: verdict.outcome,
    why: verdict.why,
    reason: order.reason,
  });
  return { type: "finish-report", id: order.id, uid: order.uid, outcome: verdict.outcome, why: verdict.why };
}

async function decide(order: FinishOrder, deps: { namespaces: readonly string[]; kube: KubeRunners; dryRun: boolean }): Promise<FinishResult> {
  const where = `${order.namespace}/${order.name}`;
  if (!deps.namespaces.includes(order.namespace))
    return { outcome: "refused", why: `namespace ${order.namespace} is not among this agent's namespaces (${deps.namespaces.join(", ")})` };
  let held: Awaited<ReturnType<KubeRunners["readHeld"]>>;
  try {
    held = await deps.kube.readHeld(order.namespace, order.name);
  } catch (e) {
    return { outcome: "failed", why: `${where} could not be read: ${errorText(e).slice(0, 300)}` };
  }
  if (held === null) return { outcome: "gone", why: `no EphemeralRunner ${where}: the API server answered 404 to a read by name` };
  if (held.runner.uid !== order.uid) return { outcome: "gone", why: `${where} now has uid ${held.runner.uid}, not ${order.uid}: the held object went` };
  if (held.runner.deletionTimestamp === undefined) return { outcome: "refused", why: `${where} is not being deleted: nothing to finish` };
  if (held.finalizers.length === 0) return { outcome: "refused", why: `${where} has no finalizers left: the API server removes it on its own` };
  const foreign = held.finalizers.filter((f) => !isArcFinalizer(f));
  if (foreign.length > 0) return { outcome: "refused", why: `${where} has finalizers that are not ARC's (${foreign.join(", ")}): only ARC's are ever removed` };
  if (deps.dryRun) return { outcome: "refused", why: "dry run" };
  return deps.kube.finish(order.namespace, order.name, order.uid, held.finalizers);
}
