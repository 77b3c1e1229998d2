// The DELETE of one EphemeralRunner by uid, for direct mode (ephemeral-runners.ts)
// and the agent (src/agent/kube-runners.ts): one request and one reading of its
// answer. The uid precondition means a recreated object of the same name is
// never hit; propagationPolicy Background lets ARC's finalizers remove the
// runner and its pod. Each side puts the answer in its own words.
import type { ClusterRunner } from "../model/runner.ts";
import { asItIs, type RunnerApi, type Within } from "./api-call.ts";
import { GROUP, PLURAL, VERSION } from "./ephemeral-runner.ts";
import { type ApiFailure, apiFailure, checkDeleteAnswer, isNotFound, isUidPreconditionFailed } from "./runner-answers.ts";

type Target = Pick<ClusterRunner, "namespace" | "name" | "uid">;

/**
 * deleted: the API server took the DELETE (its answer is the object, or a success Status).
 * gone: nothing of that uid to delete: a 404 Status, or a 409 Status saying the uid precondition failed (the
 * name now belongs to another object); `failure.status` says which. Any other conflict (an admission hook, a
 * proxy) says nothing of the object: failed. failed: anything else, an answer that is not the API server's too.
 */
export type DeleteAnswer = { kind: "deleted" } | { kind: "gone"; failure: ApiFailure } | { kind: "failed"; failure: ApiFailure };

/** What direct mode's Cluster answers for a delete. */
export type DeleteOutcome =
  | { kind: "deleted" }
  | { kind: "gone" } // 404 with a Kubernetes Status, or a 409 saying the uid precondition failed: nothing of that uid to delete
  | { kind: "failed"; status: number | null; why: string };

/** DELETE with preconditions.uid and propagationPolicy Background; never throws. */
export async function deleteRunnerByUid(api: RunnerApi, { namespace, name, uid }: Target, within: Within = asItIs): Promise<DeleteAnswer> {
  try {
    const answer = await within(
      api.deleteNamespacedCustomObjectWithHttpInfo({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURAL,
        name,
        body: { preconditions: { uid }, propagationPolicy: "Background" },
      }),
      `delete ${namespace}/${name}`,
    );
    checkDeleteAnswer(answer.httpStatusCode, name, answer.data);
    return { kind: "deleted" };
  } catch (e) {
    return { kind: isNotFound(e) || isUidPreconditionFailed(e) ? "gone" : "failed", failure: apiFailure(e) };
  }
}

/** The answer as direct mode reports it: a failure's status and direct mode's words. */
export function deleteOutcome(answer: DeleteAnswer): DeleteOutcome {
  if (answer.kind !== "failed") return { kind: answer.kind };
  return { kind: "failed", status: answer.failure.status, why: answer.failure.why };
}
