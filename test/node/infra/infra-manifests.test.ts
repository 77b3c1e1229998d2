// Validates the deployable infrastructure: the Kubernetes manifests (against the
// Kubernetes schemas in kubernetes-models, and for least privilege), the GitHub
// App manifest, and the ARC backstop values.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { Namespace, Pod, Secret, ServiceAccount } from "kubernetes-models/v1";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import {
  INFRA_KUBERNETES_DIR,
  RUNNER_NAMESPACE_BASE_DIR,
  type KubeObject,
  isJsonObject,
  isKustomizationFile,
  listYamlFiles,
  loadReaperRbac,
  objectId,
  rbacAllows,
  readYamlDocuments,
  renderKustomization,
} from "./infra-rbac.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const BOUND_SECONDS = 432_000;

// The models take their own typed input; validate() checks at run time what
// this cast asserts.
const modelData = <T>(obj: KubeObject): T => obj as unknown as T;

// Every kind the manifests may contain, with its schema. Anything else (a
// ClusterRole, a Deployment, ...) fails the test: arc-reaper needs none.
const VALIDATORS: Record<string, (obj: KubeObject) => void> = {
  "v1/Namespace": (obj) => new Namespace(modelData(obj)).validate(),
  "v1/ServiceAccount": (obj) => new ServiceAccount(modelData(obj)).validate(),
  "v1/Secret": (obj) => new Secret(modelData(obj)).validate(),
  "rbac.authorization.k8s.io/v1/Role": (obj) => new Role(modelData(obj)).validate(),
  "rbac.authorization.k8s.io/v1/RoleBinding": (obj) => new RoleBinding(modelData(obj)).validate(),
};

function validate(obj: KubeObject): void {
  const validator = VALIDATORS[`${obj.apiVersion}/${obj.kind}`];
  if (validator === undefined) throw new Error(`unexpected kind ${obj.apiVersion} ${obj.kind} (${obj.metadata.name})`);
  validator(obj);
}

function byId(objects: KubeObject[]): Map<string, KubeObject> {
  return new Map(objects.map((o) => [objectId(o), o]));
}

function find(objects: KubeObject[], kind: string, namespace: string | undefined, name: string): KubeObject {
  const obj = objects.find((o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name);
  if (obj === undefined) throw new Error(`${kind} ${namespace ?? "-"}/${name} not found`);
  return obj;
}

// Called only when kubectl is there (the test is skipped, and says so, when it is not): any failure fails the test.
function kubectlKustomize(dir: string): KubeObject[] {
  const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return out
    .split(/^---$/m)
    .map((doc) => parseYaml(doc) as unknown)
    .filter((doc): doc is KubeObject => isJsonObject(doc));
}

function kubectlAvailable(): boolean {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const EXPECTED_RULES = [{ apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["get", "list", "delete"] }];

describe("infra/kubernetes", () => {
  const files = listYamlFiles(INFRA_KUBERNETES_DIR);
  const manifestFiles = files.filter((f) => !isKustomizationFile(f));
  const rendered = renderKustomization(INFRA_KUBERNETES_DIR);

  it("has manifests and kustomizations", () => {
    expect(manifestFiles.length).toBeGreaterThan(0);
    expect(files.filter(isKustomizationFile).length).toBeGreaterThan(0);
  });

  it.each(manifestFiles.map((f) => [relative(ROOT, f), f]))("%s holds valid Kubernetes objects", (_name, file) => {
    const docs = readYamlDocuments(file);
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      if (!isJsonObject(doc)) throw new Error(`${file}: not a mapping`);
      validate(doc as KubeObject);
    }
  });

  it("every kustomization renders, and every manifest file is reached from the top level", () => {
    for (const k of files.filter(isKustomizationFile)) renderKustomization(resolve(k, ".."));
    const reached = new Set<string>();
    const walk = (dir: string): void => {
      const k = readYamlDocuments(join(dir, "kustomization.yaml"))[0];
      if (!isJsonObject(k) || !Array.isArray(k["resources"])) return;
      for (const entry of k["resources"]) {
        const path = resolve(dir, String(entry));
        if (path.endsWith(".yaml") || path.endsWith(".yml")) reached.add(path);
        else walk(path);
      }
    };
    walk(INFRA_KUBERNETES_DIR);
    walk(join(INFRA_KUBERNETES_DIR, "finish-stuck")); // the optional overlay (REAPER_FINISH_STUCK), applied on its own
    expect([...reached].sort()).toEqual(manifestFiles);
  });

  it("the optional finish-stuck overlay renders a Role granting only patch on ephemeralrunners, bound to arc-reaper, in arc-runners; the default Role is unchanged", () => {
    const objects = renderKustomization(join(INFRA_KUBERNETES_DIR, "finish-stuck"));
    expect(objects.map(objectId).sort()).toEqual([
      "rbac.authorization.k8s.io/Role/arc-runners/arc-reaper-finish",
      "rbac.authorization.k8s.io/RoleBinding/arc-runners/arc-reaper-finish",
    ]);
    expect(find(objects, "Role", "arc-runners", "arc-reaper-finish")["rules" as keyof KubeObject]).toEqual([
      { apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["patch"] },
    ]);
    expect(find(objects, "RoleBinding", "arc-runners", "arc-reaper-finish")["subjects" as keyof KubeObject]).toEqual([
      { kind: "ServiceAccount", name: "arc-reaper", namespace: "arc-reaper" },
    ]);
    expect(find(rendered, "Role", "arc-runners", "arc-reaper")["rules" as keyof KubeObject]).toEqual(EXPECTED_RULES);
  });

  it("renders exactly the ServiceAccount, its token, and a Role and RoleBinding in arc-runners", () => {
    expect(rendered.map(objectId).sort()).toEqual(
      [
        "core/Namespace/-/arc-reaper",
        "core/ServiceAccount/arc-reaper/arc-reaper",
        "core/Secret/arc-reaper/arc-reaper-token",
        "rbac.authorization.k8s.io/Role/arc-runners/arc-reaper",
        "rbac.authorization.k8s.io/RoleBinding/arc-runners/arc-reaper",
        "rbac.authorization.k8s.io/Role/kube-system/arc-reaper-cluster-identity",
        "rbac.authorization.k8s.io/RoleBinding/kube-system/arc-reaper-cluster-identity",
      ].sort(),
    );
    for (const obj of rendered) validate(obj);
  });

  it("in kube-system, get on that one namespace object (the cluster's identity) and nothing else", () => {
    const role = find(rendered, "Role", "kube-system", "arc-reaper-cluster-identity");
    expect(role["rules"]).toEqual([{ apiGroups: [""], resources: ["namespaces"], resourceNames: ["kube-system"], verbs: ["get"] }]);
    const rbac = loadReaperRbac("arc-runners");
    const identity = { namespace: "kube-system", apiGroup: "", resource: "namespaces" };
    expect(rbacAllows(rbac, { ...identity, verb: "get", name: "kube-system" })).toBe(true);
    for (const refused of [
      { ...identity, verb: "get", name: "default" },
      { ...identity, verb: "list" },
      { ...identity, verb: "update", name: "kube-system" },
      { namespace: "kube-system", apiGroup: "", resource: "secrets", verb: "get", name: "x" },
    ])
      expect(rbacAllows(rbac, refused), JSON.stringify(refused)).toBe(false);
  });

  it("the Role grants get, list and delete on ephemeralrunners in actions.github.com, and nothing else", () => {
    const role = find(rendered, "Role", "arc-runners", "arc-reaper");
    expect(role["rules"]).toEqual(EXPECTED_RULES);
    // No wildcard, no subresource, no resourceNames or nonResourceURLs sneaking in.
    expect(JSON.stringify(role["rules"])).not.toContain("*");
    expect(Object.keys(role).sort()).toEqual(["apiVersion", "kind", "metadata", "rules"]);
    const rbacKinds = rendered.filter((o) => o.apiVersion.startsWith("rbac.authorization.k8s.io/")).map((o) => o.kind);
    expect(rbacKinds.sort()).toEqual(["Role", "Role", "RoleBinding", "RoleBinding"]); // and kube-system's, below
  });

  it("the Role names the real EphemeralRunner CRD", () => {
    const candidates = [
      join(ROOT, "test/fixtures/arc/actions.github.com_ephemeralrunners.yaml"),
      join(ROOT, "../shared/fixtures/arc/actions.github.com_ephemeralrunners.yaml"),
    ];
    const crdFile = candidates.find((f) => existsSync(f));
    if (crdFile === undefined) throw new Error(`EphemeralRunner CRD fixture not found in ${candidates.join(" or ")}`);
    const crd = readYamlDocuments(crdFile)[0];
    if (!isJsonObject(crd) || !isJsonObject(crd["spec"]) || !isJsonObject(crd["spec"]["names"])) {
      throw new Error(`${crdFile}: not a CRD`);
    }
    expect(crd["spec"]["group"]).toBe(EXPECTED_RULES[0]?.apiGroups[0]);
    expect(crd["spec"]["names"]["plural"]).toBe(EXPECTED_RULES[0]?.resources[0]);
    // A Role (not a ClusterRole) can only grant a namespaced resource.
    expect(crd["spec"]["scope"]).toBe("Namespaced");
  });

  it("the RoleBinding binds that Role to the arc-reaper ServiceAccount only", () => {
    const binding = find(rendered, "RoleBinding", "arc-runners", "arc-reaper");
    expect(binding["roleRef"]).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "arc-reaper" });
    expect(binding["subjects"]).toEqual([{ kind: "ServiceAccount", name: "arc-reaper", namespace: "arc-reaper" }]);
  });

  it("the ServiceAccount mounts no token and the Secret is a long-lived token for it", () => {
    const account = find(rendered, "ServiceAccount", "arc-reaper", "arc-reaper");
    expect(account["automountServiceAccountToken"]).toBe(false);
    const secret = find(rendered, "Secret", "arc-reaper", "arc-reaper-token");
    expect(secret["type"]).toBe("kubernetes.io/service-account-token");
    expect(secret.metadata["annotations"]).toEqual({ "kubernetes.io/service-account.name": "arc-reaper" });
    // The token controller fills the data in; the manifest carries none.
    expect(secret["data"]).toBeUndefined();
    expect(secret["stringData"]).toBeUndefined();
  });

  it("the runner-namespace base takes its namespace from an overlay, keeping the subject in arc-reaper", () => {
    const objects = renderKustomization(RUNNER_NAMESPACE_BASE_DIR, { namespace: "team-b-runners" });
    expect(objects.map(objectId).sort()).toEqual([
      "rbac.authorization.k8s.io/Role/team-b-runners/arc-reaper",
      "rbac.authorization.k8s.io/RoleBinding/team-b-runners/arc-reaper",
    ]);
    for (const obj of objects) validate(obj);
    const binding = find(objects, "RoleBinding", "team-b-runners", "arc-reaper");
    expect(binding["subjects"]).toEqual([{ kind: "ServiceAccount", name: "arc-reaper", namespace: "arc-reaper" }]);
    // Without an overlay the base has no namespace at all (for `kubectl apply -n NS`).
    for (const obj of renderKustomization(RUNNER_NAMESPACE_BASE_DIR)) expect(obj.metadata.namespace).toBeUndefined();
  });

  it.skipIf(!kubectlAvailable())("renders the same as `kubectl kustomize`", () => {
    for (const dir of [INFRA_KUBERNETES_DIR, RUNNER_NAMESPACE_BASE_DIR]) {
      const theirs = kubectlKustomize(dir);
      expect(theirs.length, dir).toBeGreaterThan(0);
      const ours = byId(renderKustomization(dir));
      expect([...byId(theirs).keys()].sort()).toEqual([...ours.keys()].sort());
      for (const [id, obj] of byId(theirs)) expect(obj, id).toEqual(ours.get(id));
    }
  });
});

/** The cluster's identity: get on the kube-system namespace object (infra/kubernetes/cluster-identity). */
const IDENTITY_BINDING = { namespace: "kube-system", rules: [{ apiGroups: [""], resources: ["namespaces"], resourceNames: ["kube-system"], verbs: ["get"] }] };

describe("loadReaperRbac", () => {
  it("reads the ServiceAccount and the Role bound to it in the runner namespace", () => {
    expect(loadReaperRbac("arc-runners")).toEqual({
      serviceAccount: { name: "arc-reaper", namespace: "arc-reaper" },
      bindings: [{ namespace: "arc-runners", rules: EXPECTED_RULES }, IDENTITY_BINDING],
    });
  });

  it("gives one binding per runner namespace", () => {
    const rbac = loadReaperRbac("arc-runners", "team-b-runners");
    expect(rbac.bindings.map((b) => b.namespace)).toEqual(["arc-runners", "team-b-runners", "kube-system"]);
    for (const b of rbac.bindings.slice(0, 2)) expect(b.rules).toEqual(EXPECTED_RULES);
  });

  it("refuses a name that is not a namespace", () => {
    expect(() => loadReaperRbac("Arc_Runners")).toThrow(/not a valid namespace/);
  });

  it("allows exactly get, list and delete of EphemeralRunners in the bound namespace", () => {
    const rbac = loadReaperRbac("arc-runners");
    const ns = "arc-runners";
    const runner = { namespace: ns, apiGroup: "actions.github.com", resource: "ephemeralrunners" };
    for (const verb of ["get", "list", "delete"]) {
      expect(rbacAllows(rbac, { ...runner, verb, name: "runner-abc" }), verb).toBe(true);
    }
    const refused = [
      ...["watch", "create", "update", "patch", "deletecollection", "escalate", "bind", "impersonate"].map((verb) => ({
        ...runner,
        verb,
      })),
      { ...runner, resource: "ephemeralrunners/status", verb: "patch" },
      { ...runner, resource: "ephemeralrunners/status", verb: "get" },
      { ...runner, resource: "ephemeralrunnersets", verb: "delete" },
      { ...runner, resource: "autoscalingrunnersets", verb: "list" },
      { ...runner, resource: "autoscalinglisteners", verb: "get" },
      { namespace: ns, apiGroup: "", resource: "pods", verb: "get" },
      { namespace: ns, apiGroup: "", resource: "pods", verb: "list" },
      { namespace: ns, apiGroup: "", resource: "pods", verb: "delete" },
      { namespace: ns, apiGroup: "", resource: "pods/log", verb: "get" },
      { namespace: ns, apiGroup: "", resource: "secrets", verb: "get" },
      { namespace: ns, apiGroup: "", resource: "secrets", verb: "list" },
      { namespace: ns, apiGroup: "actions.summerwind.dev", resource: "ephemeralrunners", verb: "delete" },
      { ...runner, namespace: "default", verb: "list" },
      { ...runner, namespace: "arc-systems", verb: "delete" },
      { ...runner, namespace: "arc-reaper", verb: "get" },
    ];
    for (const request of refused) expect(rbacAllows(rbac, request), JSON.stringify(request)).toBe(false);
  });
});

describe("infra/github-app/manifest.json", () => {
  const manifest: unknown = JSON.parse(readFileSync(join(ROOT, "infra/github-app/manifest.json"), "utf8"));
  if (!isJsonObject(manifest)) throw new Error("the App manifest is not a JSON object");

  it("uses only documented manifest parameters, with the required homepage url", () => {
    const documented = [
      "name",
      "url",
      "hook_attributes",
      "redirect_url",
      "callback_urls",
      "setup_url",
      "description",
      "public",
      "default_events",
      "default_permissions",
      "request_oauth_on_install",
      "setup_on_update",
    ];
    for (const key of Object.keys(manifest)) expect(documented, key).toContain(key);
    expect(manifest["url"]).toMatch(/^https:\/\//);
    expect(manifest["name"]).toBe("arc-reaper");
  });

  it("asks for Actions: read and nothing else", () => {
    expect(manifest["default_permissions"]).toEqual({ actions: "read" });
  });

  it("subscribes to workflow_job and workflow_run only", () => {
    expect(manifest["default_events"]).toEqual(["workflow_job", "workflow_run"]);
  });

  it("is private, with an active webhook at the placeholder URL", () => {
    expect(manifest["public"]).toBe(false);
    expect(manifest["hook_attributes"]).toEqual({
      url: "https://arc-reaper.example.invalid/webhook",
      active: true,
    });
    // No user authorization: the App acts only as itself.
    expect(manifest["request_oauth_on_install"]).toBeUndefined();
    expect(manifest["callback_urls"]).toBeUndefined();
  });
});

describe("infra/arc/values-backstop.yaml", () => {
  const values: unknown = parseYaml(readFileSync(join(ROOT, "infra/arc/values-backstop.yaml"), "utf8"));

  it("sets only template.spec.activeDeadlineSeconds, above the bound", () => {
    expect(values).toEqual({ template: { spec: { activeDeadlineSeconds: expect.any(Number) } } });
    const spec = isJsonObject(values) && isJsonObject(values["template"]) ? values["template"]["spec"] : undefined;
    if (!isJsonObject(spec)) throw new Error("template.spec missing");
    const deadline = spec["activeDeadlineSeconds"];
    expect(Number.isInteger(deadline)).toBe(true);
    expect(deadline).toBeGreaterThan(BOUND_SECONDS);
    expect(deadline).toBe(BOUND_SECONDS + 2 * 3600);
  });

  it("stays above REAPER_MAX_JOB_SECONDS in wrangler.toml (its default when the file leaves it out)", () => {
    const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
    const bound = /^REAPER_MAX_JOB_SECONDS\s*=\s*"(\d+)"/m.exec(toml)?.[1] ?? String(BOUND_SECONDS);
    const spec = (values as { template: { spec: { activeDeadlineSeconds: number } } }).template.spec;
    expect(spec.activeDeadlineSeconds).toBeGreaterThan(Number(bound));
  });

  it("is a valid pod spec field once merged into the chart's runner pod", () => {
    const spec = (values as { template: { spec: { activeDeadlineSeconds: number } } }).template.spec;
    new Pod({
      metadata: { name: "arc-runner-set-abcde-runner-fghij" },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "runner", image: "ghcr.io/actions/actions-runner:latest", command: ["/home/runner/run.sh"] }],
        ...spec,
      },
    }).validate();
  });
});
