// The agent's calls to the Kubernetes API: list EphemeralRunners (paged), read
// one, delete one by uid and finish a held deletion (the last three are direct
// mode's calls too: src/cluster/read-runner.ts, delete-runner.ts,
// finish-deletion.ts; here they get the agent's timeout and words). Exactly
// what infra/agent's Role allows (with watch, in watch-runners.ts): get, list,
// watch, delete on ephemeralrunners.actions.github.com; and patch (a held
// deletion finished) where the optional overlay infra/agent/finish-stuck grants it.
import { ApiException, CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { AGENT_API_TIMEOUT_MS, type AgentRunner, type FinishOrderOutcome } from "../cluster/agent-protocol.ts";
import { isFields } from "../cluster/agent-message-fields.ts";
import { deleteRunnerByUid, type DeleteAnswer } from "../cluster/delete-runner.ts";
import { GROUP, PAGE_SIZE, PLURAL, readEphemeralRunnerPage, VERSION } from "../cluster/ephemeral-runner.ts";
import { finishHeldDeletion, type FinishAnswer } from "../cluster/finish-deletion.ts";
import { readRunnerByName, type ReadAnswer } from "../cluster/read-runner.ts";
import type { ApiFailure } from "../cluster/runner-answers.ts";
import { type KubeSystemAnswer, kubeSystemUid } from "../cluster/kube-system-uid.ts";
import { errorText } from "../model/error-text.ts";
import type { Log } from "./log.ts";
import { agentRunnerOf, toAgentRunner } from "./runner-view.ts";

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
  /** The cluster's identity: the kube-system namespace's uid (kube-system-uid.ts); never throws. */
  identity(): Promise<KubeSystemAnswer>;
}

export class ListExpiredError extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The Status message of a list's ApiException (client-node keeps the body as JSON text). */
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

/** Why a call failed, in the agent's words: what the API server answered, or that its answer or the server could not be had. */
function failureWords(f: ApiFailure): string {
  if (f.said !== undefined) return `the API server answered ${f.status}: ${f.said}`;
  if (f.status !== null) return `the API server's answer could not be read: ${f.why}`;
  return `the API server could not be reached: ${f.why}`;
}

/** A read's runner (with its finalizers), null for a 404, or the failure thrown, naming the object. */
function readResult(answer: ReadAnswer, where: string): { runner: AgentRunner; finalizers: string[] } | null {
  if (answer.kind === "absent") return null;
  if (answer.kind === "found") return { runner: agentRunnerOf(answer.runner), finalizers: answer.runner.finalizers ?? [] };
  const f = answer.failure;
  // No answer at all: the error as it came (a timeout already names the read).
  if (f.status === null) throw f.cause;
  throw new Error(f.said !== undefined ? `read ${where}: ${f.status} ${f.said}` : `read ${where}: ${f.why}`, { cause: f.cause });
}

function deleteResult(answer: DeleteAnswer, where: string, uid: string): DeleteResult {
  switch (answer.kind) {
    case "deleted":
      return { outcome: "deleted", why: `deleted ${where} (uid ${uid}); ARC's finalizers now remove the runner and its pod` };
    case "gone": {
      const said = answer.failure.said ?? answer.failure.why;
      // 404, or 409 saying the uid precondition failed: the name now belongs to another object.
      if (answer.failure.status === 404) return { outcome: "gone", why: `no ${where} in the cluster: ${said}` };
      return { outcome: "gone", why: `${where} with uid ${uid} no longer exists: ${said}` };
    }
    default:
      return { outcome: "failed", why: failureWords(answer.failure) };
  }
}

function finishResult(answer: FinishAnswer, where: string, uid: string, finalizers: readonly string[]): FinishResult {
  if (answer.kind === "finished") return { outcome: "finished", why: `removed ARC's finalizers (${finalizers.join(", ")}) from ${where} (uid ${uid})` };
  const said = answer.failure.said ?? answer.failure.why;
  switch (answer.kind) {
    case "gone":
      return { outcome: "gone", why: `no ${where} in the cluster: ${said}` };
    case "refused":
      return { outcome: "refused", why: `the API server answered 403 (the Role lacks patch: apply infra/agent/finish-stuck): ${said}` };
    case "conflict":
      return { outcome: "conflict", why: `the object changed (${answer.failure.status}): ${said}` };
    default:
      return { outcome: "failed", why: failureWords(answer.failure) };
  }
}

/** An object's metadata.name, for saying which could not be read. */
export function objectName(obj: unknown): string {
  const meta = typeof obj === "object" && obj !== null ? (obj as { metadata?: unknown }).metadata : undefined;
  const name = typeof meta === "object" && meta !== null ? (meta as { name?: unknown }).name : undefined;
  return typeof name === "string" && name !== "" ? name.slice(0, 253) : "(unnamed)";
}

export function kubeRunners(kc: KubeConfig, log: Log, timeoutMs = REQUEST_TIMEOUT_MS): KubeRunners {
  const api = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const within = <T>(call: Promise<T>, what: string): Promise<T> => withTimeout(call, timeoutMs, what);
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
      return readResult(await readRunnerByName(api, namespace, name, within), `${namespace}/${name}`)?.runner ?? null;
    },

    async readHeld(namespace, name) {
      return readResult(await readRunnerByName(api, namespace, name, within), `${namespace}/${name}`);
    },

    async finish(namespace, name, uid, finalizers) {
      return finishResult(await finishHeldDeletion(api, { namespace, name, uid }, finalizers, within), `${namespace}/${name}`, uid, finalizers);
    },

    async identity() {
      try {
        const ns = await within(core.readNamespace({ name: "kube-system" }), "read namespace kube-system");
        return kubeSystemUid(200, { kind: "Namespace", metadata: { name: ns.metadata?.name, uid: ns.metadata?.uid } });
      } catch (e) {
        if (e instanceof ApiException) return kubeSystemUid(e.code, undefined);
        return { kind: "unknown", forbidden: false, why: `reading namespace kube-system: ${errorText(e)}` };
      }
    },

    async delete(namespace, name, uid) {
      return deleteResult(await deleteRunnerByUid(api, { namespace, name, uid }, within), `${namespace}/${name}`, uid);
    },
  };
}
