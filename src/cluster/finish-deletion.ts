// The JSON patch that finishes a deletion ARC holds (REAPER_FINISH_STUCK), for
// direct mode (ephemeral-runners.ts) and the agent (src/agent/kube-runners.ts):
// one request (finish-patch.ts's patch; client-node sends an array body as
// application/json-patch+json, which the API server applies all or none) and
// one reading of its answer. Never retried at once: the caller looks again
// REAPER_STUCK_SECONDS later. Each side puts the answer in its own words.
import type { ClusterRunner } from "../model/runner.ts";
import { asItIs, type RunnerApi, type Within } from "./api-call.ts";
import { GROUP, PLURAL, VERSION } from "./ephemeral-runner.ts";
import { finishPatch, type FinishOutcome } from "./finish-patch.ts";
import { type ApiFailure, apiFailure, checkDeleteAnswer, isNotFound } from "./runner-answers.ts";

type Target = Pick<ClusterRunner, "namespace" | "name" | "uid">;

/**
 * finished: the API server took the patch (its answer is the object, or a success Status). gone: a 404 Status.
 * refused: 403 (the Role lacks `patch`: the overlay is not applied). conflict: 409 or 422 (a test of the patch
 * failed: the object changed). failed: anything else.
 */
export type FinishAnswer = { kind: "finished" } | { kind: "gone" | "refused" | "conflict" | "failed"; failure: ApiFailure };

function kindOf(e: unknown, failure: ApiFailure): Exclude<FinishAnswer["kind"], "finished"> {
  if (isNotFound(e)) return "gone";
  if (failure.status === 403) return "refused";
  if (failure.status === 409 || failure.status === 422) return "conflict";
  return "failed";
}

/** PATCH the finish (tests uid and these finalizers, then removes them); never throws. */
export async function finishHeldDeletion(
  api: RunnerApi,
  { namespace, name, uid }: Target,
  finalizers: readonly string[],
  within: Within = asItIs,
): Promise<FinishAnswer> {
  try {
    const answer = await within(
      api.patchNamespacedCustomObjectWithHttpInfo({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name, body: finishPatch(uid, finalizers) }),
      `patch ${namespace}/${name}`,
    );
    checkDeleteAnswer(answer.httpStatusCode, name, answer.data);
    return { kind: "finished" };
  } catch (e) {
    const failure = apiFailure(e);
    return { kind: kindOf(e, failure), failure };
  }
}

/** The answer as direct mode reports it: direct mode's words for a refusal, a conflict or a failure. */
export function finishOutcome(answer: FinishAnswer): FinishOutcome {
  switch (answer.kind) {
    case "finished":
    case "gone":
      return { kind: answer.kind };
    case "refused":
    case "conflict":
      return { kind: answer.kind, why: answer.failure.why };
    default:
      return { kind: "failed", status: answer.failure.status, why: answer.failure.why };
  }
}
