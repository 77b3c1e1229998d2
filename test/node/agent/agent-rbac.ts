// The agent's RBAC as infra/agent's manifests grant it, rendered like
// `kubectl kustomize` (with infra-rbac.ts's small kustomize), in the shape the
// stand-in Kubernetes API enforces (a RoleBinding per runner namespace).
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { RbacBinding } from "../../standins/kube/types.ts";
import { boundRules, isJsonObject, renderKustomization, type KubeObject } from "../infra/infra-rbac.ts";

export const INFRA_AGENT_DIR: string = resolve(dirname(fileURLToPath(import.meta.url)), "../../../infra/agent");
const AGENT_BASE_DIR: string = join(INFRA_AGENT_DIR, "base");
export const AGENT_RUNNER_NAMESPACE_DIR: string = join(INFRA_AGENT_DIR, "runner-namespace");

export interface AgentRbac {
  serviceAccount: { name: string; namespace: string };
  bindings: Array<Extract<RbacBinding, { namespace: string }>>;
}

function rulesOf(role: KubeObject): Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> {
  const rules = role["rules"];
  if (!Array.isArray(rules)) throw new Error(`Role ${role.metadata.name}: rules must be a list`);
  return rules.map((r) => {
    if (!isJsonObject(r)) throw new Error(`Role ${role.metadata.name}: a rule is not a mapping`);
    const { apiGroups, resources, verbs } = r;
    const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
    if (!strings(apiGroups) || !strings(resources) || !strings(verbs)) throw new Error(`Role ${role.metadata.name}: bad rule`);
    return { apiGroups, resources, verbs };
  });
}

/** The agent's ServiceAccount and, per runner namespace, the rules of the Role bound to it there. */
export function loadAgentRbac(...namespaces: string[]): AgentRbac {
  return loadAgentRbacFrom(AGENT_RUNNER_NAMESPACE_DIR, namespaces);
}

/** The agent's binding in kube-system (infra/agent/cluster-identity): get on that namespace object, its cluster's identity. */
export function loadAgentIdentityRbac(): AgentRbac["bindings"] {
  const account = renderKustomization(AGENT_BASE_DIR).find((o) => o.kind === "ServiceAccount");
  if (account?.metadata.namespace === undefined) throw new Error(`${AGENT_BASE_DIR}: expected a namespaced ServiceAccount`);
  return boundRules(renderKustomization(join(INFRA_AGENT_DIR, "cluster-identity")), { name: account.metadata.name, namespace: account.metadata.namespace });
}

/** The bindings of the optional overlay infra/agent/finish-stuck (patch), per runner namespace. */
export function loadAgentFinishRbac(...namespaces: string[]): AgentRbac {
  return loadAgentRbacFrom(join(INFRA_AGENT_DIR, "finish-stuck"), namespaces);
}

function loadAgentRbacFrom(dir: string, namespaces: string[]): AgentRbac {
  const accounts = renderKustomization(AGENT_BASE_DIR).filter((o) => o.kind === "ServiceAccount");
  const account = accounts[0];
  if (accounts.length !== 1 || account === undefined || account.metadata.namespace === undefined) {
    throw new Error(`${AGENT_BASE_DIR}: expected exactly one namespaced ServiceAccount`);
  }
  const serviceAccount = { name: account.metadata.name, namespace: account.metadata.namespace };
  const bindings: AgentRbac["bindings"] = [];
  for (const ns of namespaces) {
    const objects = renderKustomization(dir, { namespace: ns });
    for (const binding of objects.filter((o) => o.kind === "RoleBinding")) {
      const subjects = binding["subjects"];
      const bindsAgent =
        Array.isArray(subjects) &&
        subjects.some(
          (s) => isJsonObject(s) && s["kind"] === "ServiceAccount" && s["name"] === serviceAccount.name && s["namespace"] === serviceAccount.namespace,
        );
      if (!bindsAgent) continue;
      const roleRef = binding["roleRef"];
      if (!isJsonObject(roleRef) || roleRef["kind"] !== "Role") throw new Error(`RoleBinding ${ns}/${binding.metadata.name}: roleRef must name a Role`);
      const role = objects.find((o) => o.kind === "Role" && o.metadata.name === roleRef["name"]);
      if (role === undefined) throw new Error(`RoleBinding ${ns}/${binding.metadata.name}: Role ${String(roleRef["name"])} is not in the manifests`);
      bindings.push({ namespace: ns, rules: rulesOf(role) });
    }
  }
  return { serviceAccount, bindings };
}
