// The Kubernetes stand-in as each ARC release is: it serves and validates
// against the EphemeralRunner CRD of the tenant's version (test/fixtures/arc),
// and it can hold a deletion the way ARC's finalizer does while GitHub says the
// runner's job still runs. Checked through @kubernetes/client-node, which the product uses.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ApiException, ApiextensionsV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ACTIONABLE_REVISION_ANNOTATION,
  ARC_BEHAVIOUR,
  ARC_VERSION_FIXTURES,
  ARC_VERSIONS,
  listenerJobStatus,
  createKubeTenant,
  KubeControlError,
  makeEphemeralRunner,
  type ArcVersion,
  type EphemeralRunner,
  type KubeTenant,
} from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { standinKubeConfig } from "../../standins/kube/kube-config.ts";

const G = "actions.github.com";
const V = "v1alpha1";
const P = "ephemeralrunners";
const NS = "arc-runners";

let standin: KubeStandin;
beforeAll(async () => {
  standin = await startKubeStandin();
});
afterAll(async () => {
  await standin.close();
});

function clients(t: KubeTenant): { custom: CustomObjectsApi; crds: ApiextensionsV1Api } {
  const kc = standinKubeConfig(t.baseUrl, t.adminToken);
  return { custom: kc.makeApiClient(CustomObjectsApi), crds: kc.makeApiClient(ApiextensionsV1Api) };
}

async function seedError(t: KubeTenant, r: EphemeralRunner): Promise<KubeControlError> {
  const e = await t.seed(r).catch((x: unknown) => x);
  if (!(e instanceof KubeControlError)) throw new Error(`expected the seed of ${r.metadata.name} to fail`);
  return e;
}

const del = (custom: CustomObjectsApi, name: string, uid: string): Promise<unknown> =>
  custom.deleteNamespacedCustomObject({
    group: G,
    version: V,
    namespace: NS,
    plural: P,
    name,
    body: { preconditions: { uid }, propagationPolicy: "Background" },
  });

describe("every ARC version's CRD", () => {
  it("holds each version's EphemeralRunner CRD byte for byte, with the sha256 the fixtures README gives", () => {
    // The README's figures, repeated here so that a changed table or file fails.
    const expected: Record<ArcVersion, string> = {
      "0.13.1": "a8655e6de500d24cffe7844e56e0e275357ddcf0bf71831b0298124a2e69c8c8",
      "0.14.2": "b4991b4aeb29bc21f872eb94fe1aa5fcaa9208681fc58ab32947dd27d1e7f00a",
      "master-2026-06-30": "01d6c9b3fece063081d5d3ecf427ab8364aca72c4c44ba1a83af9ba7a8fea6f2",
      // No 0.15 CRD could be had: master's stands in (its change logs name no change to the schema).
      "0.15.1": "01d6c9b3fece063081d5d3ecf427ab8364aca72c4c44ba1a83af9ba7a8fea6f2",
    };
    const readme = readFileSync(fileURLToPath(new URL("../../fixtures/arc/README.md", import.meta.url).href), "utf8");
    for (const v of ARC_VERSIONS) {
      const file = fileURLToPath(new URL(`../../fixtures/arc/${ARC_VERSION_FIXTURES[v].crdFile}`, import.meta.url).href);
      expect(createHash("sha256").update(readFileSync(file)).digest("hex"), v).toBe(expected[v]);
      expect(ARC_VERSION_FIXTURES[v].sha256).toBe(expected[v]);
      expect(readme, v).toContain(expected[v]);
    }
  });

  it("serves the tenant's version's CRD, and refuses a version it does not have, naming those it has", async () => {
    for (const v of ARC_VERSIONS) {
      const t = await createKubeTenant(standin.url, { arcVersion: v });
      expect((await t.state()).arcVersion).toBe(v);
      const crd = await clients(t).crds.readCustomResourceDefinition({ name: "ephemeralrunners.actions.github.com" });
      const columns = crd.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name);
      // Upstream renamed the phase column after 0.14.2 (#4506).
      expect(columns?.[2], v).toBe(ARC_VERSION_FIXTURES[v].phaseColumn);
      const spec = crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.["spec"]?.properties ?? {};
      expect("ephemeralRunnerConfigSecretMetadata" in spec, v).toBe(v !== "0.13.1");
    }
    expect((await (await createKubeTenant(standin.url)).state()).arcVersion).toBe("0.14.2");
    const e = await createKubeTenant(standin.url, { arcVersion: "0.15.0" as ArcVersion }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(KubeControlError);
    expect((e as KubeControlError).message).toContain(
      'arcVersion must be one of 0.13.1, 0.14.2, master-2026-06-30, 0.15.1 (the CRDs in test/fixtures/arc), not "0.15.0"',
    );
  });

  it("accepts a runner as every version writes it, busy and idle, and validates what differs against the tenant's own CRD", async () => {
    for (const v of ARC_VERSIONS) {
      const t = await createKubeTenant(standin.url, { arcVersion: v });
      const busy = await t.seed(makeEphemeralRunner({ namespace: NS, name: "busy", scaleSet: "s", workflowRunId: 7, arcVersion: v }));
      expect(busy.metadata.labels?.["app.kubernetes.io/version"]).toBe(v);
      expect(busy.status?.jobId).toMatch(/^[0-9a-f-]{36}$/);
      await t.seed(makeEphemeralRunner({ namespace: NS, name: "idle", scaleSet: "s", phase: "Pending", arcVersion: v, status: { ready: false } }));
      // A runner whose pod failed: ARC counts failures by pod uid, with a time (0.13 on).
      await t.seed(
        makeEphemeralRunner({
          namespace: NS,
          name: "failed",
          scaleSet: "s",
          phase: "Failed",
          arcVersion: v,
          status: {
            reason: "TooManyPodFailures",
            message: "Pod has failed to start more than 5 times",
            failures: { "0f0e6c4c-1c1c-4a4a-9b9b-123456789abc": "2026-06-01T00:00:00Z" },
          },
        }),
      );

      // spec.ephemeralRunnerConfigSecretMetadata came with 0.14: 0.13.1's CRD does not declare it.
      const withSecretMeta = makeEphemeralRunner({ namespace: NS, name: "secret-meta", scaleSet: "s", arcVersion: v });
      withSecretMeta.spec["ephemeralRunnerConfigSecretMetadata"] = { labels: { team: "a" } };
      if (v === "0.13.1") {
        const e = await seedError(t, withSecretMeta);
        expect(e.status?.details?.causes?.[0]).toEqual({
          reason: "FieldValueForbidden",
          message: 'Forbidden: unknown field "spec.ephemeralRunnerConfigSecretMetadata": not in ARC 0.13.1\'s EphemeralRunner CRD',
          field: "spec.ephemeralRunnerConfigSecretMetadata",
        });
        // Through the API a write with that field is pruned (the API server's default), and refused when strict.
        const { custom } = clients(t);
        const created = (await custom.createNamespacedCustomObject({
          group: G,
          version: V,
          namespace: NS,
          plural: P,
          body: withSecretMeta,
        })) as EphemeralRunner;
        expect(created.spec["ephemeralRunnerConfigSecretMetadata"]).toBeUndefined();
        const strict = await custom
          .createNamespacedCustomObject({
            group: G,
            version: V,
            namespace: NS,
            plural: P,
            body: { ...withSecretMeta, metadata: { ...withSecretMeta.metadata, name: "strict" } },
            fieldValidation: "Strict",
          })
          .catch((x: unknown) => x);
        expect(strict).toBeInstanceOf(ApiException);
        expect((strict as ApiException<string>).code).toBe(400);
        expect(String((strict as ApiException<string>).body)).toContain('unknown field \\"spec.ephemeralRunnerConfigSecretMetadata\\"');
      } else {
        expect((await t.seed(withSecretMeta)).spec["ephemeralRunnerConfigSecretMetadata"]).toEqual({ labels: { team: "a" } });
      }

      // The pod template follows each release's Kubernetes API: workloadRef is in 0.14.2's, schedulingGroup in master's.
      const workload = makeEphemeralRunner({ namespace: NS, name: "workload", scaleSet: "s", arcVersion: v });
      workload.spec.spec["workloadRef"] = { name: "w", podGroup: "g" };
      const scheduling = makeEphemeralRunner({ namespace: NS, name: "scheduling", scaleSet: "s", arcVersion: v });
      scheduling.spec.spec["schedulingGroup"] = { podGroupName: "g" };
      const accepts = async (r: EphemeralRunner): Promise<boolean> =>
        await t.seed(r).then(
          () => true,
          () => false,
        );
      expect([await accepts(workload), await accepts(scheduling)], v).toEqual(
        v === "0.14.2" ? [true, false] : ARC_VERSION_FIXTURES[v].crdFile.startsWith("master-") ? [false, true] : [false, false],
      );
      expect((await t.list()).map((o) => o.metadata.name).filter((n) => ["busy", "idle", "failed"].includes(n))).toEqual(["busy", "failed", "idle"]);
    }
  });
});

describe("ARC's deletion as ARC does it: held while GitHub says the job runs", () => {
  it("keeps a deleted busy runner listed and readable with its deletionTimestamp until the switch is released, then it goes", async () => {
    const t = await createKubeTenant(standin.url, { autoFinalize: true });
    const busy = await t.seed(makeEphemeralRunner({ namespace: NS, name: "busy", scaleSet: "s", workflowRunId: 70 }));
    const idle = await t.seed(makeEphemeralRunner({ namespace: NS, name: "idle", scaleSet: "s" }));
    expect((await t.setJobsStillRunning(true)).jobsStillRunning).toBe(true);
    const { custom } = clients(t);

    const marked = (await del(custom, "busy", busy.metadata.uid)) as EphemeralRunner;
    expect(marked.metadata.deletionTimestamp).toMatch(/Z$/);
    // An idle runner has no job for GitHub to hold on to: ARC removes it from the service and it goes.
    await del(custom, "idle", idle.metadata.uid);
    expect(await t.get(NS, "idle")).toBeUndefined();

    const read = (await custom.getNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, name: "busy" })) as EphemeralRunner;
    expect(read.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp);
    expect(read.metadata.finalizers).toEqual(marked.metadata.finalizers);
    const listed = (await custom.listNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P })) as { items: EphemeralRunner[] };
    expect(listed.items.map((i) => [i.metadata.name, i.metadata.deletionTimestamp])).toEqual([["busy", marked.metadata.deletionTimestamp]]);
    // A second DELETE changes nothing; playing the controller by hand does not remove it either.
    expect(await del(custom, "busy", busy.metadata.uid)).toEqual(read);
    expect(await t.finalize()).toEqual([]);
    expect((await t.state()).heldDeletions).toEqual([{ namespace: NS, name: "busy" }]);

    const released = await t.setJobsStillRunning(false);
    expect(released.released).toEqual([{ namespace: NS, name: "busy" }]);
    expect(released.jobsStillRunning).toBe(false);
    expect(await t.get(NS, "busy")).toBeUndefined();
    expect((await t.state()).heldDeletions).toEqual([]);
  });

  it("holds per tenant, never releases a new object of the same name, and leaves finalize() to the test without autoFinalize", async () => {
    const held = await createKubeTenant(standin.url, { autoFinalize: true });
    const other = await createKubeTenant(standin.url, { autoFinalize: true });
    await held.setJobsStillRunning(true);
    for (const t of [held, other]) {
      const r = await t.seed(makeEphemeralRunner({ namespace: NS, name: "r", scaleSet: "s", workflowRunId: 1 }));
      await del(clients(t).custom, "r", r.metadata.uid);
    }
    expect(await other.get(NS, "r")).toBeUndefined();
    const first = await held.get(NS, "r");
    expect(first?.metadata.deletionTimestamp).toBeTruthy();

    // The held object is removed by hand and its name comes back as a new, busy object being deleted.
    await held.remove(NS, "r");
    const again = await held.seed(
      makeEphemeralRunner({ namespace: NS, name: "r", scaleSet: "s", workflowRunId: 2, deletionTimestamp: "2026-01-01T00:00:00Z" }),
    );
    expect((await held.setJobsStillRunning(false)).released).toEqual([]);
    expect((await held.get(NS, "r"))?.metadata.uid).toBe(again.metadata.uid);

    // Without autoFinalize the test plays ARC with finalize(), which respects the switch too.
    const manual = await createKubeTenant(standin.url);
    const m = await manual.seed(makeEphemeralRunner({ namespace: NS, name: "m", scaleSet: "s", workflowRunId: 3 }));
    await manual.setJobsStillRunning(true);
    await del(clients(manual).custom, "m", m.metadata.uid);
    expect(await manual.finalize()).toEqual([]);
    expect((await manual.setJobsStillRunning(false)).released).toEqual([]);
    expect(await manual.finalize()).toEqual([{ namespace: NS, name: "m" }]);

    const bad = await held.setJobsStillRunning("yes" as unknown as boolean).catch((x: unknown) => x);
    expect((bad as KubeControlError).message).toContain("jobsStillRunning must be a boolean");
  });
});

describe("what each ARC version writes of a runner it creates: runnerId, runnerName, its idle phase, 0.15's annotation", () => {
  it("gives every runner its own positive runnerId and its name as runnerName, or the id a test chose, or none yet", async () => {
    for (const v of ARC_VERSIONS) {
      const t = await createKubeTenant(standin.url, { arcVersion: v });
      const made = await t.seedAll([1, 2, 3].map((i) => makeEphemeralRunner({ namespace: NS, name: `r${i}`, scaleSet: "s", arcVersion: v })));
      const ids = made.map((r) => r.status?.runnerId);
      for (const id of ids) expect(Number.isSafeInteger(id) && (id ?? 0) > 0, `${v}: ${String(id)}`).toBe(true);
      expect(new Set(ids).size, v).toBe(3);
      expect(made.map((r) => r.status?.runnerName)).toEqual(["r1", "r2", "r3"]);
      const chosen = await t.seed(makeEphemeralRunner({ namespace: NS, name: "chosen", scaleSet: "s", arcVersion: v, runnerId: 4242 }));
      expect([chosen.status?.runnerId, chosen.status?.runnerName]).toEqual([4242, "chosen"]);
      // Before the controller read the JIT config: neither field (the CRD's omitempty).
      const unwritten = await t.seed(makeEphemeralRunner({ namespace: NS, name: "unwritten", scaleSet: "s", arcVersion: v, runnerId: null }));
      expect(unwritten.status && "runnerId" in unwritten.status).toBe(false);
      expect(unwritten.status && "runnerName" in unwritten.status).toBe(false);
      // The controller writes them later, through the status subresource, as any version's CRD allows.
      const written = await t.patchStatus(NS, "unwritten", { runnerId: 4343, runnerName: "unwritten" });
      expect([written.status?.runnerId, written.status?.runnerName]).toEqual([4343, "unwritten"]);
    }
  });

  it("leaves an idle 0.15 runner Pending (the listener owns Running), with actionable-revision; earlier versions Running, without it", async () => {
    for (const v of ARC_VERSIONS) {
      const t = await createKubeTenant(standin.url, { arcVersion: v });
      const idle = await t.seed(makeEphemeralRunner({ namespace: NS, name: "idle", scaleSet: "s", arcVersion: v }));
      const fifteen = v === "0.15.1";
      expect(idle.status?.phase, v).toBe(fifteen ? "Pending" : "Running");
      expect(ACTIONABLE_REVISION_ANNOTATION in (idle.metadata.annotations ?? {}), v).toBe(fifteen);
      expect(ARC_BEHAVIOUR[v].setStatusCounts, v).toBe(!fifteen);
      // A job assigned: 0.15's listener sets Running, with the job's fields or (a late or lost patch) without them.
      const late = await t.patchStatus(NS, "idle", listenerJobStatus(v, { workflowRunId: 9, jobRepositoryName: "o/r" }, { fields: false }));
      expect([late.status?.phase, late.status?.workflowRunId], v).toEqual(["Running", undefined]);
      const busy = await t.patchStatus(NS, "idle", listenerJobStatus(v, { workflowRunId: 9, jobRepositoryName: "o/r" }));
      expect([busy.status?.phase, busy.status?.workflowRunId, busy.status?.jobRepositoryName], v).toEqual(["Running", 9, "o/r"]);
    }
  });
});

describe("ARC 0.15's deletion: the finalizer goes before deregistration", () => {
  it("lets a busy runner deleted from outside go at once, even while GitHub says its job runs; finalize() holds nothing either", async () => {
    const t = await createKubeTenant(standin.url, { arcVersion: "0.15.1", autoFinalize: true });
    await t.setJobsStillRunning(true);
    const busy = await t.seed(makeEphemeralRunner({ namespace: NS, name: "busy", scaleSet: "s", workflowRunId: 70, arcVersion: "0.15.1" }));
    await del(clients(t).custom, "busy", busy.metadata.uid);
    expect(await t.get(NS, "busy")).toBeUndefined();
    expect((await t.state()).heldDeletions).toEqual([]);

    const manual = await createKubeTenant(standin.url, { arcVersion: "0.15.1" });
    await manual.setJobsStillRunning(true);
    const m = await manual.seed(makeEphemeralRunner({ namespace: NS, name: "m", scaleSet: "s", workflowRunId: 3, arcVersion: "0.15.1" }));
    await del(clients(manual).custom, "m", m.metadata.uid);
    expect(await manual.finalize()).toEqual([{ namespace: NS, name: "m" }]);
  });
});
