// A cluster's identity: the uid of its kube-system namespace (GET /api/v1/namespaces/kube-system), which
// every cluster has and which never changes while the cluster lives. One reading of the answer for the
// direct mode and the agent. Needs `get` on that one namespace (a Role in kube-system with resourceNames:
// [kube-system]); a 403 is "forbidden": the identity is unknown and ids are never trusted to match.
import * as v from "valibot";

const KubeSystem = v.object({
  kind: v.literal("Namespace"),
  metadata: v.object({ name: v.literal("kube-system"), uid: v.pipe(v.string(), v.minLength(1), v.maxLength(128)) }),
});

export const KUBE_SYSTEM_PATH = "/api/v1/namespaces/kube-system";

export type KubeSystemAnswer = { kind: "known"; uid: string } | { kind: "unknown"; forbidden: boolean; why: string };

/** What an answer (status, parsed body) to GET /api/v1/namespaces/kube-system says of the cluster's identity. */
export function kubeSystemUid(status: number, body: unknown): KubeSystemAnswer {
  if (status === 403)
    return { kind: "unknown", forbidden: true, why: `reading namespace kube-system is forbidden (403): grant get on it to know the cluster's identity` };
  if (status < 200 || status > 299) return { kind: "unknown", forbidden: false, why: `reading namespace kube-system answered ${status}` };
  const parsed = v.safeParse(KubeSystem, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue ? (v.getDotPath(issue) ?? "the answer") : "the answer";
    return { kind: "unknown", forbidden: false, why: `namespace kube-system's answer is not a Namespace: ${path}: ${issue?.message ?? "invalid"}` };
  }
  return { kind: "known", uid: parsed.output.metadata.uid };
}
