// Reads arc-reaper's Kubernetes manifests (infra/kubernetes) the way
// `kubectl apply -k` would, with a small kustomize of our own: nested
// `resources` (files and directories), the `namespace` override and
// `configMapGenerator` (config-map-generator.ts), which is all the layout uses. Any other kustomization field is refused, so the layout
// cannot outgrow this reader unnoticed (infra-manifests.test.ts also compares
// the result with `kubectl kustomize` wherever kubectl is installed).
//
// loadReaperRbac() turns the manifests into what the stand-in Kubernetes API
// needs to enforce exactly the Role a real cluster would.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { DNS_LABEL } from "../../../src/model/shapes.ts";
import { followGeneratedNames, generateConfigMaps } from "./config-map-generator.ts";

export const INFRA_KUBERNETES_DIR: string = resolve(dirname(fileURLToPath(import.meta.url)), "../../../infra/kubernetes");

/** The kustomize base holding the ServiceAccount and its token Secret. */
const REAPER_BASE_DIR: string = join(INFRA_KUBERNETES_DIR, "reaper");
/** The kustomize base holding the Role and RoleBinding for one runner namespace. */
export const RUNNER_NAMESPACE_BASE_DIR: string = join(INFRA_KUBERNETES_DIR, "runner-namespace");

/** The kustomize base granting get on the kube-system namespace object (the cluster's identity). */
const CLUSTER_IDENTITY_DIR: string = join(INFRA_KUBERNETES_DIR, "cluster-identity");

export type JsonObject = { [key: string]: unknown };

export interface KubeObject extends JsonObject {
  apiVersion: string;
  kind: string;
  metadata: JsonObject & { name: string; namespace?: string };
}

interface RbacRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface ReaperRbac {
  serviceAccount: { name: string; namespace: string };
  bindings: Array<{ namespace: string; rules: RbacRule[] }>;
}

export interface RbacRequest {
  namespace: string;
  apiGroup: string;
  resource: string;
  verb: string;
  name?: string;
}

const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const SUPPORTED_KUSTOMIZATION_FIELDS = new Set(["apiVersion", "kind", "namespace", "resources", "configMapGenerator"]);
// Kinds this layout could plausibly contain that have no namespace.
const CLUSTER_SCOPED_KINDS = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PriorityClass", "StorageClass"]);

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}

function asKubeObject(value: unknown, where: string): KubeObject {
  if (!isJsonObject(value)) throw new Error(`${where}: a YAML document is not a mapping`);
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== "string" || typeof kind !== "string") {
    throw new Error(`${where}: an object lacks apiVersion or kind`);
  }
  if (!isJsonObject(metadata) || typeof metadata["name"] !== "string") {
    throw new Error(`${where}: ${kind} lacks metadata.name`);
  }
  if (metadata["namespace"] !== undefined && typeof metadata["namespace"] !== "string") {
    throw new Error(`${where}: ${kind} ${metadata["name"]} has a non-string metadata.namespace`);
  }
  return value as KubeObject;
}

/** Every document of a (multi-document) YAML file, as plain JSON values; empty documents are skipped. */
export function readYamlDocuments(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  const out: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/** Every .yaml/.yml file below a directory, sorted. */
export function listYamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listYamlFiles(path));
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

export function isKustomizationFile(path: string): boolean {
  return KUSTOMIZATION_FILES.some((name) => path.endsWith(`/${name}`));
}

function findKustomizationFile(dir: string): string {
  for (const name of KUSTOMIZATION_FILES) {
    const path = join(dir, name);
    try {
      if (statSync(path).isFile()) return path;
    } catch {
      // try the next name
    }
  }
  throw new Error(`${dir}: no kustomization.yaml`);
}

export function objectId(obj: KubeObject): string {
  const group = obj.apiVersion.includes("/") ? obj.apiVersion.split("/")[0] : "core";
  return `${group}/${obj.kind}/${obj.metadata.namespace ?? "-"}/${obj.metadata.name}`;
}

// kustomize's namespace transformer, as far as this layout needs it.
function setNamespace(obj: KubeObject, namespace: string): KubeObject {
  const copy = structuredClone(obj);
  if (copy.kind === "Namespace") {
    copy.metadata.name = namespace;
    return copy;
  }
  if (!CLUSTER_SCOPED_KINDS.has(copy.kind)) copy.metadata.namespace = namespace;
  if (copy.kind === "RoleBinding" || copy.kind === "ClusterRoleBinding") {
    // kustomize v5 (setRoleBindingSubjects: defaultOnly) moves only the
    // ServiceAccount named "default"; an explicit subject namespace stays.
    const subjects = copy["subjects"];
    if (Array.isArray(subjects)) {
      for (const subject of subjects) {
        if (isJsonObject(subject) && subject["kind"] === "ServiceAccount" && subject["name"] === "default") {
          subject["namespace"] = namespace;
        }
      }
    }
  }
  return copy;
}

/**
 * Render a kustomization directory like `kubectl kustomize DIR`. With
 * `namespace`, the result is what an overlay holding only `namespace:` and
 * `resources: [DIR]` renders to.
 */
export function renderKustomization(dir: string, options: { namespace?: string } = {}): KubeObject[] {
  const file = findKustomizationFile(dir);
  const docs = readYamlDocuments(file);
  const k = docs[0];
  if (docs.length !== 1 || !isJsonObject(k)) throw new Error(`${file}: expected one mapping`);
  for (const key of Object.keys(k)) {
    if (!SUPPORTED_KUSTOMIZATION_FIELDS.has(key)) {
      throw new Error(`${file}: field "${key}" is not understood by test/node/infra/infra-rbac.ts; extend renderKustomization`);
    }
  }
  if (k["kind"] !== "Kustomization") throw new Error(`${file}: kind must be Kustomization`);
  const resources = k["resources"] ?? [];
  if (!isStringArray(resources)) throw new Error(`${file}: resources must be a list of paths`);
  const ownNamespace = k["namespace"];
  if (ownNamespace !== undefined && typeof ownNamespace !== "string") throw new Error(`${file}: namespace must be a string`);

  let objects: KubeObject[] = [];
  for (const entry of resources) {
    if (/^[a-z]+:\/\//i.test(entry) || entry.includes("?ref=")) {
      throw new Error(`${file}: remote resource ${entry}: the manifests must build offline`);
    }
    const path = resolve(dir, entry);
    if (statSync(path).isDirectory()) objects.push(...renderKustomization(path));
    else objects.push(...readYamlDocuments(path).map((doc) => asKubeObject(doc, path)));
  }
  if (k["configMapGenerator"] !== undefined) {
    const generated = generateConfigMaps(dir, k["configMapGenerator"], file);
    objects = [...followGeneratedNames(objects, generated), ...generated.map((g) => g.object)];
  }
  for (const namespace of [ownNamespace, options.namespace]) {
    if (namespace !== undefined) objects = objects.map((obj) => setNamespace(obj, namespace));
  }
  const seen = new Set<string>();
  for (const obj of objects) {
    const id = objectId(obj);
    if (seen.has(id)) throw new Error(`${file}: ${id} appears twice`);
    seen.add(id);
  }
  return objects;
}

function asRule(value: unknown, where: string): RbacRule {
  if (!isJsonObject(value)) throw new Error(`${where}: a rule is not a mapping`);
  const { apiGroups, resources, verbs, resourceNames, nonResourceURLs } = value;
  if (nonResourceURLs !== undefined) throw new Error(`${where}: nonResourceURLs cannot appear in a Role`);
  if (!isStringArray(apiGroups) || !isStringArray(resources) || !isStringArray(verbs)) {
    throw new Error(`${where}: a rule needs apiGroups, resources and verbs as lists of strings`);
  }
  const rule: RbacRule = { apiGroups: [...apiGroups], resources: [...resources], verbs: [...verbs] };
  if (resourceNames !== undefined) {
    if (!isStringArray(resourceNames)) throw new Error(`${where}: resourceNames must be a list of strings`);
    rule.resourceNames = [...resourceNames];
  }
  return rule;
}

/**
 * The RBAC that arc-reaper's manifests give its ServiceAccount when applied for
 * the given runner namespace(s): one entry in `bindings` per RoleBinding to the
 * ServiceAccount, with the rules of the Role it references.
 */
export function loadReaperRbac(namespace: string, ...moreNamespaces: string[]): ReaperRbac {
  const namespaces = [namespace, ...moreNamespaces];
  for (const ns of namespaces) {
    if (!DNS_LABEL.test(ns)) throw new Error(`loadReaperRbac: "${ns}" is not a valid namespace name`);
  }
  const accounts = renderKustomization(REAPER_BASE_DIR).filter((o) => o.kind === "ServiceAccount");
  const account = accounts[0];
  if (accounts.length !== 1 || account === undefined || account.metadata.namespace === undefined) {
    throw new Error(`${REAPER_BASE_DIR}: expected exactly one namespaced ServiceAccount`);
  }
  const serviceAccount = { name: account.metadata.name, namespace: account.metadata.namespace };

  const bindings: ReaperRbac["bindings"] = [];
  for (const ns of namespaces) bindings.push(...boundRules(renderKustomization(RUNNER_NAMESPACE_BASE_DIR, { namespace: ns }), serviceAccount));
  // The kube-system namespace object (get, that name): the cluster's identity (cluster-identity/).
  bindings.push(...boundRules(renderKustomization(CLUSTER_IDENTITY_DIR), serviceAccount));
  return { serviceAccount, bindings };
}

function matches(allowed: string[], wanted: string): boolean {
  return allowed.includes("*") || allowed.includes(wanted);
}

/**
 * Whether the RBAC allows one request, by Kubernetes' rules: a binding in the
 * request's namespace has a rule matching its API group, resource (a
 * subresource such as "ephemeralrunners/status" is a resource of its own) and
 * verb, and, where the rule lists resourceNames, the object's name.
 */
export function rbacAllows(rbac: ReaperRbac, request: RbacRequest): boolean {
  return rbac.bindings.some(
    (binding) =>
      binding.namespace === request.namespace &&
      binding.rules.some(
        (rule) =>
          matches(rule.apiGroups, request.apiGroup) &&
          matches(rule.resources, request.resource) &&
          matches(rule.verbs, request.verb) &&
          (rule.resourceNames === undefined || rule.resourceNames.length === 0 || (request.name !== undefined && rule.resourceNames.includes(request.name))),
      ),
  );
}

/** The rules each RoleBinding of `objects` grants `account` in its namespace, with the Role it references. */
export function boundRules(objects: KubeObject[], account: { name: string; namespace: string }): ReaperRbac["bindings"] {
  const bindings: ReaperRbac["bindings"] = [];
  for (const binding of objects.filter((o) => o.kind === "RoleBinding")) {
    const ns = binding.metadata.namespace ?? "";
    const where = `RoleBinding ${ns}/${binding.metadata.name}`;
    const subjects = binding["subjects"];
    const binds =
      Array.isArray(subjects) &&
      subjects.some((s) => isJsonObject(s) && s["kind"] === "ServiceAccount" && s["name"] === account.name && s["namespace"] === account.namespace);
    if (!binds) continue;
    const roleRef = binding["roleRef"];
    if (!isJsonObject(roleRef) || roleRef["kind"] !== "Role" || typeof roleRef["name"] !== "string") {
      throw new Error(`${where}: roleRef must name a Role in the same namespace`);
    }
    const role = objects.find((o) => o.kind === "Role" && o.metadata.name === roleRef["name"] && o.metadata.namespace === ns);
    if (role === undefined) throw new Error(`${where}: Role ${String(roleRef["name"])} is not in the manifests`);
    const rules = role["rules"] ?? [];
    if (!Array.isArray(rules)) throw new Error(`Role ${ns}/${role.metadata.name}: rules must be a list`);
    bindings.push({ namespace: ns, rules: rules.map((r) => asRule(r, `Role ${ns}/${role.metadata.name}`)) });
  }
  return bindings;
}
