// The agent's watch cache: what the judge needs of each EphemeralRunner in the
// agent's namespaces (agent-protocol.ts AgentRunner), kept from list and watch.
import type { AgentMessage, AgentRunner, NamespaceFreshness } from "../cluster/agent-protocol.ts";
import { agentArcFields } from "../cluster/arc-failure.ts";
import { type EphemeralRunner, readEphemeralRunner } from "../cluster/ephemeral-runner.ts";
import { parseAgentRunner } from "../cluster/parse-agent-message.ts";

/** Runners per snapshot part: ~500 bytes each keeps a part far below the Worker's 1 MiB message limit. */
export const RUNNERS_PER_PART = 500;

/**
 * The AgentRunner of an EphemeralRunner object from the API server (read by the
 * Worker's own reader, ephemeral-runner.ts), checked like the ledger will check it;
 * throws EphemeralRunnerError or AgentMessageError if it would not pass.
 */
export function toAgentRunner(obj: unknown): AgentRunner {
  return agentRunnerOf(readEphemeralRunner(obj));
}

/** The AgentRunner of an EphemeralRunner already read (read-runner.ts); throws AgentMessageError if the ledger would refuse it. */
export function agentRunnerOf(r: EphemeralRunner): AgentRunner {
  const candidate: Record<string, unknown> = { namespace: r.namespace, name: r.name, uid: r.uid, creationTimestamp: r.creationTimestamp };
  if (r.deletionTimestamp !== undefined) candidate["deletionTimestamp"] = r.deletionTimestamp;
  if (r.runnerId !== undefined) candidate["runnerId"] = r.runnerId;
  if (r.workflowRunId !== undefined) candidate["workflowRunId"] = r.workflowRunId;
  if (r.jobRepositoryName !== undefined) candidate["jobRepositoryName"] = r.jobRepositoryName;
  // A Failed or Outdated runner carries ARC's reason and message; an idle one its scale set and runner version; a busy one nothing more.
  const arc = agentArcFields(r);
  if (arc) candidate["arc"] = arc;
  return parseAgentRunner(candidate, "EphemeralRunner");
}

function sameRunner(a: AgentRunner, b: AgentRunner): boolean {
  return (
    a.uid === b.uid &&
    a.creationTimestamp === b.creationTimestamp &&
    a.deletionTimestamp === b.deletionTimestamp &&
    a.runnerId === b.runnerId &&
    a.workflowRunId === b.workflowRunId &&
    a.jobRepositoryName === b.jobRepositoryName &&
    JSON.stringify(a.arc) === JSON.stringify(b.arc)
  );
}

export class RunnerView {
  readonly namespaces: readonly string[];
  private readonly byNamespace = new Map<string, Map<string, AgentRunner>>();

  constructor(namespaces: readonly string[]) {
    this.namespaces = [...namespaces];
  }

  watches(namespace: string): boolean {
    return this.namespaces.includes(namespace);
  }

  /** Whether a first list of `namespace` (or of every namespace) has filled the view. */
  synced(namespace?: string): boolean {
    if (namespace !== undefined) return this.byNamespace.has(namespace);
    return this.namespaces.every((ns) => this.byNamespace.has(ns));
  }

  /** A (re)list: the namespace's runners are exactly these now. */
  replace(namespace: string, runners: AgentRunner[]): void {
    this.byNamespace.set(namespace, new Map(runners.map((r) => [r.name, r])));
  }

  /** Returns false when nothing the judge needs changed (e.g. only status.phase moved). */
  upsert(runner: AgentRunner): boolean {
    const names = this.byNamespace.get(runner.namespace);
    if (names === undefined) return false;
    const old = names.get(runner.name);
    names.set(runner.name, runner);
    return old === undefined || !sameRunner(old, runner);
  }

  /** Returns the runner removed, if the view held that one (same uid). */
  remove(namespace: string, name: string, uid: string): AgentRunner | undefined {
    const names = this.byNamespace.get(namespace);
    const old = names?.get(name);
    if (old === undefined || old.uid !== uid) return undefined;
    names?.delete(name);
    return old;
  }

  get(namespace: string, name: string): AgentRunner | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  /** Every runner, by namespace then name. */
  all(): AgentRunner[] {
    const out: AgentRunner[] = [];
    for (const ns of [...this.namespaces].sort()) {
      const names = this.byNamespace.get(ns);
      if (names === undefined) continue;
      out.push(...[...names.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
    }
    return out;
  }

  size(): number {
    let n = 0;
    for (const names of this.byNamespace.values()) n += names.size;
    return n;
  }
}

/** The view as snapshot messages: one id, parts 1..n sent back to back; the last says how whole each namespace is. */
export function snapshotMessages(runners: AgentRunner[], id: string, perPart = RUNNERS_PER_PART, namespaces?: NamespaceFreshness[]): AgentMessage[] {
  const parts = Math.max(1, Math.ceil(runners.length / perPart));
  const out: AgentMessage[] = [];
  for (let i = 0; i < parts; i++) {
    const part: AgentMessage = { type: "snapshot", id, part: i + 1, parts, runners: runners.slice(i * perPart, (i + 1) * perPart) };
    if (namespaces !== undefined && i + 1 === parts) part.namespaces = namespaces;
    out.push(part);
  }
  return out;
}
