// infra/agent: the agent's kustomize manifests, validated against the Kubernetes
// schemas in kubernetes-models and checked for least privilege, restricted Pod
// Security, an egress-only NetworkPolicy, and agreement with the agent's own
// settings (src/agent/settings.ts) and the Dockerfile.
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readSettings, TOKEN_PLACEHOLDER_PREFIX } from "../../../src/agent/settings.ts";
import { isJsonObject, isKustomizationFile, listYamlFiles, objectId, readYamlDocuments, renderKustomization, type KubeObject } from "../infra/infra-rbac.ts";
import { AGENT_RUNNER_NAMESPACE_DIR, INFRA_AGENT_DIR, loadAgentIdentityRbac, loadAgentRbac } from "./agent-rbac.ts";
import { validateKubeObject as validate } from "../infra/kube-validate.ts";
import { hasKubectl, kustomize } from "../infra/kubectl.ts";

const ROOT = resolve(INFRA_AGENT_DIR, "../..");
function find(objects: KubeObject[], kind: string, namespace: string | undefined, name: string): KubeObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.namespace === namespace && x.metadata.name === name);
  if (o === undefined) throw new Error(`${kind} ${namespace ?? "-"}/${name} not found`);
  return o;
}

/** A typed path into a plain object, failing the test if a step is missing. */
function at(value: unknown, ...path: Array<string | number>): unknown {
  let v = value;
  for (const p of path) {
    if (typeof p === "number") v = Array.isArray(v) ? v[p] : undefined;
    else v = isJsonObject(v) ? v[p] : undefined;
    if (v === undefined) throw new Error(`missing ${path.join(".")}`);
  }
  return v;
}

const rendered = renderKustomization(INFRA_AGENT_DIR);
const deployment = find(rendered, "Deployment", "arc-reaper-agent", "arc-reaper-agent");
const podSpec = at(deployment, "spec", "template", "spec");
const container = at(podSpec, "containers", 0);

function envValue(name: string): unknown {
  const env = at(container, "env");
  if (!Array.isArray(env)) throw new Error("env is not a list");
  return env.find((e) => isJsonObject(e) && e["name"] === name);
}

describe("infra/agent", () => {
  it("every manifest file holds valid Kubernetes objects and is reached from the top kustomization", () => {
    const files = listYamlFiles(INFRA_AGENT_DIR).filter((f) => !isKustomizationFile(f));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      for (const doc of readYamlDocuments(f)) {
        if (!isJsonObject(doc)) throw new Error(`${relative(ROOT, f)}: not a mapping`);
        validate(doc as KubeObject);
      }
    }
    const reached = new Set<string>();
    const walk = (dir: string): void => {
      const k = readYamlDocuments(join(dir, "kustomization.yaml"))[0];
      if (!isJsonObject(k) || !Array.isArray(k["resources"])) return;
      for (const entry of k["resources"]) {
        const p = resolve(dir, String(entry));
        if (/\.ya?ml$/.test(p)) reached.add(p);
        else walk(p);
      }
    };
    walk(INFRA_AGENT_DIR);
    walk(join(INFRA_AGENT_DIR, "finish-stuck")); // the optional overlay (REAPER_FINISH_STUCK), applied on its own
    expect([...reached].sort()).toEqual(files);
  });

  it("the optional finish-stuck overlay renders a Role granting only patch on ephemeralrunners, bound to the agent, in arc-runners", () => {
    const objects = renderKustomization(join(INFRA_AGENT_DIR, "finish-stuck"));
    expect(objects.map(objectId).sort()).toEqual([
      "rbac.authorization.k8s.io/Role/arc-runners/arc-reaper-agent-finish",
      "rbac.authorization.k8s.io/RoleBinding/arc-runners/arc-reaper-agent-finish",
    ]);
    const role = objects.find((o) => o.kind === "Role") as unknown as { rules: unknown };
    expect(role.rules).toEqual([{ apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["patch"] }]);
    const binding = objects.find((o) => o.kind === "RoleBinding") as unknown as { subjects: unknown };
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "arc-reaper-agent", namespace: "arc-reaper-agent" }]);
  });

  it("renders exactly the agent's objects, plus a Role and RoleBinding in arc-runners", () => {
    expect(rendered.map(objectId).sort()).toEqual(
      [
        "core/Namespace/-/arc-reaper-agent",
        "core/ServiceAccount/arc-reaper-agent/arc-reaper-agent",
        "apps/Deployment/arc-reaper-agent/arc-reaper-agent",
        "networking.k8s.io/NetworkPolicy/arc-reaper-agent/arc-reaper-agent",
        "rbac.authorization.k8s.io/Role/arc-runners/arc-reaper-agent",
        "rbac.authorization.k8s.io/RoleBinding/arc-runners/arc-reaper-agent",
        "rbac.authorization.k8s.io/Role/kube-system/arc-reaper-agent-cluster-identity",
        "rbac.authorization.k8s.io/RoleBinding/kube-system/arc-reaper-agent-cluster-identity",
      ].sort(),
    );
    for (const o of rendered) validate(o);
  });

  it("in kube-system, get on that one namespace object (its uid: the cluster's identity in hello), nothing else", () => {
    const role = find(rendered, "Role", "kube-system", "arc-reaper-agent-cluster-identity");
    expect(role["rules"]).toEqual([{ apiGroups: [""], resources: ["namespaces"], resourceNames: ["kube-system"], verbs: ["get"] }]);
    const binding = find(rendered, "RoleBinding", "kube-system", "arc-reaper-agent-cluster-identity");
    expect(binding["subjects"]).toEqual([{ kind: "ServiceAccount", name: "arc-reaper-agent", namespace: "arc-reaper-agent" }]);
    expect(loadAgentIdentityRbac()).toEqual([
      { namespace: "kube-system", rules: [{ apiGroups: [""], resources: ["namespaces"], resourceNames: ["kube-system"], verbs: ["get"] }] },
    ]);
  });

  it("the Role grants exactly get, list, watch and delete on ephemeralrunners.actions.github.com", () => {
    const role = find(rendered, "Role", "arc-runners", "arc-reaper-agent");
    expect(role["rules"]).toEqual([{ apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["get", "list", "watch", "delete"] }]);
    expect(JSON.stringify(role["rules"])).not.toContain("*");
    expect(rendered.filter((o) => o.kind.startsWith("Cluster"))).toEqual([]);
    const binding = find(rendered, "RoleBinding", "arc-runners", "arc-reaper-agent");
    expect(binding["roleRef"]).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "arc-reaper-agent" });
    expect(binding["subjects"]).toEqual([{ kind: "ServiceAccount", name: "arc-reaper-agent", namespace: "arc-reaper-agent" }]);
  });

  it("a RoleBinding per runner namespace: the base takes its namespace from an overlay", () => {
    const objects = renderKustomization(AGENT_RUNNER_NAMESPACE_DIR, { namespace: "team-b-runners" });
    expect(objects.map(objectId).sort()).toEqual([
      "rbac.authorization.k8s.io/Role/team-b-runners/arc-reaper-agent",
      "rbac.authorization.k8s.io/RoleBinding/team-b-runners/arc-reaper-agent",
    ]);
    expect(loadAgentRbac("arc-runners", "team-b-runners").bindings.map((b) => b.namespace)).toEqual(["arc-runners", "team-b-runners"]);
    // Every overlay listed at the top is a runner namespace the agent watches.
    const overlays = rendered.filter((o) => o.kind === "RoleBinding" && o.metadata.namespace !== "kube-system").map((o) => o.metadata.namespace);
    expect(
      String((envValue("REAPER_NAMESPACES") as { value: string }).value)
        .split(",")
        .sort(),
    ).toEqual(overlays.sort());
  });

  it("the Deployment runs one agent under restricted Pod Security, with requests and limits", () => {
    expect(at(deployment, "spec", "replicas")).toBe(1);
    expect(at(deployment, "spec", "strategy", "type")).toBe("Recreate");
    expect(at(podSpec, "serviceAccountName")).toBe("arc-reaper-agent");
    expect(at(podSpec, "securityContext")).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(Number(at(podSpec, "securityContext", "runAsUser"))).toBeGreaterThan(0);
    expect(at(container, "securityContext")).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    for (const kind of ["requests", "limits"]) {
      expect(at(container, "resources", kind, "cpu")).toEqual(expect.any(String));
      expect(at(container, "resources", kind, "memory")).toEqual(expect.any(String));
    }
    // Restricted also forbids host namespaces, host paths and privileged containers.
    for (const f of ["hostNetwork", "hostPID", "hostIPC"]) expect(isJsonObject(podSpec) ? podSpec[f] : undefined).toBeUndefined();
    for (const v of (at(podSpec, "volumes") as unknown[]) ?? []) expect(isJsonObject(v) && "hostPath" in v).toBe(false);
    expect(at(find(rendered, "Namespace", undefined, "arc-reaper-agent"), "metadata", "labels", "pod-security.kubernetes.io/enforce")).toBe("restricted");
  });

  it("the Deployment's user is the Dockerfile's, and it starts the image's entrypoint", () => {
    const user = /^USER\s+(\d+):(\d+)\s*$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
    expect(user).not.toBeNull();
    expect(at(podSpec, "securityContext", "runAsUser")).toBe(Number(user?.[1]));
    expect(at(podSpec, "securityContext", "runAsGroup")).toBe(Number(user?.[2]));
    expect(isJsonObject(container) ? container["command"] : "x").toBeUndefined();
  });

  it("the Deployment's settings are ones the agent accepts, with the token Secret the README says to create", () => {
    const ref = at(envValue("AGENT_TOKEN"), "valueFrom", "secretKeyRef");
    expect(ref).toEqual({ name: "arc-reaper-agent-token", key: "AGENT_TOKEN" });
    // `kubectl apply -k` renders no Secret, so it can never put a placeholder over the real token.
    expect(rendered.filter((o) => o.kind === "Secret")).toEqual([]);
    const readme = readFileSync(join(INFRA_AGENT_DIR, "README.md"), "utf8");
    expect(readme).toMatch(/kubectl -n arc-reaper-agent create secret generic arc-reaper-agent-token\s*\\\s*\n\s*--from-file=AGENT_TOKEN=/);
    const env = {
      ARC_REAPER_URL: String(at(envValue("ARC_REAPER_URL"), "value")),
      AGENT_CLUSTER: String(at(envValue("AGENT_CLUSTER"), "value")),
      REAPER_NAMESPACES: String(at(envValue("REAPER_NAMESPACES"), "value")),
      AGENT_DRY_RUN: String(at(envValue("AGENT_DRY_RUN"), "value")),
      AGENT_HEALTH_PORT: String(at(envValue("AGENT_HEALTH_PORT"), "value")),
    };
    // A token file written with echo ends in a newline: the agent drops it, as the Worker does.
    expect(readSettings({ ...env, AGENT_TOKEN: `${"x".repeat(64)}\n` })).toMatchObject({ ok: true, settings: { token: "x".repeat(64), cluster: "default" } });
    expect(readSettings({ ...env, AGENT_TOKEN: `${TOKEN_PLACEHOLDER_PREFIX}_x${"x".repeat(40)}` })).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/placeholder/)],
    });
  });

  it("probes: live on /livez, ready on /readyz (connected with the whole view sent), on the port the agent listens on", () => {
    const port = at(container, "ports", 0);
    expect(port).toEqual({ name: "probes", containerPort: Number(at(envValue("AGENT_HEALTH_PORT"), "value")), protocol: "TCP" });
    expect(at(container, "livenessProbe", "httpGet")).toEqual({ path: "/livez", port: "probes" });
    expect(at(container, "readinessProbe", "httpGet")).toEqual({ path: "/readyz", port: "probes" });
  });

  it("mounts the ServiceAccount token only into the agent's pod", () => {
    expect(at(find(rendered, "ServiceAccount", "arc-reaper-agent", "arc-reaper-agent"), "automountServiceAccountToken")).toBe(false);
    expect(at(podSpec, "automountServiceAccountToken")).toBe(true);
  });

  it("the NetworkPolicy allows no ingress and egress only to DNS, the API server and HTTPS", () => {
    const np = find(rendered, "NetworkPolicy", "arc-reaper-agent", "arc-reaper-agent");
    expect(at(np, "spec", "podSelector", "matchLabels")).toEqual(at(deployment, "spec", "template", "metadata", "labels"));
    expect(at(np, "spec", "policyTypes")).toEqual(["Ingress", "Egress"]);
    expect(at(np, "spec", "ingress")).toEqual([]);
    const egress = at(np, "spec", "egress") as Array<{ to: unknown[]; ports: Array<{ protocol: string; port: number }> }>;
    const ports = egress.map((r) =>
      r.ports
        .map((p) => `${p.protocol}/${p.port}`)
        .sort()
        .join(","),
    );
    expect(ports).toEqual(["TCP/53,UDP/53", "TCP/6443", "TCP/443"]);
    // The API server (6443 or 443) and the Worker are reached over IPv4 and IPv6 alike.
    for (const rule of egress.slice(1)) expect(rule.to).toEqual([{ ipBlock: { cidr: "0.0.0.0/0" } }, { ipBlock: { cidr: "::/0" } }]);
    // DNS goes to the cluster's DNS pods only.
    expect(egress[0]?.to).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } },
    ]);
    for (const rule of egress) expect(rule.ports.length).toBeGreaterThan(0);
  });

  it.skipIf(!hasKubectl)("renders the same as `kubectl kustomize`", () => {
    const theirs = kustomize(INFRA_AGENT_DIR);
    expect(theirs.map(objectId).sort()).toEqual(rendered.map(objectId).sort());
    // The same objects with the same content, not only the same names.
    const ours = new Map(rendered.map((o) => [objectId(o), o]));
    for (const obj of theirs) expect(obj, objectId(obj)).toEqual(ours.get(objectId(obj)));
  });
});
