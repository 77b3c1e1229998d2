// The cluster edge: list, read and delete ARC EphemeralRunners (and finish a
// held deletion) through @kubernetes/client-node, with KUBE_TOKEN as bearer.
// Nothing else is touched, which is all the Role in infra/kubernetes allows.
// Answers are read strictly (runner-answers.ts, http-answer.ts): a redirect,
// HTML or `{}` is an error, never an empty list or a deletion. The read, the
// delete and the finish are the agent's calls too (read-runner.ts,
// delete-runner.ts, finish-deletion.ts). A sweep lists as Tables where the
// server serves them (list-as-table.ts), else full objects; reads by name stay
// full objects (one object each, every field read after them).
import { ApiException, createConfiguration, CustomObjectsApi, ServerConfiguration } from "@kubernetes/client-node";
import type { ClusterRunner } from "../model/runner.ts";
import { GROUP, PAGE_SIZE, PLURAL, VERSION } from "./ephemeral-runner.ts";
import { deleteOutcome, deleteRunnerByUid, type DeleteOutcome } from "./delete-runner.ts";
import { fetchHttpLibrary, type SendOptions, sendChecked } from "./fetch-http-library.ts";
import { finishHeldDeletion, finishOutcome } from "./finish-deletion.ts";
import type { FinishOutcome } from "./finish-patch.ts";
import { readRunnerByName } from "./read-runner.ts";
import { KUBE_SYSTEM_PATH, type KubeSystemAnswer, kubeSystemUid } from "./kube-system-uid.ts";
import { listAsTable, ReadFailed } from "./list-as-table.ts";
import { TABLE_ACCEPT, TableRefused } from "./runner-table.ts";
import { type ListShapeMemory, noteHolds } from "../model/list-shape.ts";
import { errorText } from "../model/error-text.ts";
import { withoutManagedFields } from "./without-managed-fields.ts";
import { describe, runnersFromList, statusOf, toClusterRunner } from "./runner-answers.ts";

export type { DeleteOutcome } from "./delete-runner.ts";

const REQUEST_TIMEOUT_MS = 10_000;

const parseListPage = (text: string): unknown => JSON.parse(withoutManagedFields(text));

/** What an order carries besides the object: the run the runner was judged on, and why (the agent checks and logs them). */
export interface DeleteContext {
  runId?: number;
  reason?: string;
  /** A runner ARC marked Failed (no run); the agent checks it is still Failed without a run. */
  cause?: "failed";
}

export interface Cluster {
  /** Which kind of error this cluster's failures count as (arc_reaper_errors_total{kind}): "cluster" unless said. */
  readonly errorKind?: "cluster" | "agent";
  /**
   * Every EphemeralRunner in the namespace (paged), or throws ClusterError. `now` (ms, default the clock's): the
   * caller's time, by which a listing as Tables tells which runners may count as idle (list-as-table.ts).
   */
  listRunners(namespace: string, now?: number): Promise<ClusterRunner[]>;
  /**
   * One EphemeralRunner by name, or undefined when the API server answers 404 (a Status); throws ClusterError otherwise.
   * `since` (ms): what the caller needs to know about is newer than this; a view whose absence of
   * `name` is already certain after it may answer without a fresh read (the agent's).
   */
  readRunner(namespace: string, name: string, since?: number): Promise<ClusterRunner | undefined>;
  /**
   * For a view that is not a read of the API server (the agent's): the absence of
   * `name` in it is certain as of this time (ms). Absent: every answer is a fresh read, as of when it was sent.
   */
  viewAsOf?(namespace: string, name: string): number;
  /**
   * For a view held beside the ledger (the agent's): the object of `name` it shows, without any call; undefined
   * when it shows none or cannot be used. Absent (direct mode): nothing is known without a call.
   */
  inView?(namespace: string, name: string): ClusterRunner | undefined;
  /** Deletes exactly this object (uid precondition); its finalizers then run in ARC. Never throws: an unacceptable answer is "failed". */
  deleteRunner(runner: Pick<ClusterRunner, "namespace" | "name" | "uid">, context?: DeleteContext): Promise<DeleteOutcome>;
  /** The cluster's identity (its kube-system namespace's uid), read from the API server now; absent where it cannot be read (the agent's reports it). Never throws. */
  identity?(): Promise<KubeSystemAnswer>;
  /** Removes exactly these finalizers from exactly this object; absent where it cannot be done. Never throws. */
  finishDeletion?(runner: Pick<ClusterRunner, "namespace" | "name" | "uid">, finalizers: readonly string[]): Promise<FinishOutcome>;
}

export class ClusterError extends Error {
  readonly status: number | null;
  constructor(status: number | null, message: string, options?: ErrorOptions) {
    super(message, options);
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
  /**
   * List as Tables (list-as-table.ts), with the cluster's note of a fallback to full objects kept in `memory`,
   * and REAPER_IDLE_ALERT_SECONDS (which runners the idle count may read the version of). Absent: full objects.
   */
  tables?: { idleAlertSeconds: number; memory: ListShapeMemory };
}

export function createCluster(opts: ClusterOptions): Cluster {
  const send: SendOptions = {
    origin: new URL(opts.apiUrl).origin,
    timeoutMs: opts.timeoutMs ?? REQUEST_TIMEOUT_MS,
    onRequest: opts.onRequest,
    headers: opts.access ? { "cf-access-client-id": opts.access.clientId, "cf-access-client-secret": opts.access.clientSecret } : {},
  };
  const api = new CustomObjectsApi(
    createConfiguration({
      baseServer: new ServerConfiguration(opts.apiUrl, {}),
      httpApi: fetchHttpLibrary(send),
      authMethods: { BearerToken: `Bearer ${opts.token}` },
    }),
  );
  const listPage = pageLister(opts, send);
  return {
    listRunners(namespace, now = Date.now()) {
      return opts.tables ? listTables(api, listPage, namespace, opts.tables, now) : listFull(listPage, namespace);
    },

    async readRunner(namespace, name) {
      const answer = await readRunnerByName(api, namespace, name);
      if (answer.kind === "found") return toClusterRunner(namespace, answer.runner);
      if (answer.kind === "absent") return undefined;
      const { status, why, cause } = answer.failure;
      throw new ClusterError(status, `reading ephemeralrunner ${namespace}/${name}: ${why}`, { cause });
    },

    async deleteRunner(runner) {
      return deleteOutcome(await deleteRunnerByUid(api, runner));
    },

    async finishDeletion(runner, finalizers) {
      return finishOutcome(await finishHeldDeletion(api, runner, finalizers));
    },

    async identity() {
      try {
        const url = `${opts.apiUrl}${KUBE_SYSTEM_PATH}`;
        const answer = await sendChecked(send, url, { method: "GET", headers: { accept: "application/json", authorization: `Bearer ${opts.token}` } });
        return kubeSystemUid(answer.status, answer.json);
      } catch (e) {
        return { kind: "unknown", forbidden: false, why: `reading namespace kube-system: ${describe(e)}` };
      }
    },
  };
}

/** One page of a namespace's EphemeralRunners, full objects or a Table. */
type ListPage = (namespace: string, continueToken: string | undefined, shape?: "full" | "table") => Promise<{ status: number; body: unknown }>;

/**
 * One list page, parsed once. Not through client-node: it would parse each page's JSON a second time
 * (after checkHttpAnswer's), a third of a steady sweep's CPU at 10,000 runners. Its errors are client-node's
 * (ApiException with the body as text), so they read as every other call's. Parsed without the objects'
 * managedFields (without-managed-fields.ts): three quarters of the parse, and never read.
 */
function pageLister(opts: ClusterOptions, send: SendOptions): ListPage {
  return async (namespace, continueToken, shape = "full") => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (continueToken) query.set("continue", continueToken);
    if (shape === "table") query.set("includeObject", "Metadata");
    const url = `${opts.apiUrl}/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${PLURAL}?${query}`;
    const accept = shape === "table" ? TABLE_ACCEPT : "application/json";
    const answer = await sendChecked(send, url, { method: "GET", headers: { accept, authorization: `Bearer ${opts.token}` } }, parseListPage);
    if (answer.status === 401) throw new ApiException(401, "Unauthorized", undefined, answer.headers);
    // 406: an API server (or CRD handler) without Tables; it lists full objects.
    if (shape === "table" && answer.status === 406) throw new TableRefused(describe(new ApiException(406, "", answer.text, answer.headers)));
    if (answer.status < 200 || answer.status > 299) throw new ApiException(answer.status, "Unknown API Status Code!", answer.text, answer.headers);
    return { status: answer.status, body: answer.json };
  };
}

/** Every page of a namespace as full objects; `first`: its first page, when a request for Tables answered it. */
async function listFull(listPage: ListPage, namespace: string, first?: { status: number; body: unknown }): Promise<ClusterRunner[]> {
  const runners: ClusterRunner[] = [];
  let continueToken: string | undefined;
  let given = first;
  do {
    try {
      const page = given ?? (await listPage(namespace, continueToken));
      given = undefined;
      const read = runnersFromList(page.status, namespace, page.body);
      runners.push(...read.runners);
      continueToken = read.continueToken;
    } catch (e) {
      throw new ClusterError(statusOf(e), `listing ephemeralrunners in ${namespace}: ${describe(e)}`, { cause: e });
    }
  } while (continueToken);
  return runners;
}

/** A namespace as Tables, unless the cluster's note says it falls back to full objects (noted on a refusal, cleared when Tables serve). */
async function listTables(
  api: CustomObjectsApi,
  listPage: ListPage,
  namespace: string,
  tables: NonNullable<ClusterOptions["tables"]>,
  now: number,
): Promise<ClusterRunner[]> {
  const note = tables.memory.note();
  if (noteHolds(note, now)) return listFull(listPage, namespace);
  let runners: ClusterRunner[];
  try {
    runners = await listAsTable({
      namespace,
      now,
      idleAlertSeconds: tables.idleAlertSeconds,
      page: (continueToken) => listPage(namespace, continueToken, "table"),
      listFull: () => listFull(listPage, namespace),
      read: (name) => readRunnerByName(api, namespace, name),
    });
  } catch (e) {
    if (e instanceof TableRefused) {
      tables.memory.refused(e.message, now);
      // The fallback clause's answer is the list's first page: carried on from, not asked again.
      return listFull(listPage, namespace, e.fullPage);
    }
    if (e instanceof ClusterError) throw e;
    const status = e instanceof ReadFailed ? e.failure.status : statusOf(e);
    throw new ClusterError(status, `listing ephemeralrunners in ${namespace}: ${e instanceof ReadFailed ? errorText(e) : describe(e)}`, { cause: e });
  }
  if (note) tables.memory.served();
  return runners;
}
