// The cluster edge: list and delete ARC EphemeralRunners through
// @kubernetes/client-node, with KUBE_TOKEN as bearer. Nothing else is touched,
// which is all the Role in infra/kubernetes allows.
import { ApiException, createConfiguration, CustomObjectsApi, ServerConfiguration } from "@kubernetes/client-node";
import type { ClusterRunner } from "../reaper/judge.ts";
import { fetchHttpLibrary } from "./fetch-http-library.ts";

const GROUP = "actions.github.com";
const VERSION = "v1alpha1";
const PLURAL = "ephemeralrunners";
const PAGE_SIZE = 500;
const REQUEST_TIMEOUT_MS = 10_000;

export type DeleteOutcome =
  | { kind: "deleted" }
  | { kind: "gone" } // 404: nothing to delete
  | { kind: "failed"; status: number | null; why: string };

export interface Cluster {
  /** Every EphemeralRunner in the namespace (paged), or throws ClusterError. */
  listRunners(namespace: string): Promise<ClusterRunner[]>;
  /** One EphemeralRunner by name, or undefined when the API server answers 404; throws ClusterError otherwise. */
  readRunner(namespace: string, name: string): Promise<ClusterRunner | undefined>;
  /** Deletes exactly this object (uid precondition); its finalizers then run in ARC. */
  deleteRunner(runner: Pick<ClusterRunner, "namespace" | "name" | "uid">): Promise<DeleteOutcome>;
}

export class ClusterError extends Error {
  readonly status: number | null;
  constructor(status: number | null, message: string) {
    super(message);
    this.status = status;
  }
}

export interface ClusterOptions {
  apiUrl: string;
  token: string;
  /** Sent as CF-Access-Client-Id / -Secret when the API server sits behind Cloudflare Access. */
  access?: { clientId: string; clientSecret: string };
  timeoutMs?: number;
  /** Called once per HTTP request to the API server. */
  onRequest?: () => void;
}

export function createCluster(opts: ClusterOptions): Cluster {
  const api = new CustomObjectsApi(
    createConfiguration({
      baseServer: new ServerConfiguration(opts.apiUrl, {}),
      httpApi: fetchHttpLibrary({
        timeoutMs: opts.timeoutMs ?? REQUEST_TIMEOUT_MS,
        onRequest: opts.onRequest,
        headers: opts.access ? { "cf-access-client-id": opts.access.clientId, "cf-access-client-secret": opts.access.clientSecret } : {},
      }),
      authMethods: { BearerToken: `Bearer ${opts.token}` },
    }),
  );
  return {
    async listRunners(namespace) {
      const runners: ClusterRunner[] = [];
      let continueToken: string | undefined;
      do {
        let page: unknown;
        try {
          page = await api.listNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace,
            plural: PLURAL,
            limit: PAGE_SIZE,
            _continue: continueToken,
          });
        } catch (e) {
          throw new ClusterError(statusOf(e), `listing ephemeralrunners in ${namespace}: ${describe(e)}`);
        }
        const list = page as { items?: unknown[]; metadata?: { continue?: string } };
        for (const item of list.items ?? []) {
          const runner = toClusterRunner(namespace, item);
          if (runner) runners.push(runner);
        }
        continueToken = list.metadata?.continue || undefined;
      } while (continueToken);
      return runners;
    },

    async readRunner(namespace, name) {
      let item: unknown;
      try {
        item = await api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name });
      } catch (e) {
        if (statusOf(e) === 404) return undefined;
        throw new ClusterError(statusOf(e), `reading ephemeralrunner ${namespace}/${name}: ${describe(e)}`);
      }
      const runner = toClusterRunner(namespace, item);
      if (!runner) throw new ClusterError(null, `reading ephemeralrunner ${namespace}/${name}: the answer is not an EphemeralRunner`);
      return runner;
    },

    async deleteRunner({ namespace, name, uid }) {
      try {
        await api.deleteNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural: PLURAL,
          name,
          // The uid precondition: a recreated object of the same name is never hit.
          body: { preconditions: { uid }, propagationPolicy: "Background" },
        });
        return { kind: "deleted" };
      } catch (e) {
        const status = statusOf(e);
        if (status === 404) return { kind: "gone" };
        return { kind: "failed", status, why: describe(e) };
      }
    },
  };
}

function toClusterRunner(namespace: string, item: unknown): ClusterRunner | undefined {
  const obj = item as {
    metadata?: { name?: unknown; uid?: unknown; deletionTimestamp?: unknown; creationTimestamp?: unknown };
    status?: { workflowRunId?: unknown; jobRepositoryName?: unknown };
  };
  const name = obj.metadata?.name;
  const uid = obj.metadata?.uid;
  if (typeof name !== "string" || typeof uid !== "string") return undefined;
  const runner: ClusterRunner = { namespace, name, uid };
  if (typeof obj.metadata?.deletionTimestamp === "string") runner.deletionTimestamp = obj.metadata.deletionTimestamp;
  if (typeof obj.metadata?.creationTimestamp === "string") runner.createdAt = obj.metadata.creationTimestamp;
  const runId = obj.status?.workflowRunId;
  if (typeof runId === "number" && runId > 0) runner.workflowRunId = runId;
  if (typeof obj.status?.jobRepositoryName === "string" && obj.status.jobRepositoryName !== "") {
    runner.jobRepositoryName = obj.status.jobRepositoryName;
  }
  return runner;
}

function statusOf(e: unknown): number | null {
  return e instanceof ApiException ? e.code : null;
}

// A Kubernetes Status body says what went wrong in words; prefer it.
function describe(e: unknown): string {
  if (e instanceof ApiException) {
    const body = e.body as unknown;
    let message: string | undefined;
    if (typeof body === "string") {
      try {
        message = (JSON.parse(body) as { message?: string }).message;
      } catch {
        message = body.slice(0, 200);
      }
    } else if (typeof body === "object" && body !== null) {
      message = (body as { message?: string }).message;
    }
    return `HTTP ${e.code}${message ? `: ${message}` : ""}`;
  }
  if (e instanceof Error) return e.name === "TimeoutError" ? "timed out" : e.message;
  return String(e);
}
