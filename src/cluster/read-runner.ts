// The GET of one EphemeralRunner by name, for direct mode (ephemeral-runners.ts)
// and the agent (src/agent/kube-runners.ts): one request and one reading of its
// answer. Found only as the EphemeralRunner of that name, every field readable;
// absent only on a 404 Status (a proxy's 404 page is a failure, never absence).
import { asItIs, type RunnerApi, type Within } from "./api-call.ts";
import { type EphemeralRunner, GROUP, PLURAL, VERSION } from "./ephemeral-runner.ts";
import { type ApiFailure, apiFailure, ephemeralRunnerFromRead, isNotFound } from "./runner-answers.ts";

export type ReadAnswer = { kind: "found"; runner: EphemeralRunner } | { kind: "absent" } | { kind: "failed"; failure: ApiFailure };

/** GET namespace/name from the API server now; never throws. */
export async function readRunnerByName(api: RunnerApi, namespace: string, name: string, within: Within = asItIs): Promise<ReadAnswer> {
  try {
    const answer = await within(
      api.getNamespacedCustomObjectWithHttpInfo({ group: GROUP, version: VERSION, namespace, plural: PLURAL, name }),
      `read ${namespace}/${name}`,
    );
    return { kind: "found", runner: ephemeralRunnerFromRead(answer.httpStatusCode, name, answer.data) };
  } catch (e) {
    return isNotFound(e) ? { kind: "absent" } : { kind: "failed", failure: apiFailure(e) };
  }
}
