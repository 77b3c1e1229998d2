// The cluster's identity from GET /api/v1/namespaces/kube-system (kube-system-uid.ts): the Namespace's uid, or
// unknown with why (403 says forbidden: the Role in kube-system is missing), never a guess.
import { describe, expect, it } from "vitest";
import { kubeSystemUid } from "../../../src/cluster/kube-system-uid.ts";

const ns = (over: object = {}) => ({
  kind: "Namespace",
  apiVersion: "v1",
  metadata: { name: "kube-system", uid: "0b2f6a3e-1c9d-4d0e-8f6a-2b7c9e1d4a55", ...over },
});

describe("kubeSystemUid", () => {
  it("reads the uid of the kube-system Namespace", () => {
    expect(kubeSystemUid(200, ns())).toEqual({ kind: "known", uid: "0b2f6a3e-1c9d-4d0e-8f6a-2b7c9e1d4a55" });
  });

  it("403: forbidden, with what to grant; another status: unknown", () => {
    expect(kubeSystemUid(403, { kind: "Status", reason: "Forbidden" })).toMatchObject({
      kind: "unknown",
      forbidden: true,
      why: expect.stringContaining("forbidden (403)"),
    });
    expect(kubeSystemUid(404, {})).toEqual({ kind: "unknown", forbidden: false, why: "reading namespace kube-system answered 404" });
  });

  it("an answer that is not the kube-system Namespace (a proxy's {}, another namespace, no uid) is unknown, naming the field", () => {
    expect(kubeSystemUid(200, {})).toMatchObject({ kind: "unknown", forbidden: false });
    expect(kubeSystemUid(200, ns({ name: "default" }))).toMatchObject({ kind: "unknown", why: expect.stringContaining("metadata.name") });
    expect(kubeSystemUid(200, ns({ uid: "" }))).toMatchObject({ kind: "unknown", why: expect.stringContaining("metadata.uid") });
  });
});
