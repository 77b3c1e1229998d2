// Reads the API server's answers about EphemeralRunners, strictly, for direct
// mode and the agent alike: a list is an EphemeralRunnerList whose every item
// has a name and a uid, a read is the EphemeralRunner asked for, a delete (or a
// finish patch) answers with the object or a success Status, and a 404 means
// "not there" only when it is a Kubernetes Status. Anything else throws
// UnacceptableAnswer, which keeps every runner of the namespace rather than
// reading a proxy's answer as the cluster's. A failed call is read once, into
// an ApiFailure (apiFailure), which each side puts in its own words.
import { ApiException } from "@kubernetes/client-node";
import * as v from "valibot";
import type { ClusterRunner } from "../model/runner.ts";
import { type EphemeralRunner, readEphemeralRunner, readEphemeralRunnerPage } from "./ephemeral-runner.ts";
import { UnacceptableAnswer } from "./http-answer.ts";
import { checkPageEnd } from "./page-end.ts";
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

/** The Worker's runner of an EphemeralRunner read in `namespace`. */
export function toClusterRunner(namespace: string, r: EphemeralRunner): ClusterRunner {
  // The namespace asked for; the Worker keeps no creationTimestamp but as createdAt.
  const { namespace: _ns, creationTimestamp, ...rest } = r;
  const runner: ClusterRunner = { namespace, ...rest };
  if (creationTimestamp !== undefined) runner.createdAt = creationTimestamp;
  return runner;
}

export function runnersFromList(status: number, namespace: string, page: unknown): { runners: ClusterRunner[]; continueToken: string | undefined } {
  expectKind(status, page, "EphemeralRunnerList");
  const { items, metadata } = strictly(status, () => readEphemeralRunnerPage(page));
  checkPageEnd(status, isObj(page) && isObj(page["metadata"]) ? page["metadata"] : {}, "EphemeralRunnerList");
  // One item that cannot be read fails the whole namespace: every runner of it is kept.
  const runners = items.map((item, i) =>
    toClusterRunner(
      namespace,
      strictly(status, () => readEphemeralRunner(item, `EphemeralRunnerList.items[${i}]`)),
    ),
  );
  return { runners, continueToken: metadata?.continue || undefined };
}

/** The EphemeralRunner a read by name asked for: of that kind, every field readable, and of that name. */
export function ephemeralRunnerFromRead(status: number, name: string, body: unknown): EphemeralRunner {
  expectKind(status, body, "EphemeralRunner");
  const runner = strictly(status, () => readEphemeralRunner(body));
  if (runner.name !== name) throw new UnacceptableAnswer(status, `HTTP ${status}: an EphemeralRunner of another name`);
  return runner;
}

/** Throws unless a delete's (or a finish patch's) answer is the object or a success Status. */
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

/**
 * The API server's own words in an error answer: its Status message (at most 300 characters), "the body is
 * not a Kubernetes Status" for any other body (never echoed: a proxy's page may carry anything), or "" (none).
 */
function statusWords(e: ApiException<unknown>): string {
  if (e.body === undefined || e.body === null || e.body === "") return "";
  const status = statusBody(e);
  if (!status) return "the body is not a Kubernetes Status";
  return typeof status.message === "string" ? status.message.slice(0, 300) : "";
}

/** What went wrong, in words: the Status message of an API error, never a body that is not a Status. */
export function describe(e: unknown): string {
  if (e instanceof UnacceptableAnswer) return e.message;
  if (e instanceof ApiException) {
    const words = statusWords(e);
    return words === "" ? `HTTP ${e.code}` : `HTTP ${e.code}: ${words}`;
  }
  if (e instanceof Error) return e.name === "TimeoutError" ? "timed out" : e.message;
  return String(e);
}

/** Why a call to the API server did not do what was asked, read once for direct mode and the agent. */
export interface ApiFailure {
  /** The answer's HTTP status; null when none came (a timeout, a connection that failed). */
  status: number | null;
  /** In words that name the status (direct mode's): "HTTP 409: <its Status message>", "timed out", ... */
  why: string;
  /**
   * Only when the API server answered with an error (not an answer refused as not its own): its Status
   * message, what stands for a body that is not a Status, or "HTTP <status>" when it said nothing.
   */
  said?: string;
  /** What was thrown. */
  cause: unknown;
}

export function apiFailure(e: unknown): ApiFailure {
  const failure: ApiFailure = { status: statusOf(e), why: describe(e), cause: e };
  if (e instanceof ApiException) failure.said = statusWords(e) || `HTTP ${e.code}`;
  return failure;
}
