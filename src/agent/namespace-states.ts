// How whole the agent's cache of each namespace is: when its list or watch was
// last whole (a list's start, or a watch bookmark: every event up to it has
// arrived), and whether the API server refuses or fails it now. The ledger dates
// the absence of a runner from these times, never from when a message arrived,
// so a namespace whose watch keeps failing is never passed off as fresh.
import type { NamespaceFreshness } from "../cluster/agent-protocol.ts";

interface State {
  /** Agent clock (ms): the cache held everything up to this moment. */
  wholeAt?: number;
  /** Why the last list or watch failed; cleared by the next that works. */
  unreadable?: string;
}

export class NamespaceStates {
  private readonly states = new Map<string, State>();

  constructor(namespaces: readonly string[]) {
    for (const ns of namespaces) this.states.set(ns, {});
  }

  /** The cache of `namespace` was whole at `at`; returns whether that moved anything. */
  whole(namespace: string, at: number): boolean {
    const s = this.states.get(namespace);
    if (!s) return false;
    const changed = s.unreadable !== undefined || s.wholeAt === undefined || at > s.wholeAt;
    if (s.wholeAt === undefined || at > s.wholeAt) s.wholeAt = at;
    delete s.unreadable;
    return changed;
  }

  /** The API server answered a list or watch of `namespace` (no longer unreadable); returns whether that changed. */
  readable(namespace: string): boolean {
    const s = this.states.get(namespace);
    if (!s || s.unreadable === undefined) return false;
    delete s.unreadable;
    return true;
  }

  /** A list or watch of `namespace` failed; returns whether that changed what is reported. */
  failed(namespace: string, why: string): boolean {
    const s = this.states.get(namespace);
    if (!s) return false;
    const text = why.slice(0, 500) || "failed";
    if (s.unreadable === text) return false;
    s.unreadable = text;
    return true;
  }

  unreadable(): string[] {
    return [...this.states].filter(([, s]) => s.unreadable !== undefined).map(([ns]) => ns);
  }

  /** What the ledger is told, as of `now` (ages, not times: the two clocks need not agree). */
  report(now: number, only?: readonly string[]): NamespaceFreshness[] {
    const out: NamespaceFreshness[] = [];
    for (const [namespace, s] of this.states) {
      if (only && !only.includes(namespace)) continue;
      const f: NamespaceFreshness = { namespace };
      if (s.wholeAt !== undefined) f.wholeMsAgo = Math.max(0, Math.round(now - s.wholeAt));
      if (s.unreadable !== undefined) f.unreadable = s.unreadable;
      out.push(f);
    }
    return out;
  }
}
