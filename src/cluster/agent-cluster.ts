// The cluster as the in-cluster agent shows it (CLUSTER_MODE=agent): the
// Worker never calls the API server. Lists and reads come from the view the
// agent streams to the ledger; a delete is an order the agent checks against
// its own watch cache before it deletes with the uid precondition. While no
// agent is connected, or its snapshot is not complete, nothing can be seen,
// so nothing is judged gone and nothing is deleted: every call is an error of
// kind "agent".
import type { DeleteOrder, OrderOutcome } from "./agent-protocol.ts";
import type { ClusterRunner } from "../model/runner.ts";
import { VIEW_FRESH_MARGIN_MS } from "../model/policy.ts";
import { ClusterError, type Cluster, type DeleteOutcome } from "./ephemeral-runners.ts";

/** What the ledger's agent link offers the cluster (src/ledger/agent-link.ts). */
export interface AgentPort {
  /** Why the agent's view of this namespace cannot be used now; undefined when it can. */
  unavailable(namespace: string): string | undefined;
  runners(namespace: string): ClusterRunner[];
  /** When the view's last complete snapshot arrived (ms), or 0. */
  completeAt(): number;
  /** When the watch last said an object of this name left the namespace (ms), or 0. */
  removedAt(namespace: string, name: string): number;
  runner(namespace: string, name: string): ClusterRunner | undefined;
  /** Asks the agent to read one runner from the API server now; true once its fresh answer is in the view. */
  read(namespace: string, name: string): Promise<boolean>;
  /** Sends the order and resolves with the agent's report, or undefined when none came in time. */
  order(order: Omit<DeleteOrder, "type" | "id">): Promise<{ outcome: OrderOutcome; why: string } | undefined>;
}

export function agentCluster(agent: AgentPort): Cluster {
  const check = (namespace: string): void => {
    const why = agent.unavailable(namespace);
    if (why !== undefined) throw new ClusterError(null, why);
  };
  // The view is whole as of its last snapshot, less a margin (the list that fed it was taken before it
  // arrived, and runners created meanwhile reach the view by the watch, later); a remove event, or a read
  // that found nothing, is the watch's or the API server's own word that the object left.
  const absentAsOf = (namespace: string, name: string): number => Math.max(agent.completeAt() - VIEW_FRESH_MARGIN_MS, agent.removedAt(namespace, name));
  return {
    errorKind: "agent",
    listRunners(namespace) {
      try {
        check(namespace);
        return Promise.resolve(agent.runners(namespace));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    viewAsOf: absentAsOf,
    // A runner the view lacks is read by name through the agent (a fresh GET): its answer, or a 404,
    // lands in the view and its removals, so the absence is evidence as of now. An agent that does not
    // read leaves the view as it was: absence then waits for a newer view.
    async readRunner(namespace, name, since) {
      check(namespace);
      const inView = agent.runner(namespace, name);
      if (inView) return inView;
      // Absent, and known absent since before what the caller asks about: no read needed (one per namespace would
      // otherwise go out for every runner that lives in another).
      if (since !== undefined && absentAsOf(namespace, name) > since) return undefined;
      await agent.read(namespace, name);
      return agent.runner(namespace, name);
    },
    async deleteRunner({ namespace, name, uid }, context = {}): Promise<DeleteOutcome> {
      const why = agent.unavailable(namespace);
      if (why !== undefined) return { kind: "failed", status: null, why };
      if (context.runId === undefined) return { kind: "failed", status: null, why: `no run to order the deletion of ${namespace}/${name} by` };
      const report = await agent.order({ namespace, name, uid, runId: context.runId, reason: context.reason || "condemned by the judge" });
      if (report === undefined) return { kind: "failed", status: null, why: "no report from the agent (the next snapshot settles it)" };
      switch (report.outcome) {
        case "deleted":
          return { kind: "deleted" };
        case "gone":
          return { kind: "gone" };
        case "refused":
          return { kind: "failed", status: null, why: `the agent refused the order: ${report.why}` };
        default:
          return { kind: "failed", status: null, why: `the agent's delete failed: ${report.why}` };
      }
    },
  };
}
