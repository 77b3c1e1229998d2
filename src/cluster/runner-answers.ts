// Reads the API server's answers about EphemeralRunners, strictly: a list is an
// EphemeralRunnerList whose every item has a name and a uid, a read is the
// EphemeralRunner asked for, a delete answers with the object or a success
// Status, and a 404 means "not there" only when it is a Kubernetes Status.
// Anything else throws UnacceptableAnswer, which keeps every runner of the
// namespace rather than reading a proxy's answer as the cluster's.
import { ApiException } from "@kubernetes/client-node";
import type { ClusterRunner } from "../model/runner.ts";
import { arcFieldsOf } from "./arc-failure.ts";
import { UnacceptableAnswer } from "./http-answer.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A kind for a message: quoted and cut short, or "no kind". */
function kindOf(body: unknown): string {
  if (!isObj(body)) return Array.isArray(body) ? "an array" : `a ${body === null ? "null" : typeof body}`;
  return typeof body["kind"] === "string" ? `kind ${JSON.stringify(body["kind"].slice(0, 60))}` : "no kind";
}

export function runnersFromList(status: number, namespace: string, page: unknown): { runners: ClusterRunner[]; continueToken: string | undefined } {
  if (!isObj(page) || page["kind"] !== "EphemeralRunnerList") {
    throw new UnacceptableAnswer(status, `HTTP ${status}: expected kind "EphemeralRunnerList", got ${kindOf(page)}`);
  }
  const items = page["items"];
  if (!Array.isArray(items)) throw new UnacceptableAnswer(status, `HTTP ${status}: the EphemeralRunnerList has no items array`);
  const runners = items.map((item: unknown, i) => {
    const runner = toClusterRunner(namespace, item);
    if (!runner) throw new UnacceptableAnswer(status, `HTTP ${status}: item ${i} of the EphemeralRunnerList has no metadata.name or metadata.uid`);
    return runner;
  });
  const metadata = page["metadata"];
  const next = isObj(metadata) ? metadata["continue"] : undefined;
  if (next !== undefined && typeof next !== "string")
    throw new UnacceptableAnswer(status, `HTTP ${status}: the EphemeralRunnerList's metadata.continue is not a string`);
  return { runners, continueToken: next || undefined };
}

export function runnerFromRead(status: number, namespace: string, name: string, body: unknown): ClusterRunner {
  if (!isObj(body) || body["kind"] !== "EphemeralRunner") {
    throw new UnacceptableAnswer(status, `HTTP ${status}: expected kind "EphemeralRunner", got ${kindOf(body)}`);
  }
  const runner = toClusterRunner(namespace, body);
  if (!runner) throw new UnacceptableAnswer(status, `HTTP ${status}: the EphemeralRunner has no metadata.name or metadata.uid`);
  if (runner.name !== name) throw new UnacceptableAnswer(status, `HTTP ${status}: an EphemeralRunner of another name`);
  return runner;
}

/** Throws unless a delete's answer is the object (being deleted) or a success Status. */
export function checkDeleteAnswer(status: number, name: string, body: unknown): void {
  if (isObj(body) && body["kind"] === "Status") {
    if (body["status"] === "Success") return;
    throw new UnacceptableAnswer(status, `HTTP ${status}: a Status that is not "Success"`);
  }
  if (isObj(body) && body["kind"] === "EphemeralRunner") {
    const metadata = body["metadata"];
    if (isObj(metadata) && metadata["name"] === name) return;
    throw new UnacceptableAnswer(status, `HTTP ${status}: an EphemeralRunner of another name`);
  }
  throw new UnacceptableAnswer(status, `HTTP ${status}: expected kind "EphemeralRunner" or "Status", got ${kindOf(body)}`);
}

/** The Kubernetes Status in an error answer, if it is one (the HTTP library has already required JSON). */
function statusBody(e: ApiException<unknown>): Obj | undefined {
  let body: unknown = e.body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
  }
  return isObj(body) && body["kind"] === "Status" ? body : undefined;
}

/** A 404 that the API server said: a Status with code 404 (a proxy's 404 page is not). */
export function isNotFound(e: unknown): boolean {
  if (!(e instanceof ApiException) || e.code !== 404) return false;
  return statusBody(e)?.["code"] === 404;
}

/**
 * A 409 Status that says the uid precondition failed ("Precondition failed: UID in precondition: …"):
 * the name now belongs to another object, so the one we judged is gone. Any other conflict (an
 * admission hook, "the object has been modified", a proxy) says nothing of the object.
 */
export function isUidPreconditionFailed(e: unknown): boolean {
  if (!(e instanceof ApiException) || e.code !== 409) return false;
  const status = statusBody(e);
  return status?.["code"] === 409 && typeof status["message"] === "string" && /precondition failed: uid/i.test(status["message"]);
}

export function statusOf(e: unknown): number | null {
  if (e instanceof ApiException) return e.code;
  if (e instanceof UnacceptableAnswer) return e.status;
  return null;
}

/** What went wrong, in words: the Status message of an API error, never a body that is not a Status. */
export function describe(e: unknown): string {
  if (e instanceof UnacceptableAnswer) return e.message;
  if (e instanceof ApiException) {
    if (e.body === undefined || e.body === null || e.body === "") return `HTTP ${e.code}`;
    const status = statusBody(e);
    if (!status) return `HTTP ${e.code}: the body is not a Kubernetes Status`;
    const message = status["message"];
    return typeof message === "string" && message !== "" ? `HTTP ${e.code}: ${message.slice(0, 300)}` : `HTTP ${e.code}`;
  }
  if (e instanceof Error) return e.name === "TimeoutError" ? "timed out" : e.message;
  return String(e);
}

function toClusterRunner(namespace: string, item: unknown): ClusterRunner | undefined {
  const obj = item as {
    metadata?: { name?: unknown; uid?: unknown; deletionTimestamp?: unknown; creationTimestamp?: unknown };
    status?: { workflowRunId?: unknown; jobRepositoryName?: unknown };
  } | null;
  const name = obj?.metadata?.name;
  const uid = obj?.metadata?.uid;
  if (typeof name !== "string" || name === "" || typeof uid !== "string" || uid === "") return undefined;
  const runner: ClusterRunner = { namespace, name, uid };
  if (typeof obj?.metadata?.deletionTimestamp === "string") runner.deletionTimestamp = obj.metadata.deletionTimestamp;
  if (typeof obj?.metadata?.creationTimestamp === "string") runner.createdAt = obj.metadata.creationTimestamp;
  const runId = obj?.status?.workflowRunId;
  if (typeof runId === "number" && runId > 0) runner.workflowRunId = runId;
  if (typeof obj?.status?.jobRepositoryName === "string" && obj.status.jobRepositoryName !== "") {
    runner.jobRepositoryName = obj.status.jobRepositoryName;
  }
  // Phase, ARC's reason and message, failures, scale set and finalizers: shown, and acted on only as issue 24 says.
  Object.assign(runner, arcFieldsOf(item));
  return runner;
}
