// Watch for the Kubernetes stand-in: every change to a tenant's objects is kept
// as an ADDED/MODIFIED/DELETED event with its resourceVersion, and
// `GET …/ephemeralrunners?watch=true&resourceVersion=N` streams the events after
// N as newline-delimited JSON, then live ones. A resourceVersion older than the
// kept history is answered as kube-apiserver does: HTTP 200 and one ERROR event
// carrying a Status with reason Expired and code 410 (then the stream ends).
// Tests force that with the control API (compact, watches/expire) and end open
// watches with watches/close, as an API server restart would. A watch that asks
// for bookmarks (allowWatchBookmarks=true) gets, as kube-apiserver sends them
// (about once a minute; settings.bookmarkEveryMs here), a BOOKMARK event whose
// object carries only the current resourceVersion: every event up to it was sent.
import type { ServerResponse } from "node:http";
import { isPlainObject } from "./crd-schema.ts";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "./selectors.ts";
import { badRequest, failure } from "./status.ts";
import type { JsonObject } from "./types.ts";

type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

interface WatchEvent {
  type: WatchEventType;
  /** namespace/name */
  key: string;
  rv: number;
  object: JsonObject;
}

interface Watcher {
  namespace: string;
  matches: (object: JsonObject) => boolean;
  res: ServerResponse;
}

/** Events kept per tenant; a resume from before the oldest kept one gets 410. */
const MAX_HISTORY = 10_000;
const MAX_TIMEOUT_SECONDS = 3600;

function metaOf(o: JsonObject): Record<string, unknown> {
  const m = o["metadata"];
  return isPlainObject(m) ? m : {};
}

function line(res: ServerResponse, body: unknown): void {
  if (!res.destroyed && !res.writableEnded) res.write(`${JSON.stringify(body)}\n`);
}

/**
 * A tenant's objects by "namespace/name", recording each change as a watch
 * event. `bump` hands out the next resourceVersion (a DELETED event gets one of
 * its own, as in etcd); ADDED and MODIFIED take the one the store stamped.
 */
export class ObjectsWithHistory extends Map<string, JsonObject> {
  private events: WatchEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  /** A watch may resume from a resourceVersion at or above this; below, it gets 410. */
  private oldestResumable = 0;
  private bump: () => string = () => "0";
  private current: () => string = () => "0";
  /** How often a watch that allows bookmarks gets one. */
  bookmarkEveryMs = 60_000;

  /** Set by the tenant: how to get the next resourceVersion, and the current one. */
  withBump(bump: () => string, current: () => string): this {
    this.bump = bump;
    this.current = current;
    return this;
  }

  override set(key: string, object: JsonObject): this {
    const type: WatchEventType = this.has(key) ? "MODIFIED" : "ADDED";
    super.set(key, object);
    this.record({ type, key, rv: Number(metaOf(object)["resourceVersion"] ?? 0), object: structuredClone(object) });
    return this;
  }

  override delete(key: string): boolean {
    const old = this.get(key);
    if (!super.delete(key) || old === undefined) return false;
    const rv = this.bump();
    const object = structuredClone(old);
    metaOf(object)["resourceVersion"] = rv;
    this.record({ type: "DELETED", key, rv: Number(rv), object });
    return true;
  }

  private record(event: WatchEvent): void {
    this.events.push(event);
    if (this.events.length > MAX_HISTORY) {
      const dropped = this.events.splice(0, this.events.length - MAX_HISTORY);
      const last = dropped[dropped.length - 1];
      if (last !== undefined) this.oldestResumable = Math.max(this.oldestResumable, last.rv);
    }
    for (const w of this.watchers) this.deliver(w, event);
  }

  private deliver(w: Watcher, e: WatchEvent): void {
    if (w.res.destroyed || w.res.writableEnded) {
      this.watchers.delete(w);
      return;
    }
    if (w.namespace !== "" && !e.key.startsWith(`${w.namespace}/`)) return;
    if (!w.matches(e.object)) return;
    line(w.res, { type: e.type, object: e.object });
  }

  /** Forget the history up to `currentRv` (etcd compaction): resuming from an older resourceVersion gets 410. */
  compact(currentRv: number): void {
    this.events = this.events.filter((e) => e.rv > currentRv);
    this.oldestResumable = Math.max(this.oldestResumable, currentRv);
  }

  /** Every open watch ends, as when the API server restarts; clients resume from their last resourceVersion. */
  closeWatches(): number {
    const n = this.watchers.size;
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
    return n;
  }

  /** Forget everything up to now and end every open watch: each resume then gets 410 and must list again. */
  expireWatches(currentRv: number): number {
    this.events = [];
    this.oldestResumable = currentRv + 1;
    return this.closeWatches();
  }

  /**
   * Checks a watch request's parameters (throws a 400 KubeError) and returns
   * what streams it once the 200 may be sent.
   */
  prepareWatch(namespace: string, q: URLSearchParams): (res: ServerResponse) => void {
    const labelReqs = parseLabelSelector(q.get("labelSelector") ?? "");
    const fieldReqs = parseFieldSelector(q.get("fieldSelector") ?? "");
    const matches = (o: JsonObject): boolean => {
      const m = metaOf(o);
      const labels = isPlainObject(m["labels"]) ? (m["labels"] as Record<string, string>) : undefined;
      return matchesLabels(labelReqs, labels) && matchesFields(fieldReqs, String(m["namespace"] ?? ""), String(m["name"] ?? ""));
    };
    const rvText = q.get("resourceVersion") ?? "";
    if (rvText !== "" && !/^\d+$/.test(rvText)) throw badRequest(`invalid resource version: ${JSON.stringify(rvText)}`);
    const timeoutText = q.get("timeoutSeconds");
    if (timeoutText !== null && !/^\d+$/.test(timeoutText)) throw badRequest(`invalid value for timeoutSeconds: ${JSON.stringify(timeoutText)}`);
    const timeoutSeconds = timeoutText === null ? 0 : Math.min(Number(timeoutText), MAX_TIMEOUT_SECONDS);
    const from = rvText === "" ? 0 : Number(rvText);
    const bookmarksAllowed = ["true", "1"].includes(q.get("allowWatchBookmarks") ?? "");
    const inNamespace = (key: string): boolean => namespace === "" || key.startsWith(`${namespace}/`);

    return (res) => {
      res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private", "Audit-Id": crypto.randomUUID() });
      res.flushHeaders();
      if (from === 0) {
        // resourceVersion unset or "0": the current state as ADDED events, then what follows.
        const keys = [...this.keys()].filter(inNamespace).sort();
        for (const key of keys) {
          const o = this.get(key);
          if (o !== undefined && matches(o)) line(res, { type: "ADDED", object: o });
        }
      } else if (from < this.oldestResumable) {
        line(res, {
          type: "ERROR",
          object: failure(410, "Expired", `too old resource version: ${from} (${Math.max(this.oldestResumable, 1)})`),
        });
        res.end();
        return;
      } else {
        for (const e of this.events) {
          if (e.rv > from && inNamespace(e.key) && matches(e.object)) line(res, { type: e.type, object: e.object });
        }
      }
      const w: Watcher = { namespace, matches, res };
      this.watchers.add(w);
      const timer = timeoutSeconds > 0 ? setTimeout(() => res.end(), timeoutSeconds * 1000) : undefined;
      // Events are written as they happen, so at any moment every event up to the current version was sent.
      const bookmarks = bookmarksAllowed
        ? setInterval(
            () =>
              line(res, {
                type: "BOOKMARK",
                object: { kind: "EphemeralRunner", apiVersion: "actions.github.com/v1alpha1", metadata: { resourceVersion: this.current() } },
              }),
            this.bookmarkEveryMs,
          )
        : undefined;
      res.on("close", () => {
        clearInterval(bookmarks);
        clearTimeout(timer);
        this.watchers.delete(w);
      });
    };
  }
}
