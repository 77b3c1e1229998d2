// Reads the API server's answers about EphemeralRunners, strictly: a list is an
// EphemeralRunnerList whose every item has a name and a uid, a read is the
// EphemeralRunner asked for, a delete answers with the object or a success
// Status, and a 404 means "not there" only when it is a Kubernetes Status.
// Anything else throws UnacceptableAnswer, which keeps every runner of the
// namespace rather than reading a proxy's answer as the cluster's.
import { ApiException } from "@kubernetes/client-node";
import * as v from "valibot";
import type { ClusterRunner } from "../model/runner.ts";
import { type EphemeralRunner, readEphemeralRunner, readEphemeralRunnerPage } from "./ephemeral-runner.ts";
import { UnacceptableAnswer } from "./http-answer.ts";
import { errorText } from "../model/error-text.ts";
import { isPlainObject as isObj } from "../model/shapes.ts";

/** A Kubernetes Status (what the API server answers for an error, and for some deletes). */
const StatusSchema = v.looseObject({
  kind: v.literal("Status"),
  status: v.optional(v.unknown()),
  code: v.optional(v.unknown()),
  message: v.optional(v.unknown()),
});
type Status = v.InferOutput<typeof StatusSchema>;

/** A kind for a message: quoted and cut short, or "no kind". */
function kindOf(body: unknown): string {
  if (!isObj(body)) return Array.isArray(body) ? "an array" : `a ${body === null ? "null" : typeof body}`;
  return typeof body["kind"] === "string" ? `kind ${JSON.stringify(body["kind"].slice(0, 60))}` : "no kind";
}

function expectKind(status: number, body: unknown, kind: string): void {
  if (!isObj(body) || body["kind"] !== kind) throw new UnacceptableAnswer(status, `HTTP ${status}: expected kind "${kind}", got ${kindOf(body)}`);
}

/** `read` of the answer, or UnacceptableAnswer naming the field, with the reader's error as its cause. */
function strictly<T>(status: number, read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw new UnacceptableAnswer(status, `HTTP ${status}: ${errorText(e)}`, { cause: e });
  }
}

function toClusterRunner(namespace: string, r: EphemeralRunner): ClusterRunner {
  // The namespace asked for; the Worker keeps no creationTimestamp but as createdAt.
  const { namespace: _ns, creationTimestamp, ...rest } = r;
  const runner: ClusterRunner = { namespace, ...rest };
  if (creationTimestamp !== undefined) runner.createdAt = creationTimestamp;
  return runner;
}

export function runnersFromList(status: number, namespace: string, page: unknown): { runners: ClusterRunner[]; continueToken: string | undefined } {
  expectKind(status, page, "EphemeralRunnerList");
  const { items, metadata } = strictly(status, () => readEphemeralRunnerPage(page));
  // One item that cannot be read fails the whole namespace: every runner of it is kept.
  const runners = items.map((item, i) =>
    toClusterRunner(
      namespace,
      strictly(status, () => readEphemeralRunner(item, `EphemeralRunnerList.items[${i}]`)),
    ),
  );
  return { runners, continueToken: metadata?.continue || undefined };
}

export function runnerFromRead(status: number, namespace: string, name: string, body: unknown): ClusterRunner {
  expectKind(status, body, "EphemeralRunner");
  const runner = toClusterRunner(
    namespace,
    strictly(status, () => readEphemeralRunner(body)),
  );
  if (runner.name !== name) throw new UnacceptableAnswer(status, `HTTP ${status}: an EphemeralRunner of another name`);
  return runner;
}

/** Throws unless a delete's answer is the object (being deleted) or a success Status. */
export function checkDeleteAnswer(status: number, name: string, body: unknown): void {
  if (v.is(StatusSchema, body)) {
    if (body.status === "Success") return;
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
function statusBody(e: ApiException<unknown>): Status | undefined {
  let body: unknown = e.body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
  }
  return v.is(StatusSchema, body) ? body : undefined;
}

/** A 404 that the API server said: a Status with code 404 (a proxy's 404 page is not). */
export function isNotFound(e: unknown): boolean {
  if (!(e instanceof ApiException) || e.code !== 404) return false;
  return statusBody(e)?.code === 404;
}

/**
 * A 409 Status that says the uid precondition failed ("Precondition failed: UID in precondition: …"):
 * the name now belongs to another object, so the one we judged is gone. Any other conflict (an
 * admission hook, "the object has been modified", a proxy) says nothing of the object.
 */
export function isUidPreconditionFailed(e: unknown): boolean {
  if (!(e instanceof ApiException) || e.code !== 409) return false;
  const status = statusBody(e);
  return status?.code === 409 && typeof status.message === "string" && /precondition failed: uid/i.test(status.message);
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
    const message = status.message;
    return typeof message === "string" && message !== "" ? `HTTP ${e.code}: ${message.slice(0, 300)}` : `HTTP ${e.code}`;
  }
  if (e instanceof Error) return e.name === "TimeoutError" ? "timed out" : e.message;
  return String(e);
}
