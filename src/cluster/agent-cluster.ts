// The cluster as the in-cluster agent shows it (CLUSTER_MODE=agent): the
// Worker never calls the API server. Lists and reads come from the view the
// agent streams to the ledger; a delete is an order the agent checks against
// the object (its watch cache, or a read by name when the cache lacks it) before
// it deletes with the uid precondition. While no agent is connected, or its
// snapshot is not complete, or it cannot read the namespace, nothing can be
// seen there, so nothing is judged gone and nothing is deleted: every call is an
// error of kind "agent". Absence dates from the namespace's own freshness (when
// the agent's list or watch of it was last whole), never from a message's arrival.
import type { DeleteOrder, FinishOrder, FinishOrderOutcome, OrderOutcome } from "./agent-protocol.ts";
import type { FinishOutcome } from "./finish-patch.ts";
import type { ClusterRunner } from "../model/runner.ts";
import { ClusterError, type Cluster, type DeleteOutcome } from "./ephemeral-runners.ts";

/**
 * The agent's word on a namespace's freshness is an age turned into the ledger's time on arrival:
 * this covers the message's way here and the API server's watch cache lag behind its bookmark.
 */
export const AGENT_WHOLE_MARGIN_MS = 5_000;

/** What the ledger's agent link offers the cluster (src/agent-link/agent-link.ts). */
export interface AgentPort {
  /** Why the agent's view of this namespace cannot be used now; undefined when it can. */
  unavailable(namespace: string): string | undefined;
  runners(namespace: string): ClusterRunner[];
  /** When the agent's cache of the namespace was last whole (ms, the ledger's clock), or 0: never said. */
  wholeAt(namespace: string): number;
  /** When the watch last said an object of this name left the namespace (ms), or 0. */
  removedAt(namespace: string, name: string): number;
  runner(namespace: string, name: string): ClusterRunner | undefined;
  /** Asks the agent to read one runner from the API server now; true once its fresh answer is in the view. */
  read(namespace: string, name: string): Promise<boolean>;
  /** Sends the order and resolves with the agent's report, or undefined when none came in time. */
  order(order: Omit<DeleteOrder, "type" | "id">): Promise<{ outcome: OrderOutcome; why: string } | undefined>;
  /** Sends a finish order (REAPER_FINISH_STUCK) and resolves with the agent's report, or undefined when none came in time. */
  finish(order: Omit<FinishOrder, "type" | "id">): Promise<{ outcome: FinishOrderOutcome; why: string } | undefined>;
}

export function agentCluster(agent: AgentPort): Cluster {
  const check = (namespace: string): void => {
    const why = agent.unavailable(namespace);
    if (why !== undefined) throw new ClusterError(null, why);
  };
  // The namespace is whole as of when the agent's list or watch of it last was (a list's start, a watch
  // bookmark), less a margin; a remove event, or a read that found nothing, is the watch's or the API
  // server's own word that the object left. A namespace whose freshness was never said: removals and reads only.
  const absentAsOf = (namespace: string, name: string): number => {
    const whole = agent.wholeAt(namespace);
    return Math.max(whole > 0 ? whole - AGENT_WHOLE_MARGIN_MS : 0, agent.removedAt(namespace, name));
  };
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
    // What the view already shows, with no call: where a runner is placed before any read by name.
    inView: (namespace, name) => (agent.unavailable(namespace) === undefined ? agent.runner(namespace, name) : undefined),
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
      const reason = context.reason || "condemned by the judge";
      // A Failed runner has no run: the order carries its cause instead, and the agent checks that.
      const by = context.cause === "failed" ? { cause: "failed" as const } : context.runId !== undefined ? { runId: context.runId } : undefined;
      if (by === undefined) return { kind: "failed", status: null, why: `no run to order the deletion of ${namespace}/${name} by` };
      const report = await agent.order({ namespace, name, uid, ...by, reason });
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
    // A held deletion finished through the agent: it reads the object now and patches the finalizers it finds there,
    // if every one is ARC's (the view carries no finalizers, so the ones the caller saw are not sent).
    async finishDeletion({ namespace, name, uid }): Promise<FinishOutcome> {
      const why = agent.unavailable(namespace);
      if (why !== undefined) return { kind: "failed", status: null, why };
      const report = await agent.finish({ namespace, name, uid, reason: "GitHub says its job completed (REAPER_FINISH_STUCK)" });
      if (report === undefined) return { kind: "failed", status: null, why: "no report from the agent (looked at again at the next look)" };
      switch (report.outcome) {
        case "finished":
          return { kind: "finished" };
        case "gone":
          return { kind: "gone" };
        case "refused":
          return { kind: "refused", why: report.why };
        case "conflict":
          return { kind: "conflict", why: report.why };
        default:
          return { kind: "failed", status: null, why: `the agent's patch failed: ${report.why}` };
      }
    },
  };
}
