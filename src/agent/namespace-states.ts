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
  /** Objects the agent could not read (name: why): the cache lacks them, so the namespace is unreadable until each is read or gone. */
  skipped?: Map<string, string>;
}

/** What the ledger is told of a namespace with objects the agent could not read. */
function skippedWhy(skipped: ReadonlyMap<string, string>): string | undefined {
  const [first] = skipped;
  if (!first) return undefined;
  return `${skipped.size} EphemeralRunner${skipped.size === 1 ? "" : "s"} could not be read (${first[0]}: ${first[1]})`.slice(0, 500);
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

  /** The objects of `namespace` a list could not read: exactly these now; returns whether that changed what is reported. */
  listedSkipped(namespace: string, skipped: readonly { name: string; why: string }[]): boolean {
    const s = this.states.get(namespace);
    if (!s) return false;
    const before = skippedWhy(s.skipped ?? new Map());
    s.skipped = new Map(skipped.map((k) => [k.name, k.why]));
    return skippedWhy(s.skipped) !== before;
  }

  /** A watch event brought an object the agent could not read; returns whether that changed what is reported. */
  skipped(namespace: string, name: string, why: string): boolean {
    const s = this.states.get(namespace);
    if (!s) return false;
    const before = skippedWhy(s.skipped ?? new Map());
    s.skipped = new Map(s.skipped).set(name, why);
    return skippedWhy(s.skipped) !== before;
  }

  /** An object was read (or went): it no longer makes its namespace unreadable; returns whether that changed what is reported. */
  read(namespace: string, name: string): boolean {
    const s = this.states.get(namespace);
    return s?.skipped?.delete(name) === true;
  }

  unreadable(): string[] {
    return [...this.states].filter(([, s]) => (s.unreadable ?? skippedWhy(s.skipped ?? new Map())) !== undefined).map(([ns]) => ns);
  }

  /** What the ledger is told, as of `now` (ages, not times: the two clocks need not agree). */
  report(now: number, only?: readonly string[]): NamespaceFreshness[] {
    const out: NamespaceFreshness[] = [];
    for (const [namespace, s] of this.states) {
      if (only && !only.includes(namespace)) continue;
      const f: NamespaceFreshness = { namespace };
      if (s.wholeAt !== undefined) f.wholeMsAgo = Math.max(0, Math.round(now - s.wholeAt));
      const unreadable = s.unreadable ?? skippedWhy(s.skipped ?? new Map());
      if (unreadable !== undefined) f.unreadable = unreadable;
      out.push(f);
    }
    return out;
  }
}
