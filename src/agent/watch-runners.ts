// List-watch of EphemeralRunners in one namespace: list, then watch from the
// list's resourceVersion, resume from the last resourceVersion seen when a
// watch ends, and list again when the API server says that version is too old
// (410 Gone, as an HTTP status or as a watch ERROR event).
import { Watch, type KubeConfig } from "@kubernetes/client-node";
import type { AgentRunner } from "../cluster/agent-protocol.ts";
import { isFields } from "../cluster/agent-message-fields.ts";
import { BackgroundLoop } from "./background-loop.ts";
import { Backoff, sleep, type BackoffPolicy } from "./backoff.ts";
import { GROUP, PLURAL, VERSION } from "../cluster/ephemeral-runner.ts";
import { ListExpiredError, objectName, type KubeRunners } from "./kube-runners.ts";
import { errorText } from "../model/error-text.ts";
import type { Log } from "./log.ts";
import { toAgentRunner } from "./runner-view.ts";

export interface RunnerEvents {
  /** A full (re)list of the namespace, started at `startedAt` (agent clock): its runners are exactly these, and `skipped` could not be read. */
  listed(namespace: string, runners: AgentRunner[], relist: boolean, startedAt: number, skipped: { name: string; why: string }[]): void;
  /** A watch event brought an object the agent could not read (`gone`: a DELETED one, no longer missing). */
  unreadable(namespace: string, name: string, why: string, gone: boolean): void;
  added(runner: AgentRunner): void;
  removed(runner: AgentRunner): void;
  /** A watch bookmark: every event up to now has arrived (the cache is whole as of now). */
  bookmark(namespace: string): void;
  /** The API server took a watch of the namespace (it is readable again). */
  watching(namespace: string): void;
  /** A list or watch of the namespace failed (e.g. 403: the agent's Role was removed). */
  failed(namespace: string, why: string): void;
}

type WatchEnd = { kind: "closed" | "expired" } | { kind: "failed"; why: string };

/** A watch that ends sooner than this counts as a failure for the back-off. */
const SHORT_WATCH_MS = 1000;

function resourceVersionOf(obj: unknown): string | undefined {
  const meta = isFields(obj) && isFields(obj["metadata"]) ? obj["metadata"] : undefined;
  const rv = meta?.["resourceVersion"];
  return typeof rv === "string" && rv !== "" ? rv : undefined;
}

function statusCodeOf(e: unknown): number | undefined {
  return isFields(e) && typeof e["statusCode"] === "number" ? e["statusCode"] : undefined;
}

export class NamespaceWatch extends BackgroundLoop {
  private rv: string | undefined;
  private readonly namespace: string;
  private readonly kc: KubeConfig;
  private readonly kube: KubeRunners;
  private readonly events: RunnerEvents;
  private readonly log: Log;
  private readonly backoff: Backoff;

  constructor(opts: { namespace: string; kc: KubeConfig; kube: KubeRunners; events: RunnerEvents; log: Log; backoff: BackoffPolicy }) {
    super();
    this.namespace = opts.namespace;
    this.kc = opts.kc;
    this.kube = opts.kube;
    this.events = opts.events;
    this.log = opts.log;
    this.backoff = new Backoff(opts.backoff);
  }

  protected async loop(signal: AbortSignal): Promise<void> {
    let listedOnce = false;
    while (!signal.aborted) {
      if (this.rv === undefined) {
        // A list is whole as of its start at the latest: anything absent from it was absent then.
        const startedAt = Date.now();
        try {
          const list = await this.kube.list(this.namespace);
          if (signal.aborted) return;
          this.rv = list.resourceVersion;
          this.log("info", listedOnce ? "listed again" : "listed", { namespace: this.namespace, runners: list.runners.length, resourceVersion: this.rv });
          this.events.listed(this.namespace, list.runners, listedOnce, startedAt, list.skipped);
          listedOnce = true;
        } catch (e) {
          const wait = this.backoff.next();
          this.log("warn", "list failed", { namespace: this.namespace, error: errorText(e), expired: e instanceof ListExpiredError, retryInMs: wait });
          if (!(e instanceof ListExpiredError)) this.events.failed(this.namespace, `list: ${errorText(e)}`);
          await sleep(wait, signal);
          continue;
        }
      }
      const started = Date.now();
      const end = await this.watchOnce(this.rv, signal);
      if (signal.aborted) return;
      const lasted = Date.now() - started >= SHORT_WATCH_MS;
      if (end.kind === "expired") {
        this.log("info", "watch expired (410 Gone): listing again", { namespace: this.namespace, resourceVersion: this.rv });
        this.rv = undefined;
        // A 410 right after a fresh list, again and again, must not become a tight loop.
        if (!lasted) await sleep(this.backoff.next(), signal);
        continue;
      }
      if (end.kind === "closed" && lasted) {
        this.backoff.reset();
        continue;
      }
      const wait = this.backoff.next();
      if (end.kind === "failed") {
        this.log("warn", "watch failed", { namespace: this.namespace, error: end.why, retryInMs: wait });
        this.events.failed(this.namespace, `watch: ${end.why}`);
      }
      await sleep(wait, signal);
    }
  }

  /** One watch request from `rv`; resolves when it ends, however it ends. */
  private watchOnce(rv: string, signal: AbortSignal): Promise<WatchEnd> {
    return new Promise((resolve) => {
      let expired = false;
      let failure: string | undefined;
      let controller: AbortController | undefined;
      let settled = false;
      const finish = (end: WatchEnd): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        controller?.abort();
        resolve(end);
      };
      const onAbort = (): void => finish({ kind: "closed" });
      signal.addEventListener("abort", onAbort);
      const path = `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(this.namespace)}/${PLURAL}`;
      // client-node calls this inside its own try and drops what it throws: an error here would be lost, and the
      // cache behind it no longer whole. So it ends the watch as failed (logged, counted) and lists again.
      const onEvent = (type: string, obj: unknown): void => {
        if (settled) return;
        try {
          handle(type, obj);
        } catch (e) {
          this.rv = undefined;
          finish({ kind: "failed", why: `handling the ${type} event failed: ${errorText(e)} (listing again)` });
        }
      };
      const handle = (type: string, obj: unknown): void => {
        if (type === "ERROR") {
          const code = isFields(obj) ? obj["code"] : undefined;
          if (code === 410) expired = true;
          else failure = `watch ERROR event: ${isFields(obj) && typeof obj["message"] === "string" ? obj["message"] : JSON.stringify(obj)}`;
          return;
        }
        const next = resourceVersionOf(obj);
        if (type === "ADDED" || type === "MODIFIED" || type === "DELETED") {
          let runner: AgentRunner;
          try {
            runner = toAgentRunner(obj);
          } catch (e) {
            this.log("warn", "skipping an EphemeralRunner the ledger could not read", { namespace: this.namespace, problem: errorText(e) });
            this.events.unreadable(this.namespace, objectName(obj), errorText(e).slice(0, 300), type === "DELETED");
            if (next !== undefined) this.rv = next;
            return;
          }
          if (type === "DELETED") this.events.removed(runner);
          else this.events.added(runner);
        }
        // BOOKMARK carries only a resourceVersion: every event up to it has arrived.
        if (next !== undefined) this.rv = next;
        if (type === "BOOKMARK") this.events.bookmark(this.namespace);
      };
      const onDone = (err: unknown): void => {
        if (expired || statusCodeOf(err) === 410) finish({ kind: "expired" });
        else if (failure !== undefined) finish({ kind: "failed", why: failure });
        // client-node ends a quiet watch after 30 s without data: resume, it is no failure.
        else if (err === null || err === undefined || (err instanceof Error && err.name === "TimeoutError")) finish({ kind: "closed" });
        else {
          const code = statusCodeOf(err);
          finish({ kind: "failed", why: code !== undefined ? `HTTP ${code} ${errorText(err)}` : errorText(err) });
        }
      };
      new Watch(this.kc)
        .watch(path, { resourceVersion: rv, allowWatchBookmarks: true }, onEvent, onDone)
        .then((c: AbortController) => {
          controller = c;
          if (settled) c.abort();
          else this.events.watching(this.namespace);
        })
        .catch((e: unknown) => finish({ kind: "failed", why: errorText(e) }));
    });
  }
}
