// What the Worker asked of the stand-in Kubernetes API, shared by the tests.
import { expect } from "vitest";
import type { KubeCall } from "../../standins/kube/control.ts";

/** A day ahead of the real clock: sweeps run at this time, and no ledger alarm fires on the real clock meanwhile. */
export const NOW = Date.now() + 86_400_000;

/**
 * The DELETEs the Worker sent (accepted ones only with `{ accepted: true }`), each checked to carry the
 * uid precondition: a DELETE by name alone could remove a new object that took the name.
 */
export async function deletes(s: { kube: { calls(): Promise<KubeCall[]> } }, o: { accepted?: boolean } = {}): Promise<KubeCall[]> {
  const sent = (await s.kube.calls()).filter((c) => c.method === "DELETE");
  for (const d of sent) expect(d.body, `DELETE ${d.path} carries preconditions.uid`).toMatchObject({ preconditions: { uid: expect.stringMatching(/\S/) } });
  return o.accepted ? sent.filter((c) => c.status === 200) : sent;
}

/** The uid a DELETE named in its precondition. */
export const preconditionUid = (d: KubeCall): string | undefined => {
  const body = d.body as { preconditions?: { uid?: string } } | undefined;
  return body?.preconditions?.uid;
};
