// Tests of the Kubernetes stand-in itself, in Node: its wire format is checked
// through the real @kubernetes/client-node, which the product uses.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ApiException, CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createKubeTenant,
  EPHEMERAL_RUNNER_FINALIZERS,
  KubeControlError,
  makeEphemeralRunner,
  reaperRules,
  roleBindings,
  type EphemeralRunner,
  type KubeStatus,
  type KubeTenant,
} from "../../standins/kube/control.ts";
import { validate, type Schema } from "../../standins/kube/crd-schema.ts";
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

function clients(baseUrl: string, token: string): { custom: CustomObjectsApi; core: CoreV1Api } {
  const kc = standinKubeConfig(baseUrl, token);
  return { custom: kc.makeApiClient(CustomObjectsApi), core: kc.makeApiClient(CoreV1Api) };
}

/**
 * The ApiException a client-node call failed with, and its Status body (client-node
 * keeps the raw JSON text as `body`; for 401 it keeps no body at all).
 */
async function apiError(p: Promise<unknown>): Promise<{ code: number; status: KubeStatus }> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof ApiException)) throw e;
    const body: unknown = e.body;
    const status = typeof body === "string" ? (JSON.parse(body) as KubeStatus) : ({} as KubeStatus);
    return { code: e.code, status };
  }
  throw new Error("expected the call to fail");
}

async function raw(
  t: KubeTenant,
  method: string,
  path: string,
  opts: { body?: unknown; token?: string | null; contentType?: string; signal?: AbortSignal } = {},
): Promise<{ code: number; headers: Headers; json: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? t.adminToken : opts.token;
  if (token !== null) headers["Authorization"] = `Bearer ${token}`;
  if (opts.body !== undefined) headers["Content-Type"] = opts.contentType ?? "application/json";
  const init: RequestInit = { method, headers };
  if (opts.body !== undefined) init.body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
  if (opts.signal) init.signal = opts.signal;
  const res = await fetch(`${t.baseUrl}${path}`, init);
  const text = await res.text();
  return { code: res.status, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const runnerPath = (ns: string, name = ""): string => `/apis/${G}/${V}/namespaces/${ns}/${P}${name ? `/${name}` : ""}`;

describe("fixtures", () => {
  it("holds ARC 0.14.2's EphemeralRunner CRD byte-for-byte", () => {
    const path = fileURLToPath(new URL("../../fixtures/arc/actions.github.com_ephemeralrunners.yaml", import.meta.url).href);
    const sha = createHash("sha256").update(readFileSync(path)).digest("hex");
    expect(sha).toBe("b4991b4aeb29bc21f872eb94fe1aa5fcaa9208681fc58ab32947dd27d1e7f00a");
  });
});

describe("seeding and validation against the CRD", () => {
  it("stamps seeded objects like the API server and adds ARC's finalizers", async () => {
    const t = await createKubeTenant(standin.url);
    const seeded = await t.seed(makeEphemeralRunner({ namespace: NS, name: "r1", scaleSet: "linux", workflowRunId: 42 }));
    expect(seeded.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(seeded.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(seeded.metadata.generation).toBe(1);
    expect(seeded.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(seeded.metadata.finalizers).toEqual([...EPHEMERAL_RUNNER_FINALIZERS]);
    expect(seeded.metadata.finalizers).toEqual([
      "ephemeralrunner.actions.github.com/finalizer",
      "ephemeralrunner.actions.github.com/runner-registration-finalizer",
    ]);
    expect(seeded.status?.workflowRunId).toBe(42);
    expect(seeded.metadata.labels?.["actions.github.com/scale-set-name"]).toBe("linux");
    expect(seeded.metadata.ownerReferences?.[0]?.kind).toBe("EphemeralRunnerSet");
    expect(await t.get(NS, "r1")).toEqual(seeded);
    expect(await t.get(NS, "nope")).toBeUndefined();
  });

  it("applies the CRD's defaults", async () => {
    const t = await createKubeTenant(standin.url);
    const r = makeEphemeralRunner({ namespace: NS, name: "ports", scaleSet: "s" });
    const c = r.spec.spec.containers[0];
    if (c) c["ports"] = [{ containerPort: 8080 }];
    const seeded = await t.seed(r);
    expect(seeded.spec.spec.containers[0]?.["ports"]).toEqual([{ containerPort: 8080, protocol: "TCP" }]);
  });

  it("rejects what the CRD rejects, naming the field", async () => {
    const t = await createKubeTenant(standin.url);
    const base = makeEphemeralRunner({ namespace: NS, name: "bad", scaleSet: "s" });

    const missing = structuredClone(base) as unknown as { spec: Record<string, unknown> };
    delete missing.spec["githubConfigUrl"];
    const e1 = await t.seed(missing as unknown as EphemeralRunner).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(KubeControlError);
    const s1 = (e1 as KubeControlError).status;
    expect(s1?.code).toBe(422);
    expect(s1?.reason).toBe("Invalid");
    expect(s1?.message).toBe('EphemeralRunner.actions.github.com "bad" is invalid: spec.githubConfigUrl: Required value');
    expect(s1?.details).toEqual({
      name: "bad",
      group: "actions.github.com",
      kind: "EphemeralRunner",
      causes: [{ reason: "FieldValueRequired", message: "Required value", field: "spec.githubConfigUrl" }],
    });

    const typo = structuredClone(base) as unknown as { status: Record<string, unknown> };
    typo.status["workflowRunID"] = 1;
    const s2 = ((await t.seed(typo as unknown as EphemeralRunner).catch((e: unknown) => e)) as KubeControlError).status;
    expect(s2?.code).toBe(422);
    expect(s2?.details?.causes?.[0]?.field).toBe("status.workflowRunID");

    const wrongType = structuredClone(base) as unknown as { spec: Record<string, unknown> };
    wrongType.spec["runnerScaleSetId"] = "1";
    const s3 = ((await t.seed(wrongType as unknown as EphemeralRunner).catch((e: unknown) => e)) as KubeControlError).status;
    expect(s3?.message).toContain('spec.runnerScaleSetId: Invalid value: "string": spec.runnerScaleSetId in body must be of type integer: "string"');

    const intOrString = structuredClone(base);
    const c = intOrString.spec.spec.containers[0];
    if (c) c["resources"] = { limits: { cpu: true, memory: "1Gi" }, requests: { cpu: 1 } };
    const s4 = ((await t.seed(intOrString).catch((e: unknown) => e)) as KubeControlError).status;
    expect(s4?.details?.causes?.map((x) => x.field)).toEqual(["spec.spec.containers[0].resources.limits.cpu"]);
    expect(s4?.message).toContain("must be of type integer,string");

    const badLabel = structuredClone(base);
    badLabel.metadata.labels = { "actions.github.com/scale-set-name": "not valid!" };
    const s5 = ((await t.seed(badLabel).catch((e: unknown) => e)) as KubeControlError).status;
    expect(s5?.details?.causes?.[0]?.field).toBe("metadata.labels");

    const badMeta = structuredClone(base) as unknown as { metadata: Record<string, unknown> };
    badMeta.metadata["labelz"] = {};
    const s6 = ((await t.seed(badMeta as unknown as EphemeralRunner).catch((e: unknown) => e)) as KubeControlError).status;
    expect(s6?.details?.causes?.[0]?.field).toBe("metadata.labelz");

    const noPodSpec = structuredClone(base) as unknown as { spec: { spec: Record<string, unknown> } };
    delete noPodSpec.spec.spec["containers"];
    const s7 = ((await t.seed(noPodSpec as unknown as EphemeralRunner).catch((e: unknown) => e)) as KubeControlError).status;
    expect(s7?.details?.causes?.[0]?.field).toBe("spec.spec.containers");

    // A failed batch seeds nothing.
    await expect(t.seedAll([makeEphemeralRunner({ namespace: NS, name: "ok", scaleSet: "s" }), wrongType as unknown as EphemeralRunner])).rejects.toThrow();
    expect(await t.list()).toEqual([]);

    await t.seed(base);
    const dup = (await t.seed(base).catch((e: unknown) => e)) as KubeControlError;
    expect(dup.status?.reason).toBe("AlreadyExists");
    expect(dup.status?.message).toBe('ephemeralrunners.actions.github.com "bad" already exists');

    const badStatus = (await t
      .setStatus(NS, "bad", { phase: "Running", workflowRunId: "x" as unknown as number })
      .catch((e: unknown) => e)) as KubeControlError;
    expect(badStatus.status?.details?.causes?.[0]?.field).toBe("status.workflowRunId");
  });

  it("validates enum, items, additionalProperties and x-kubernetes-preserve-unknown-fields", () => {
    const schema: Schema = {
      type: "object",
      required: ["mode"],
      properties: {
        mode: { type: "string", enum: ["a", "b"] },
        list: { type: "array", items: { type: "integer" } },
        map: { type: "object", additionalProperties: { type: "boolean" } },
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        closed: { type: "object", properties: { x: { type: "string" } } },
      },
    };
    const ok = validate({ mode: "a", list: [1, 2], map: { k: true }, free: { anything: [1] }, closed: { x: "y" } }, schema, "", "reject");
    expect(ok).toEqual({ errors: [], unknown: [] });
    const bad = validate({ mode: "c", list: [1, "2"], map: { k: 1 }, closed: { y: 1 } }, schema, "", "reject");
    expect(bad.errors.map((e) => [e.type, e.field])).toEqual([
      ["NotSupported", "mode"],
      ["Invalid", "list[1]"],
      ["Invalid", "map.k"],
    ]);
    expect(bad.unknown).toEqual(["closed.y"]);
    const pruned: Record<string, unknown> = { mode: "a", closed: { x: "y", y: 1 } };
    expect(validate(pruned, schema, "", "prune").unknown).toEqual(["closed.y"]);
    expect(pruned).toEqual({ mode: "a", closed: { x: "y" } });
    expect(validate({}, schema, "", "reject").errors).toEqual([{ type: "Required", field: "mode" }]);
  });

  it("keeps tenants apart and refuses namespaces that do not exist", async () => {
    const a = await createKubeTenant(standin.url, { namespaces: [NS] });
    const b = await createKubeTenant(standin.url);
    await a.seed(makeEphemeralRunner({ namespace: NS, name: "only-in-a", scaleSet: "s" }));
    expect(await b.list()).toEqual([]);
    const e = (await a.seed(makeEphemeralRunner({ namespace: "elsewhere", name: "x", scaleSet: "s" })).catch((x: unknown) => x)) as KubeControlError;
    expect(e.status?.message).toBe('namespaces "elsewhere" not found');
    // One tenant's token means nothing to another.
    expect((await raw(b, "GET", runnerPath(NS), { token: a.adminToken })).code).toBe(401);
  });
});

describe("the API through @kubernetes/client-node", () => {
  it("lists with label selectors, gets, and answers 404 with the real Status", async () => {
    const t = await createKubeTenant(standin.url);
    await t.seedAll([
      makeEphemeralRunner({ namespace: NS, name: "a1", scaleSet: "linux" }),
      makeEphemeralRunner({ namespace: NS, name: "a2", scaleSet: "linux", labels: { tier: "gpu" } }),
      makeEphemeralRunner({ namespace: NS, name: "b1", scaleSet: "windows" }),
      makeEphemeralRunner({ namespace: "other", name: "c1", scaleSet: "linux" }),
    ]);
    const { custom } = clients(t.baseUrl, t.adminToken);
    const names = async (labelSelector?: string): Promise<string[]> => {
      const list = (await custom.listNamespacedCustomObject({
        group: G,
        version: V,
        namespace: NS,
        plural: P,
        ...(labelSelector === undefined ? {} : { labelSelector }),
      })) as {
        kind: string;
        apiVersion: string;
        metadata: { resourceVersion: string };
        items: EphemeralRunner[];
      };
      expect(list.kind).toBe("EphemeralRunnerList");
      expect(list.apiVersion).toBe("actions.github.com/v1alpha1");
      expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
      for (const i of list.items) expect(i.kind).toBe("EphemeralRunner");
      return list.items.map((i) => i.metadata.name ?? "");
    };
    expect(await names()).toEqual(["a1", "a2", "b1"]);
    expect(await names("actions.github.com/scale-set-name=linux")).toEqual(["a1", "a2"]);
    expect(await names("actions.github.com/scale-set-name==linux")).toEqual(["a1", "a2"]);
    expect(await names("actions.github.com/scale-set-name!=linux")).toEqual(["b1"]);
    expect(await names("tier")).toEqual(["a2"]);
    expect(await names("!tier")).toEqual(["a1", "b1"]);
    expect(await names("actions.github.com/scale-set-name=linux,!tier")).toEqual(["a1"]);
    expect(await names("actions.github.com/scale-set-name in (windows, macos)")).toEqual(["b1"]);
    expect(await names("tier!=gpu")).toEqual(["a1", "b1"]);
    const bad = await apiError(custom.listNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, labelSelector: "a b" }));
    expect(bad.code).toBe(400);
    expect(bad.status.reason).toBe("BadRequest");

    const byName = (await custom.listNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, fieldSelector: "metadata.name=a2" })) as {
      items: EphemeralRunner[];
    };
    expect(byName.items.map((i) => i.metadata.name)).toEqual(["a2"]);
    const statusField = await apiError(
      custom.listNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, fieldSelector: "status.phase=Running" }),
    );
    expect(statusField.code).toBe(400);
    expect(statusField.status.message).toBe('"status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"');

    const all = (await custom.listClusterCustomObject({ group: G, version: V, plural: P })) as { items: EphemeralRunner[] };
    expect(all.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([`${NS}/a1`, `${NS}/a2`, `${NS}/b1`, "other/c1"]);

    const got = (await custom.getNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, name: "a1" })) as EphemeralRunner;
    expect(got.metadata.name).toBe("a1");
    expect(got.spec.githubConfigUrl).toBe("https://github.com/octo-org");

    const nf = await apiError(custom.getNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, name: "ghost" }));
    expect(nf.code).toBe(404);
    expect(nf.status).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'ephemeralrunners.actions.github.com "ghost" not found',
      reason: "NotFound",
      details: { name: "ghost", group: "actions.github.com", kind: "ephemeralrunners" },
      code: 404,
    });
  });

  it("pages with limit and continue over a consistent snapshot, and expires old tokens", async () => {
    const t = await createKubeTenant(standin.url);
    await t.seedAll(["r1", "r2", "r3", "r4", "r5"].map((name) => makeEphemeralRunner({ namespace: NS, name, scaleSet: "s" })));
    const { custom } = clients(t.baseUrl, t.adminToken);
    type Page = { items: EphemeralRunner[]; metadata: { continue?: string; remainingItemCount?: number; resourceVersion: string } };
    const page = async (limit: number, cont?: string, labelSelector?: string): Promise<Page> =>
      (await custom.listNamespacedCustomObject({
        group: G,
        version: V,
        namespace: NS,
        plural: P,
        limit,
        ...(cont ? { _continue: cont } : {}),
        ...(labelSelector ? { labelSelector } : {}),
      })) as Page;
    const p1 = await page(2);
    expect(p1.items.map((i) => i.metadata.name)).toEqual(["r1", "r2"]);
    expect(p1.metadata.remainingItemCount).toBe(3);
    expect(p1.metadata.continue).toBeTruthy();
    // A change after the first page is not seen by the rest of that list.
    await t.seed(makeEphemeralRunner({ namespace: NS, name: "r0", scaleSet: "s" }));
    await t.remove(NS, "r4");
    const p2 = await page(2, p1.metadata.continue);
    expect(p2.items.map((i) => i.metadata.name)).toEqual(["r3", "r4"]);
    expect(p2.metadata.resourceVersion).toBe(p1.metadata.resourceVersion);
    const p3 = await page(2, p2.metadata.continue);
    expect(p3.items.map((i) => i.metadata.name)).toEqual(["r5"]);
    expect(p3.metadata.continue).toBeUndefined();

    // With a selector, a page may end early; a continue token means "maybe more".
    const s1 = await page(1, undefined, "actions.github.com/scale-set-name=s");
    expect(s1.metadata.remainingItemCount).toBeUndefined();

    await t.compact();
    const gone = await apiError(page(2, p1.metadata.continue));
    expect(gone.code).toBe(410);
    expect(gone.status.reason).toBe("Expired");
    expect(gone.status.metadata.continue).toBeTruthy();

    const garbage = await apiError(page(2, "not-a-token"));
    expect(garbage.code).toBe(400);
  });

  it("deletes with a uid precondition: finalizers keep the object until ARC's controller finalizes it", async () => {
    const t = await createKubeTenant(standin.url);
    const seeded = await t.seed(makeEphemeralRunner({ namespace: NS, name: "job-done", scaleSet: "s", workflowRunId: 7 }));
    const uid = seeded.metadata.uid ?? "";
    const { custom } = clients(t.baseUrl, t.adminToken);
    const del = (name: string, u: string): Promise<unknown> =>
      custom.deleteNamespacedCustomObject({
        group: G,
        version: V,
        namespace: NS,
        plural: P,
        name,
        body: { preconditions: { uid: u }, propagationPolicy: "Background" },
      });

    const wrong = await apiError(del("job-done", "00000000-0000-0000-0000-000000000000"));
    expect(wrong.code).toBe(409);
    expect(wrong.status).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `Operation cannot be fulfilled on ephemeralrunners.actions.github.com "job-done": Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: ${uid}`,
      reason: "Conflict",
      details: { name: "job-done", group: "actions.github.com", kind: "ephemeralrunners" },
      code: 409,
    });

    const marked = (await del("job-done", uid)) as EphemeralRunner;
    expect(marked.metadata.deletionTimestamp).toMatch(/Z$/);
    expect(marked.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(marked.metadata.finalizers).toEqual([...EPHEMERAL_RUNNER_FINALIZERS]);
    expect(Number(marked.metadata.resourceVersion)).toBeGreaterThan(Number(seeded.metadata.resourceVersion));
    expect(marked.metadata.generation).toBe(2);

    const again = (await del("job-done", uid)) as EphemeralRunner;
    expect(again).toEqual(marked);

    expect(await t.finalize()).toEqual([{ namespace: NS, name: "job-done" }]);
    const nf = await apiError(del("job-done", uid));
    expect(nf.code).toBe(404);

    // Without finalizers the object goes at once, and the answer is a Success Status.
    const bare = await t.seed(makeEphemeralRunner({ namespace: NS, name: "bare", scaleSet: "s", finalizers: [] }));
    const gone = (await del("bare", bare.metadata.uid ?? "")) as KubeStatus;
    expect(gone).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { name: "bare", group: "actions.github.com", kind: "ephemeralrunners", uid: bare.metadata.uid },
    });
    expect(await t.get(NS, "bare")).toBeUndefined();

    // resourceVersion preconditions too.
    const rvd = await t.seed(makeEphemeralRunner({ namespace: NS, name: "rv", scaleSet: "s" }));
    const stale = await apiError(
      custom.deleteNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, name: "rv", body: { preconditions: { resourceVersion: "1" } } }),
    );
    expect(stale.status.message).toBe(
      `Operation cannot be fulfilled on ephemeralrunners.actions.github.com "rv": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${rvd.metadata.resourceVersion}`,
    );
  });

  it("refuses what a Role does not grant, with the real 403, and needs a token", async () => {
    const t = await createKubeTenant(standin.url);
    await t.seedAll([
      makeEphemeralRunner({ namespace: NS, name: "mine", scaleSet: "s" }),
      makeEphemeralRunner({ namespace: "other", name: "theirs", scaleSet: "s" }),
    ]);
    const sa = await t.addServiceAccount({
      name: "arc-reaper",
      namespace: "arc-reaper",
      token: "sa-token-123456",
      bindings: roleBindings([NS], reaperRules()),
    });
    expect(sa.user).toBe("system:serviceaccount:arc-reaper:arc-reaper");
    const { custom, core } = clients(t.baseUrl, sa.token);

    const list = (await custom.listNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P })) as { items: unknown[] };
    expect(list.items).toHaveLength(1);

    const otherNs = await apiError(custom.deleteNamespacedCustomObject({ group: G, version: V, namespace: "other", plural: P, name: "theirs" }));
    expect(otherNs.code).toBe(403);
    expect(otherNs.status).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'ephemeralrunners.actions.github.com "theirs" is forbidden: User "system:serviceaccount:arc-reaper:arc-reaper" cannot delete resource "ephemeralrunners" in API group "actions.github.com" in the namespace "other"',
      reason: "Forbidden",
      details: { name: "theirs", group: "actions.github.com", kind: "ephemeralrunners" },
      code: 403,
    });

    const cluster = await apiError(custom.listClusterCustomObject({ group: G, version: V, plural: P }));
    expect(cluster.status.message).toBe(
      'ephemeralrunners.actions.github.com is forbidden: User "system:serviceaccount:arc-reaper:arc-reaper" cannot list resource "ephemeralrunners" in API group "actions.github.com" at the cluster scope',
    );
    const patch = await apiError(
      custom.patchNamespacedCustomObject({
        group: G,
        version: V,
        namespace: NS,
        plural: P,
        name: "mine",
        body: [{ op: "remove", path: "/metadata/finalizers" }],
      }),
    );
    expect(patch.code).toBe(403);
    const pods = await apiError(core.listNamespacedPod({ namespace: NS }));
    expect(pods.status.message).toBe(
      'pods is forbidden: User "system:serviceaccount:arc-reaper:arc-reaper" cannot list resource "pods" in API group "" in the namespace "arc-runners"',
    );
    expect(pods.status.details).toEqual({ kind: "pods" });
    const secrets = await apiError(core.listNamespacedSecret({ namespace: NS }));
    expect(secrets.code).toBe(403);

    // The admin may do everything; pods and secrets exist (empty), unknown paths are 404.
    const admin = clients(t.baseUrl, t.adminToken);
    expect((await admin.core.listNamespacedPod({ namespace: NS })).items).toEqual([]);
    expect((await raw(t, "GET", "/apis/example.com/v1/widgets")).json["message"]).toBe("the server could not find the requested resource");
    expect((await raw(t, "GET", "/nope")).code).toBe(404);

    // A cluster binding grants cluster-wide list; resourceNames narrow a rule.
    await t.addServiceAccount({
      name: "viewer",
      namespace: "ops",
      token: "viewer-token-1",
      bindings: [
        { clusterWide: true, rules: [{ apiGroups: [G], resources: [P], verbs: ["list"] }] },
        { namespace: NS, rules: [{ apiGroups: [G], resources: [P], verbs: ["get"], resourceNames: ["mine"] }] },
      ],
    });
    const viewer = clients(t.baseUrl, "viewer-token-1").custom;
    expect(((await viewer.listClusterCustomObject({ group: G, version: V, plural: P })) as { items: unknown[] }).items).toHaveLength(2);
    await viewer.getNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, name: "mine" });
    expect((await apiError(viewer.getNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, name: "other" }))).code).toBe(403);

    const none = await raw(t, "GET", runnerPath(NS), { token: null });
    expect(none.code).toBe(401);
    expect(none.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Unauthorized",
      reason: "Unauthorized",
      code: 401,
    });
    // client-node 2.0.1 throws ApiException(401) without the body for 401.
    const unknown = await apiError(clients(t.baseUrl, "wrong-token").custom.listNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P }));
    expect(unknown.code).toBe(401);
  });
});

describe("writes", () => {
  it("a JSON patch with test operations is applied all or nothing, as the API server does: 422 when a test fails, 403 without the patch verb (issue 24's finish)", async () => {
    const t = await createKubeTenant(standin.url);
    const seeded = await t.seed(makeEphemeralRunner({ namespace: NS, name: "held", scaleSet: "s", workflowRunId: 1 }));
    const path = runnerPath(NS, "held");
    const finalizers = seeded.metadata.finalizers ?? [];
    expect(finalizers.length).toBeGreaterThan(0);
    const finish = (uid: string, fs: string[]) => [
      { op: "test", path: "/metadata/uid", value: uid },
      { op: "test", path: "/metadata/finalizers", value: fs },
      { op: "remove", path: "/metadata/finalizers" },
    ];
    const json = "application/json-patch+json";
    const wrongUid = await raw(t, "PATCH", path, { body: finish("another-uid", finalizers), contentType: json });
    expect([wrongUid.code, wrongUid.json["reason"]]).toEqual([422, "Invalid"]);
    const wrongList = await raw(t, "PATCH", path, { body: finish(seeded.metadata.uid, [finalizers[0]!]), contentType: json });
    expect(wrongList.code).toBe(422);
    expect((await t.get(NS, "held"))?.metadata.finalizers).toEqual(finalizers); // nothing applied

    await t.addServiceAccount({
      name: "arc-reaper",
      namespace: "arc-reaper",
      token: "sa-token-finish",
      bindings: [{ namespace: NS, rules: [{ apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["get", "list", "delete"] }] }],
    });
    const refused = await raw(t, "PATCH", path, { body: finish(seeded.metadata.uid, finalizers), contentType: json, token: "sa-token-finish" });
    expect([refused.code, refused.json["reason"]]).toEqual([403, "Forbidden"]);
    await t.addServiceAccount({
      name: "arc-reaper-finish",
      namespace: "arc-reaper",
      token: "sa-token-finish-2",
      bindings: [{ namespace: NS, rules: [{ apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["patch"] }] }],
    });
    const ok = await raw(t, "PATCH", path, { body: finish(seeded.metadata.uid, finalizers), contentType: json, token: "sa-token-finish-2" });
    expect(ok.code).toBe(200);
    expect((await t.get(NS, "held"))?.metadata.finalizers).toBeUndefined();
  });

  it("patches and updates with the status subresource's rules; removing the last finalizer of a deleting object removes it", async () => {
    const t = await createKubeTenant(standin.url);
    const seeded = await t.seed(makeEphemeralRunner({ namespace: NS, name: "p", scaleSet: "s", workflowRunId: 1 }));
    const path = runnerPath(NS, "p");

    const merge = await raw(t, "PATCH", path, {
      body: { metadata: { labels: { extra: "yes" } }, status: { workflowRunId: 99 } },
      contentType: "application/merge-patch+json",
    });
    expect(merge.code).toBe(200);
    const merged = merge.json as unknown as EphemeralRunner;
    expect(merged.metadata.labels?.["extra"]).toBe("yes");
    expect(merged.status?.workflowRunId).toBe(1); // status changes go through /status only
    expect(merged.metadata.generation).toBe(1); // metadata changes do not bump generation

    const st = await raw(t, "PATCH", `${path}/status`, { body: { status: { workflowRunId: 99 } }, contentType: "application/merge-patch+json" });
    expect((st.json as unknown as EphemeralRunner).status?.workflowRunId).toBe(99);

    const spec = await raw(t, "PATCH", path, {
      body: [{ op: "replace", path: "/spec/runnerScaleSetId", value: 2 }],
      contentType: "application/json-patch+json",
    });
    expect((spec.json as unknown as EphemeralRunner).metadata.generation).toBe(2);

    expect((await raw(t, "PATCH", path, { body: {}, contentType: "application/strategic-merge-patch+json" })).code).toBe(415);

    const warn = await raw(t, "PATCH", path, { body: { spec: { bogus: 1 } }, contentType: "application/merge-patch+json" });
    expect(warn.code).toBe(200);
    expect(warn.headers.get("warning")).toContain('unknown field \\"spec.bogus\\"');
    const strict = await raw(t, "PATCH", `${path}?fieldValidation=Strict`, { body: { spec: { bogus: 1 } }, contentType: "application/merge-patch+json" });
    expect(strict.code).toBe(400);
    const invalidPatch = await raw(t, "PATCH", path, { body: { spec: { runnerScaleSetId: "x" } }, contentType: "application/merge-patch+json" });
    expect(invalidPatch.code).toBe(422);

    const current = (await t.get(NS, "p")) as EphemeralRunner;
    const noRv = structuredClone(current);
    delete noRv.metadata.resourceVersion;
    expect((await raw(t, "PUT", path, { body: noRv })).code).toBe(422);
    const staleRv = structuredClone(current);
    staleRv.metadata.resourceVersion = seeded.metadata.resourceVersion ?? "";
    const stale = await raw(t, "PUT", path, { body: staleRv });
    expect(stale.code).toBe(409);
    expect(stale.json["message"]).toBe(
      'Operation cannot be fulfilled on ephemeralrunners.actions.github.com "p": the object has been modified; please apply your changes to the latest version and try again',
    );

    await raw(t, "DELETE", path);
    const addFinalizer = await raw(t, "PATCH", path, {
      body: { metadata: { finalizers: [...EPHEMERAL_RUNNER_FINALIZERS, "example.com/more"] } },
      contentType: "application/merge-patch+json",
    });
    expect(addFinalizer.code).toBe(422);
    const finalized = await raw(t, "PATCH", path, { body: { metadata: { finalizers: null } }, contentType: "application/merge-patch+json" });
    expect(finalized.code).toBe(200);
    expect(await t.get(NS, "p")).toBeUndefined();
  });

  it("accepts DELETE without a body, takes options from the query then, and checks them", async () => {
    const t = await createKubeTenant(standin.url);
    await t.seedAll([
      makeEphemeralRunner({ namespace: NS, name: "q1", scaleSet: "s", finalizers: [] }),
      makeEphemeralRunner({ namespace: NS, name: "q2", scaleSet: "s", finalizers: [] }),
    ]);
    expect((await raw(t, "DELETE", runnerPath(NS, "q1"))).json["status"]).toBe("Success");
    const fg = await raw(t, "DELETE", `${runnerPath(NS, "q2")}?propagationPolicy=Foreground`);
    expect((fg.json as unknown as EphemeralRunner).metadata.finalizers).toEqual(["foregroundDeletion"]);
    const bad = await raw(t, "DELETE", runnerPath(NS, "q2"), { body: { propagationPolicy: "Sideways" } });
    expect(bad.code).toBe(422);
    expect(bad.json["message"]).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
    const dry = await t.seed(makeEphemeralRunner({ namespace: NS, name: "dry", scaleSet: "s" }));
    await raw(t, "DELETE", runnerPath(NS, "dry"), { body: { dryRun: ["All"] } });
    expect(await t.get(NS, "dry")).toEqual(dry);
  });

  it("plays ARC's controller with autoFinalize", async () => {
    const t = await createKubeTenant(standin.url, { autoFinalize: true });
    await t.seed(makeEphemeralRunner({ namespace: NS, name: "auto", scaleSet: "s" }));
    const res = await raw(t, "DELETE", runnerPath(NS, "auto"), { body: { propagationPolicy: "Background" } });
    expect((res.json as unknown as EphemeralRunner).metadata.deletionTimestamp).toBeTruthy();
    expect(await t.get(NS, "auto")).toBeUndefined();
    // Seeded objects already being deleted stay until finalize().
    await t.seed(makeEphemeralRunner({ namespace: NS, name: "stuck", scaleSet: "s", deletionTimestamp: "2026-01-01T00:00:00Z" }));
    expect((await t.get(NS, "stuck"))?.metadata.deletionTimestamp).toBe("2026-01-01T00:00:00Z");
    expect(await t.finalize({ names: ["stuck"] })).toEqual([{ namespace: NS, name: "stuck" }]);
  });
});

describe("faults and the call log", () => {
  it("answers 429 with Retry-After and the Status, a limited number of times", async () => {
    const t = await createKubeTenant(standin.url);
    await t.addFault({ match: { method: "GET", pathIncludes: "/ephemeralrunners" }, status: 429, retryAfterSeconds: 3, times: 1 });
    const first = await raw(t, "GET", runnerPath(NS));
    expect(first.code).toBe(429);
    expect(first.headers.get("retry-after")).toBe("3");
    expect(first.json).toMatchObject({ kind: "Status", reason: "TooManyRequests", details: { retryAfterSeconds: 3 }, code: 429 });
    expect((await raw(t, "GET", runnerPath(NS))).code).toBe(200);

    await t.addFault({ match: { method: "DELETE" }, status: 500 });
    const { custom } = clients(t.baseUrl, t.adminToken);
    const e = await apiError(custom.deleteNamespacedCustomObject({ group: G, version: V, namespace: NS, plural: P, name: "x" }));
    expect(e.code).toBe(500);
    expect(e.status.reason).toBe("InternalError");
    await t.clearFaults();
    expect((await t.state()).faults).toEqual([]);

    await t.addFault({ match: {}, rawBody: "<html>bad gateway</html>", status: 502, times: 1 });
    const unreadable = await fetch(`${t.baseUrl}${runnerPath(NS)}`, { headers: { Authorization: `Bearer ${t.adminToken}` } });
    expect(unreadable.status).toBe(502);
    expect(await unreadable.text()).toBe("<html>bad gateway</html>");

    await t.addFault({ match: {}, dropConnection: true, times: 1 });
    await expect(raw(t, "GET", runnerPath(NS))).rejects.toThrow();
  });

  it("drops a delayed request whose client gave up, so a timed-out delete changes nothing", async () => {
    const t = await createKubeTenant(standin.url);
    await t.seed(makeEphemeralRunner({ namespace: NS, name: "slow", scaleSet: "s" }));
    await t.addFault({ match: { method: "DELETE" }, delayMs: 400 });
    await expect(raw(t, "DELETE", runnerPath(NS, "slow"), { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    // Real time must pass here: the stand-in's own 400 ms delay has to run out, when a delete it still held would apply.
    await new Promise((r) => setTimeout(r, 600));
    expect((await t.get(NS, "slow"))?.metadata.deletionTimestamp).toBeUndefined();
    const calls = await t.calls();
    expect(calls.at(-1)).toMatchObject({ method: "DELETE", status: 0 });

    // A delay alone, waited out, gives the real answer.
    const res = await raw(t, "DELETE", runnerPath(NS, "slow"));
    expect(res.code).toBe(200);
    expect((res.json as unknown as EphemeralRunner).metadata.deletionTimestamp).toBeTruthy();
  });

  it("records calls with the user, query and body, never the token", async () => {
    const t = await createKubeTenant(standin.url);
    await t.addServiceAccount({ name: "reaper", namespace: "ops", token: "secret-token-xyz", bindings: roleBindings([NS]) });
    await raw(t, "GET", `${runnerPath(NS)}?labelSelector=a%3Db&limit=5`, { token: "secret-token-xyz" });
    await raw(t, "DELETE", runnerPath(NS, "r"), { token: "secret-token-xyz", body: { preconditions: { uid: "u-1" }, propagationPolicy: "Background" } });
    await raw(t, "GET", runnerPath("elsewhere"), { token: "secret-token-xyz" });
    await raw(t, "GET", runnerPath(NS), { token: "nope-nope" });
    const calls = await t.calls();
    expect(calls.map((c) => [c.method, c.status, c.user, c.auth])).toEqual([
      ["GET", 200, "system:serviceaccount:ops:reaper", "serviceaccount"],
      ["DELETE", 404, "system:serviceaccount:ops:reaper", "serviceaccount"],
      ["GET", 403, "system:serviceaccount:ops:reaper", "serviceaccount"],
      ["GET", 401, null, "invalid"],
    ]);
    expect(calls[0]?.query).toEqual({ labelSelector: "a=b", limit: "5" });
    expect(calls[0]?.path).toBe(runnerPath(NS));
    expect(calls[1]?.body).toEqual({ preconditions: { uid: "u-1" }, propagationPolicy: "Background" });
    expect(JSON.stringify(calls)).not.toContain("secret-token-xyz");
    expect(JSON.stringify(calls)).not.toContain("nope-nope");
    await t.clearCalls();
    expect(await t.calls()).toEqual([]);
  });

  it("closes promptly while a delayed answer is pending", { timeout: 30_000 }, async () => {
    const own = await startKubeStandin();
    const t = await createKubeTenant(own.url);
    // Longer than the test may take: a close() that waited for the answer would fail it by its timeout.
    await t.addFault({ match: {}, delayMs: 120_000 });
    const pending = raw(t, "GET", runnerPath(NS)).catch((e: unknown) => e);
    await expect.poll(async () => (await t.faults())[0]?.taken ?? 0).toBe(1); // the request is in, held by the delay
    await own.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});
