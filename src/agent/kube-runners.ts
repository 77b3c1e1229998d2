// The agent's calls to the Kubernetes API: list EphemeralRunners (paged) and
// delete one by uid. Exactly what infra/agent's Role allows (with watch, in
// watch-runners.ts): get, list, watch, delete on ephemeralrunners.actions.github.com;
// and patch (a held deletion finished) where the optional overlay infra/agent/finish-stuck grants it.
import { ApiException, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { AGENT_API_TIMEOUT_MS, type AgentRunner, type FinishOrderOutcome } from "../cluster/agent-protocol.ts";
import { isFields } from "../cluster/agent-message-fields.ts";
import { finishPatch } from "../cluster/finish-patch.ts";
import { GROUP, PAGE_SIZE, PLURAL, readEphemeralRunnerPage, VERSION } from "../cluster/ephemeral-runner.ts";
import { errorText } from "../model/error-text.ts";
import type { Log } from "./log.ts";
import { toAgentRunner } from "./runner-view.ts";

const REQUEST_TIMEOUT_MS = AGENT_API_TIMEOUT_MS;

export type DeleteResult = { outcome: "deleted" | "gone" | "failed"; why: string };
export type FinishResult = { outcome: FinishOrderOutcome; why: string };

interface RunnerList {
  runners: AgentRunner[];
  resourceVersion: string;
  /** Objects of the list the agent could not read (its namespace is then unreadable, never whole). */
  skipped: { name: string; why: string }[];
}

export interface KubeRunners {
  /** Every EphemeralRunner of the namespace and the list's resourceVersion (where a watch resumes). */
  list(namespace: string): Promise<RunnerList>;
  /** DELETE with preconditions.uid and propagationPolicy Background. */
  delete(namespace: string, name: string, uid: string): Promise<DeleteResult>;
  /** A GET by name: the object now, or null for a 404; throws on anything else. */
  read(namespace: string, name: string): Promise<AgentRunner | null>;
  /** A GET by name with the object's finalizers (a held deletion looked at), or null for a 404; throws on anything else. */
  readHeld(namespace: string, name: string): Promise<{ runner: AgentRunner; finalizers: string[] } | null>;
  /** The JSON patch (finish-patch.ts) that tests uid and finalizers, then removes them. */
  finish(namespace: string, name: string, uid: string, finalizers: readonly string[]): Promise<FinishResult>;
}

export class ListExpiredError extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The Status message of an ApiException (client-node keeps the body as JSON text). */
function statusMessage(e: ApiException<unknown>): string {
  let body: unknown = e.body;
  if (typeof e.body === "string") {
    const text = e.body;
    try {
      body = JSON.parse(text);
    } catch {
      return text.slice(0, 300);
    }
  }
  return isFields(body) && typeof body["message"] === "string" ? body["message"] : `HTTP ${e.code}`;
}

/** An object's metadata.name, for saying which could not be read. */
export function objectName(obj: unknown): string {
  const meta = typeof obj === "object" && obj !== null ? (obj as { metadata?: unknown }).metadata : undefined;
  const name = typeof meta === "object" && meta !== null ? (meta as { name?: unknown }).name : undefined;
  return typeof name === "string" && name !== "" ? name.slice(0, 253) : "(unnamed)";
}

export function kubeRunners(kc: KubeConfig, log: Log, timeoutMs = REQUEST_TIMEOUT_MS): KubeRunners {
  const api = kc.makeApiClient(CustomObjectsApi);
  return {
    async list(namespace) {
      const runners: AgentRunner[] = [];
      const skipped: RunnerList["skipped"] = [];
      let cont: string | undefined;
      let resourceVersion = "";
      do {
        let page: unknown;
        try {
          page = await withTimeout(
            api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, limit: PAGE_SIZE, _continue: cont }),
            timeoutMs,
            `list ${namespace}`,
          );
        } catch (e) {
          if (e instanceof ApiException && e.code === 410) throw new ListExpiredError(`list ${namespace}: ${statusMessage(e)}`);
          if (e instanceof ApiException) throw new Error(`list ${namespace}: ${e.code} ${statusMessage(e)}`);
          throw e;
        }
        let read: ReturnType<typeof readEphemeralRunnerPage>;
        try {
          read = readEphemeralRunnerPage(page);
        } catch (e) {
          throw new Error(`list ${namespace}: ${errorText(e)}`, { cause: e });
        }
        for (const item of read.items) {
          try {
            runners.push(toAgentRunner(item));
          } catch (e) {
            log("warn", "skipping an EphemeralRunner the ledger could not read", { namespace, problem: errorText(e) });
            skipped.push({ name: objectName(item), why: errorText(e).slice(0, 300) });
          }
        }
        resourceVersion = read.metadata?.resourceVersion ?? "";
        cont = read.metadata?.continue || undefined;
      } while (cont !== undefined);
      if (resourceVersion === "") throw new Error(`list ${namespace}: the answer has no resourceVersion`);
      return { runners, resourceVersion, skipped };
    },

    async read(namespace, name) {
      try {
        const object = await withTimeout(
          api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name }),
          timeoutMs,
          `read ${namespace}/${name}`,
        );
        return toAgentRunner(object);
      } catch (e) {
        if (e instanceof ApiException && e.code === 404) return null;
        if (e instanceof ApiException) throw new Error(`read ${namespace}/${name}: ${e.code} ${statusMessage(e)}`);
        throw e;
      }
    },

    async readHeld(namespace, name) {
      try {
        const object = await withTimeout(
          api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name }),
          timeoutMs,
          `read ${namespace}/${name}`,
        );
        const meta = isFields(object) && isFields(object["metadata"]) ? object["metadata"] : {};
        const raw = meta["finalizers"];
        const finalizers = Array.isArray(raw) ? raw.filter((f): f is string => typeof f === "string") : [];
        return { runner: toAgentRunner(object), finalizers };
      } catch (e) {
        if (e instanceof ApiException && e.code === 404) return null;
        if (e instanceof ApiException) throw new Error(`read ${namespace}/${name}: ${e.code} ${statusMessage(e)}`);
        throw e;
      }
    },

    async finish(namespace, name, uid, finalizers) {
      try {
        // client-node sends an array body as application/json-patch+json: all of it or none, a failed test is 422.
        await withTimeout(
          api.patchNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name, body: finishPatch(uid, finalizers) }),
          timeoutMs,
          `patch ${namespace}/${name}`,
        );
        return { outcome: "finished", why: `removed ARC's finalizers (${finalizers.join(", ")}) from ${namespace}/${name} (uid ${uid})` };
      } catch (e) {
        if (!(e instanceof ApiException)) return { outcome: "failed", why: `the API server could not be reached: ${errorText(e)}` };
        const message = statusMessage(e);
        if (e.code === 404) return { outcome: "gone", why: `no ${namespace}/${name} in the cluster: ${message}` };
        if (e.code === 403)
          return { outcome: "refused", why: `the API server answered 403 (the Role lacks patch: apply infra/agent/finish-stuck): ${message}` };
        if (e.code === 409 || e.code === 422) return { outcome: "conflict", why: `the object changed (${e.code}): ${message}` };
        return { outcome: "failed", why: `the API server answered ${e.code}: ${message}` };
      }
    },

    async delete(namespace, name, uid) {
      try {
        await withTimeout(
          api.deleteNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace,
            plural: PLURAL,
            name,
            body: { preconditions: { uid }, propagationPolicy: "Background" },
          }),
          timeoutMs,
          `delete ${namespace}/${name}`,
        );
        return { outcome: "deleted", why: `deleted ${namespace}/${name} (uid ${uid}); ARC's finalizers now remove the runner and its pod` };
      } catch (e) {
        if (e instanceof ApiException) {
          const message = statusMessage(e);
          if (e.code === 404) return { outcome: "gone", why: `no ${namespace}/${name} in the cluster: ${message}` };
          // 409 saying the uid precondition failed: the name now belongs to another object. Any other
          // conflict (an admission hook, a proxy) says nothing of the object: a failure, tried again.
          if (e.code === 409 && /precondition failed: uid/i.test(message))
            return { outcome: "gone", why: `${namespace}/${name} with uid ${uid} no longer exists: ${message}` };
          return { outcome: "failed", why: `the API server answered ${e.code}: ${message}` };
        }
        return { outcome: "failed", why: `the API server could not be reached: ${errorText(e)}` };
      }
    },
  };
}
