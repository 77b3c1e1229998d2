// What the three calls that act on one EphemeralRunner (read-runner.ts,
// delete-runner.ts, finish-deletion.ts) take from their caller besides the
// API: how long to wait. Direct mode's HTTP library has its own deadline;
// the agent races each call against its AGENT_API_TIMEOUT_MS.
import type { CustomObjectsApi } from "@kubernetes/client-node";

/** Waits for `call` (a request named `what`, e.g. "delete ns/name"), or rejects naming it. */
export type Within = <T>(call: Promise<T>, what: string) => Promise<T>;

/** The call as it is: its HTTP library keeps the deadline. */
export const asItIs: Within = (call) => call;

/** The part of client-node's CustomObjectsApi the calls use (a fake in the unit tests). */
export type RunnerApi = Pick<
  CustomObjectsApi,
  "getNamespacedCustomObjectWithHttpInfo" | "deleteNamespacedCustomObjectWithHttpInfo" | "patchNamespacedCustomObjectWithHttpInfo"
>;
