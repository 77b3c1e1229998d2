// The admin page's line about the in-cluster agent (CLUSTER_MODE=agent): whether
// one is connected and has sent its whole view. Disconnected means hands off:
// nothing is deleted, and the page says so where it cannot be missed.
import type { AgentStatus } from "../ledger/agent-link.ts";

export function AgentBanner(props: { agent: AgentStatus | null | undefined }) {
  const a = props.agent;
  if (!a) return null;
  if (!a.connected) {
    return (
      <p id="agent-status" class="error" role="alert">
        No agent is connected{a.disconnectedAt ? ` (since ${a.disconnectedAt})` : ""}: nothing is deleted, every runner is kept and counted as an
        error of kind agent until the in-cluster agent reconnects.
      </p>
    );
  }
  if (!a.complete) {
    return (
      <p id="agent-status" class="error" role="alert">
        The agent connected at {a.connectedAt} and has not sent its whole view yet: nothing is deleted until it has.
      </p>
    );
  }
  return (
    <p id="agent-status" class="mode">
      agent {a.version} connected since {a.connectedAt} · watching {a.namespaces.join(", ")} · {a.runners} runners in view
      {a.dryRun ? " · agent dry run: it refuses every order" : ""}
    </p>
  );
}
