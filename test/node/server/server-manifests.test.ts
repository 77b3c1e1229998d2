// infra/server: the in-cluster server's kustomize manifests, validated against
// the Kubernetes schemas in kubernetes-models (as infra/agent's are) and checked
// for one replica with Recreate, restricted Pod Security, a read-only root, the
// projected ServiceAccount token and CA where the workerd config reads them, a
// NetworkPolicy letting in only the ingress controller and out only DNS, the API
// server and HTTPS, the very Role the Worker gets (get, list, delete), and
// settings the Worker accepts, carrying every var of wrangler.toml.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Deployment } from "kubernetes-models/apps/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { ConfigMap, Namespace, PersistentVolumeClaim, Service, ServiceAccount } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { readSettings } from "../../../src/config/settings.ts";
import { readWranglerConfig, ROOT } from "../../../scripts/server/build.ts";
import { objectId, readYamlDocuments, renderKustomization, type KubeObject } from "../infra/infra-rbac.ts";
import { configMapHash } from "../infra/config-map-generator.ts";
import { hasKubectl, kustomize } from "../infra/kubectl.ts";

const DIR = join(ROOT, "infra/server");
/** The suffixes `kubectl kustomize` (kubectl 1.32) gives ConfigMaps generated from the literals a=1; a=1, b=2; a=x<y. */
const KNOWN_HASHES = { one: "h29d89cmmt", two: "7gdc49gk6d", escaped: "g55d2dbb44" };
const modelData = <T>(obj: KubeObject): T => obj as unknown as T;
const VALIDATORS: Record<string, (obj: KubeObject) => void> = {
  "v1/Namespace": (o) => new Namespace(modelData(o)).validate(),
  "v1/ServiceAccount": (o) => new ServiceAccount(modelData(o)).validate(),
  "v1/ConfigMap": (o) => new ConfigMap(modelData(o)).validate(),
  "v1/PersistentVolumeClaim": (o) => new PersistentVolumeClaim(modelData(o)).validate(),
  "v1/Service": (o) => new Service(modelData(o)).validate(),
  "apps/v1/Deployment": (o) => new Deployment(modelData(o)).validate(),
  "networking.k8s.io/v1/NetworkPolicy": (o) => new NetworkPolicy(modelData(o)).validate(),
  "networking.k8s.io/v1/Ingress": (o) => new Ingress(modelData(o)).validate(),
  "rbac.authorization.k8s.io/v1/Role": (o) => new Role(modelData(o)).validate(),
  "rbac.authorization.k8s.io/v1/RoleBinding": (o) => new RoleBinding(modelData(o)).validate(),
};

// biome-ignore lint/suspicious/noExplicitAny: a rendered manifest is walked by its known fields.
type Any = any;
const rendered = renderKustomization(DIR);
const one = (kind: string, namespace: string | undefined, name: string): Any => {
  const o = rendered.find((x) => x.kind === kind && x.metadata.namespace === namespace && x.metadata.name === name);
  if (!o) throw new Error(`${kind} ${namespace ?? "-"}/${name} not found`);
  return o;
};
const deployment = one("Deployment", "arc-reaper", "arc-reaper");
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const settingsMap = rendered.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("arc-reaper-settings-")) as Any;
const settings = settingsMap.data as Record<string, string>;

describe("infra/server", () => {
  it("renders exactly the server's objects and the runner namespace's Role, each valid", () => {
    expect(rendered.map(objectId).sort()).toEqual(
      [
        "core/Namespace/-/arc-reaper",
        "core/ServiceAccount/arc-reaper/arc-reaper",
        `core/ConfigMap/arc-reaper/${settingsMap.metadata.name}`,
        "core/PersistentVolumeClaim/arc-reaper/arc-reaper-ledger",
        "core/Service/arc-reaper/arc-reaper",
        "apps/Deployment/arc-reaper/arc-reaper",
        "networking.k8s.io/NetworkPolicy/arc-reaper/arc-reaper",
        "rbac.authorization.k8s.io/Role/arc-runners/arc-reaper",
        "rbac.authorization.k8s.io/RoleBinding/arc-runners/arc-reaper",
        "rbac.authorization.k8s.io/Role/kube-system/arc-reaper-cluster-identity",
        "rbac.authorization.k8s.io/RoleBinding/kube-system/arc-reaper-cluster-identity",
      ].sort(),
    );
    for (const o of rendered) VALIDATORS[`${o.apiVersion}/${o.kind}`]!(o);
    // No Secret: `kubectl apply -k` never puts a placeholder over the real one.
    expect(rendered.filter((o) => o.kind === "Secret" || o.kind.startsWith("Cluster"))).toEqual([]);
  });

  it("binds the Worker's own Role, unchanged: get, list and delete on ephemeralrunners, to the pod's ServiceAccount", () => {
    const role = one("Role", "arc-runners", "arc-reaper");
    expect(role.rules).toEqual([{ apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["get", "list", "delete"] }]);
    expect(role.rules).toEqual(readYamlDocuments(join(ROOT, "infra/kubernetes/runner-namespace/role.yaml")).map((d) => (d as Any).rules)[0]);
    const binding = one("RoleBinding", "arc-runners", "arc-reaper");
    expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "arc-reaper" });
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: pod.serviceAccountName, namespace: deployment.metadata.namespace }]);
    // kube-system's binding is the cluster's identity (infra/kubernetes/cluster-identity), not a runner namespace.
    const overlays = rendered.filter((o) => o.kind === "RoleBinding" && o.metadata.namespace !== "kube-system").map((o) => o.metadata.namespace);
    expect(settings.REAPER_NAMESPACES!.split(",").sort()).toEqual(overlays.sort());
  });

  it("runs one replica with Recreate (a second would be a second ledger) on the ledger's volume", () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
    expect(readFileSync(join(DIR, "base/deployment.yaml"), "utf8")).toMatch(/replicas: 1 # a second replica is a second ledger/);
    // One pod on the volume at a time, even a replacement on the same node (Recreate covers rollouts only).
    expect(one("PersistentVolumeClaim", "arc-reaper", "arc-reaper-ledger").spec.accessModes).toEqual(["ReadWriteOncePod"]);
    const ledger = pod.volumes.find((v: Any) => v.name === "ledger");
    expect(ledger.persistentVolumeClaim.claimName).toBe("arc-reaper-ledger");
    expect(container.volumeMounts).toContainEqual({ name: "ledger", mountPath: "/var/lib/arc-reaper" });
  });

  it("runs under restricted Pod Security, non-root, with a read-only root filesystem", () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    for (const f of ["hostNetwork", "hostPID", "hostIPC"]) expect(pod[f]).toBeUndefined();
    for (const v of pod.volumes) expect("hostPath" in v).toBe(false);
    expect(one("Namespace", undefined, "arc-reaper").metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    const user = /^USER\s+(\d+):(\d+)\s*$/m.exec(readFileSync(join(ROOT, "Dockerfile.server"), "utf8"));
    expect([pod.securityContext.runAsUser, pod.securityContext.runAsGroup]).toEqual([Number(user?.[1]), Number(user?.[2])]);
  });

  it("projects the ServiceAccount's token and the cluster's CA where the server reads them, and nowhere else", () => {
    expect(one("ServiceAccount", "arc-reaper", "arc-reaper").automountServiceAccountToken).toBe(false);
    expect(pod.automountServiceAccountToken).toBe(false);
    const projected = pod.volumes.find((v: Any) => v.name === "service-account").projected.sources;
    expect(projected).toEqual([
      { serviceAccountToken: { path: "token", expirationSeconds: 3600 } },
      { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
    ]);
    expect(container.volumeMounts).toContainEqual({ name: "service-account", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true });
    expect(readFileSync(join(ROOT, "Dockerfile.server"), "utf8")).toContain("--kube-ca /var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
    expect(settings.KUBE_TOKEN).toBe("service-account-token-file");
    expect(settings.KUBE_API_URL).toBe("https://kubernetes.default.svc");
  });

  it("its settings are ones the Worker accepts in the cluster, with every var of wrangler.toml", () => {
    for (const name of Object.keys(readWranglerConfig().vars)) expect(settings, name).toHaveProperty(name);
    const secrets = {
      GITHUB_WEBHOOK_SECRET: "x".repeat(32),
      GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----",
      ADMIN_TOKEN: "a".repeat(32),
    };
    const result = readSettings({ ...settings, ...secrets, ARC_REAPER_HOME: "cluster" });
    expect(result).toMatchObject({
      ok: true,
      settings: { dryRun: true, home: { kind: "cluster", sweepEverySeconds: 60, clientAddress: { header: "x-forwarded-for", trustedProxies: 1 } } },
    });
    expect(result.ok && result.settings.warnings).toEqual([]);
    expect(container.envFrom).toEqual([{ configMapRef: { name: settingsMap.metadata.name } }, { secretRef: { name: "arc-reaper-secrets" } }]);
    expect(container.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
    expect(container.readinessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
    // Liveness asks for an answer: a wedged server with its port open is restarted.
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
  });

  it("lets in only the ingress controller and Prometheus, and out only DNS, the API server and HTTPS", () => {
    const np = one("NetworkPolicy", "arc-reaper", "arc-reaper");
    expect(np.spec.podSelector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(np.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(np.spec.ingress).toEqual([
      { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } }], ports: [{ protocol: "TCP", port: 8080 }] },
      { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }], ports: [{ protocol: "TCP", port: 8080 }] },
    ]);
    const ports = np.spec.egress.map((r: Any) =>
      r.ports
        .map((p: Any) => `${p.protocol}/${p.port}`)
        .sort()
        .join(","),
    );
    expect(ports).toEqual(["TCP/53,UDP/53", "TCP/6443", "TCP/443"]);
    expect(np.spec.egress[0].to).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } },
    ]);
  });

  it("the examples route POST /webhook to the Service, with placeholder hosts", () => {
    const service = one("Service", "arc-reaper", "arc-reaper");
    expect(service.spec.selector).toEqual(deployment.spec.template.metadata.labels);
    expect(service.spec.ports).toEqual([{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }]);
    const ingress = readYamlDocuments(join(DIR, "examples/ingress.yaml"))[0] as Any;
    VALIDATORS["networking.k8s.io/v1/Ingress"]!(ingress);
    expect(ingress.spec.rules[0].host).toMatch(/\.invalid$/);
    expect(ingress.spec.rules[0].http.paths).toEqual([
      { path: "/webhook", pathType: "Exact", backend: { service: { name: "arc-reaper", port: { name: "http" } } } },
    ]);
    const route = readYamlDocuments(join(DIR, "examples/httproute.yaml"))[0] as Any;
    expect(route).toMatchObject({ apiVersion: "gateway.networking.k8s.io/v1", kind: "HTTPRoute", metadata: { namespace: "arc-reaper" } });
    expect(route.spec.hostnames).toEqual(["arc-reaper.example.invalid"]);
    expect(route.spec.rules).toEqual([
      { matches: [{ method: "POST", path: { type: "Exact", value: "/webhook" } }], backendRefs: [{ name: "arc-reaper", port: 80 }] },
    ]);
  });

  it("names its settings by a hash of them, so a committed change rolls the pod", () => {
    expect(settingsMap.metadata.name).toMatch(/^arc-reaper-settings-[a-z0-9]{10}$/);
    expect(settingsMap.metadata.name).toBe(`arc-reaper-settings-${configMapHash(settings)}`);
    expect(configMapHash({ ...settings, REAPER_DRY_RUN: "false" })).not.toBe(settingsMap.metadata.name.slice(-10));
    // kustomize's own figures for known maps (kubectl kustomize 1.32): the same function, not a look-alike.
    expect(configMapHash({ a: "1" })).toBe(KNOWN_HASHES.one);
    expect(configMapHash({ a: "1", b: "2" })).toBe(KNOWN_HASHES.two);
    expect(configMapHash({ a: "x<y" })).toBe(KNOWN_HASHES.escaped);
  });

  it.skipIf(!hasKubectl)("renders the same as `kubectl kustomize`", () => {
    const theirs = kustomize(DIR);
    const ours = new Map(rendered.map((o) => [objectId(o), o]));
    expect(theirs.map(objectId).sort()).toEqual([...ours.keys()].sort());
    for (const obj of theirs) expect(obj, objectId(obj)).toEqual(ours.get(objectId(obj)));
  });
});
