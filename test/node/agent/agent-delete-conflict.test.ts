// The agent's DELETE of a runner reads a 409 as "gone" only when it is the uid
// precondition's (the name now belongs to another object): direct mode's reading,
// shared (src/cluster/delete-runner.ts). Any other conflict (an admission webhook, a
// proxy) says nothing of the object: a failure, tried again, never gone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeRunners } from "../../../src/agent/kube-runners.ts";
import { createKubeTenant, makeEphemeralRunner, type KubeTenant } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { standinKubeConfig } from "../../standins/kube/kube-config.ts";

const NS = "arc-runners";
let standin: KubeStandin;
beforeAll(async () => {
  standin = await startKubeStandin();
});
afterAll(async () => {
  await standin.close();
});

function runnersOf(t: KubeTenant) {
  const kc = standinKubeConfig(t.baseUrl, t.adminToken);
  return kubeRunners(kc, () => {}, 5_000);
}

describe("agent: a DELETE answered 409", () => {
  it("is gone only for the uid precondition's 409; another 409 is a failure and the object stays", async () => {
    const t = await createKubeTenant(standin.url, { namespaces: [NS] });
    const er = await t.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: "arc-runners-abcde-c409", workflowRunId: 409 }));
    const runners = runnersOf(t);

    // The name now has another uid: the stand-in answers as the API server does ("Precondition failed: UID in precondition: …").
    expect(await runners.delete(NS, er.metadata.name, "00000000-0000-4000-8000-000000000000")).toMatchObject({
      outcome: "gone",
      why: expect.stringMatching(/no longer exists: .*Precondition failed: UID in precondition/i),
    });
    // A 409 of another kind (here the plain Conflict Status): not gone.
    await t.addFault({ match: { verb: "delete" }, status: 409, times: 1 });
    expect(await runners.delete(NS, er.metadata.name, er.metadata.uid)).toMatchObject({
      outcome: "failed",
      why: expect.stringMatching(/^the API server answered 409: /),
    });
    expect((await t.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
    // Asked again: deleted.
    expect(await runners.delete(NS, er.metadata.name, er.metadata.uid)).toMatchObject({ outcome: "deleted" });
    await t.dispose();
  });
});
