// The admin page's lines about the in-cluster agents (CLUSTER_MODE=agent), one
// per watched cluster: whether its agent is connected and has sent its whole
// view. Disconnected means hands off in that cluster: nothing of it is deleted,
// and the page says so where it cannot be missed.
import type { AgentStatus } from "../agent-link/agent-link.ts";

export function AgentBanners(props: { agents: readonly AgentStatus[] | null | undefined }) {
  const agents = props.agents;
  if (!agents) return null;
  const several = agents.length > 1 || agents.some((a) => a.cluster !== "default");
  return (
    <div id="agents">
      {agents.map((a) => (
        <AgentBanner agent={a} several={several} />
      ))}
    </div>
  );
}

function AgentBanner(props: { agent: AgentStatus; several: boolean }) {
  const a = props.agent;
  const of = props.several ? ` of cluster ${a.cluster}` : "";
  const id = props.several ? `agent-status-${a.cluster}` : "agent-status";
  if (!a.connected) {
    return (
      <p id={id} data-cluster={a.cluster} class="error" role="alert">
        No agent{of} is connected{a.disconnectedAt ? ` (since ${a.disconnectedAt})` : ""}
        {a.expected ? " (AGENT_CLUSTERS expects it)" : ""}: nothing{props.several ? " in it" : ""} is deleted, its runners are kept and counted as errors of
        kind agent until the in-cluster agent reconnects.
      </p>
    );
  }
  if (!a.complete) {
    return (
      <p id={id} data-cluster={a.cluster} class="error" role="alert">
        The agent{of} connected at {a.connectedAt} and has not sent its whole view yet: nothing{props.several ? " in it" : ""} is deleted until it has.
      </p>
    );
  }
  const unreadable = a.unreadable ?? [];
  return (
    <>
      {unreadable.length > 0 ? (
        <p id={`${id}-unreadable`} data-cluster={a.cluster} class="error" role="alert">
          The agent{of} cannot read {unreadable.map((u) => `namespace ${u.namespace} (${u.why})`).join(", ")}: its runners there are kept as ambiguous, never
          judged gone or deleted, until the agent reads it again (check its Role).
        </p>
      ) : null}
      <AgentLine agent={a} several={props.several} id={id} />
    </>
  );
}

function AgentLine(props: { agent: AgentStatus; several: boolean; id: string }) {
  const a = props.agent;
  const id = props.id;
  return (
    <p id={id} data-cluster={a.cluster} class="mode">
      {props.several ? <a href={`/admin?cluster=${encodeURIComponent(a.cluster)}`}>{a.cluster}</a> : null}
      {props.several ? ": " : ""}agent {a.version} connected since {a.connectedAt} · watching {a.namespaces.join(", ")} · {a.runners} runners in view
      {a.dryRun ? " · agent dry run: it refuses every order" : ""}
    </p>
  );
}
