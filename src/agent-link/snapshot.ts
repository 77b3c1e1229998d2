// A snapshot from the agent, part by part, and what it says of each namespace.
// Parts gather in agent_snapshot and replace the cluster's view only when the
// last is in (a partial view must never read as runners gone); the last part's
// `namespaces` replaces how whole each namespace is, so absence dates from each
// namespace's own time, never from when the snapshot arrived. The agent reckons
// those ages before it sends part 1, so they are turned into times as of part
// 1's arrival: a large snapshot's transfer (50,000 runners: 9-10 s) must not make
// a namespace look fresher than it was. A snapshot that says nothing of them (an
// older agent) leaves absence to removals and reads.
import type { AgentMessage } from "../cluster/agent-protocol.ts";
import type { AgentViewTable } from "./agent-view-table.ts";
import { clusterOfAttachment, type Attachment } from "./attachment.ts";

type Log = (fields: object) => void;
type Snapshot = Extract<AgentMessage, { type: "snapshot" }>;

/** Takes one part; returns true when it was the last of a whole snapshot (the view is replaced). */
export function takeSnapshotPart(at: Attachment, view: AgentViewTable, m: Snapshot, log: Log, now: number): boolean {
  const cluster = clusterOfAttachment(at);
  if (m.part === 1) {
    view.startSnapshot();
    at.incoming = { id: m.id, next: 1, parts: m.parts, startedAt: now };
  }
  const incoming = at.incoming;
  if (!incoming || incoming.id !== m.id || incoming.next !== m.part || incoming.parts !== m.parts) {
    // Parts come back to back: anything else is a broken snapshot; the view stays as it was.
    log({ msg: "agent snapshot part out of order: ignored", cluster, id: m.id, part: m.part, parts: m.parts, expected: incoming ?? null });
    at.incoming = undefined;
    return false;
  }
  view.addToSnapshot(m.runners);
  incoming.next++;
  if (m.part < m.parts) return false;
  const runners = view.finishSnapshot();
  if (m.namespaces) view.setNamespaces(m.namespaces, incoming.startedAt ?? now, true);
  else view.clearNamespaces();
  at.incoming = undefined;
  at.completeAt = now;
  const unreadable = (m.namespaces ?? []).filter((n) => n.unreadable !== undefined).map((n) => n.namespace);
  log({
    msg: "agent snapshot",
    cluster,
    id: m.id,
    parts: m.parts,
    runners,
    ...(m.namespaces ? { unreadable } : { namespaces: "not said (an older agent): absence waits for reads" }),
  });
  return true;
}
