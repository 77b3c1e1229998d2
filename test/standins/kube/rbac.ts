// Request attributes (apiserver's RequestInfoFactory) and the RBAC rule
// matching of rbac/v1, so a token's Role decides exactly what it may do.
import { forbidden, forbiddenReason, type KubeError } from "./status.ts";
import type { PolicyRule, RbacBinding } from "./types.ts";

export interface RequestInfo {
  resourceRequest: boolean;
  path: string;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

export function requestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const verbOf: Record<string, string> = { POST: "create", PUT: "update", PATCH: "patch", GET: "get", HEAD: "get", DELETE: "delete" };
  const base: RequestInfo = {
    resourceRequest: false,
    path,
    verb: (method || "GET").toLowerCase(),
    apiGroup: "",
    apiVersion: "",
    namespace: "",
    resource: "",
    subresource: "",
    name: "",
  };
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map((p) => decodeURIComponent(p));
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 3) {
    base.apiVersion = parts[1] ?? "";
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 4) {
    base.apiGroup = parts[1] ?? "";
    base.apiVersion = parts[2] ?? "";
    rest = parts.slice(3);
  } else {
    return base;
  }
  const info: RequestInfo = { ...base, resourceRequest: true, verb: verbOf[method] ?? method.toLowerCase() };
  if (rest[0] === "namespaces" && rest.length >= 3) {
    info.namespace = rest[1] ?? "";
    rest = rest.slice(2);
  } else if (rest[0] === "namespaces" && rest.length === 2) {
    info.namespace = rest[1] ?? "";
  }
  info.resource = rest[0] ?? "";
  info.name = rest[1] ?? "";
  info.subresource = rest[2] ?? "";
  if (info.name === "") {
    if (info.verb === "get") info.verb = ["true", "1"].includes(query.get("watch") ?? "") ? "watch" : "list";
    if (info.verb === "delete") info.verb = "deletecollection";
  }
  return info;
}

function ruleAllows(rule: PolicyRule, info: RequestInfo): boolean {
  const has = (list: string[] | undefined, v: string): boolean => (list ?? []).some((x) => x === "*" || x === v);
  if (!has(rule.verbs, info.verb)) return false;
  if (!has(rule.apiGroups, info.apiGroup)) return false;
  const combined = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  const resourceOk = (rule.resources ?? []).some((r) => r === "*" || r === combined || (info.subresource !== "" && r === `*/${info.subresource}`));
  if (!resourceOk) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (info.name !== "" && names.includes(info.name));
}

export function isAllowed(bindings: RbacBinding[], info: RequestInfo): boolean {
  return bindings.some((b) => {
    // A RoleBinding grants its rules only inside its namespace, never cluster-wide.
    if ("namespace" in b && (info.namespace === "" || b.namespace !== info.namespace)) return false;
    return b.rules.some((r) => ruleAllows(r, info));
  });
}

export function denied(user: string, info: RequestInfo): KubeError {
  if (!info.resourceRequest) return forbidden(null, "", `User "${user}" cannot ${info.verb} path "${info.path}"`);
  const gr = { group: info.apiGroup, resource: info.resource };
  return forbidden(gr, info.name, forbiddenReason(user, info.verb, gr, info.namespace, info.subresource));
}

/** Reject rules that would not survive `kubectl apply` of a Role, so tests state real RBAC. */
export function checkBinding(b: unknown): string | undefined {
  if (typeof b !== "object" || b === null) return "each binding must be an object";
  const rec = b as Record<string, unknown>;
  const hasNs = typeof rec["namespace"] === "string" && rec["namespace"] !== "";
  if (hasNs === (rec["clusterWide"] === true)) return "each binding needs either a namespace or clusterWide: true";
  if (!Array.isArray(rec["rules"])) return "binding.rules must be an array";
  for (const r of rec["rules"] as unknown[]) {
    if (typeof r !== "object" || r === null) return "each rule must be an object";
    const rule = r as Record<string, unknown>;
    for (const k of Object.keys(rule)) {
      if (!["apiGroups", "resources", "verbs", "resourceNames"].includes(k)) return `unknown PolicyRule field ${JSON.stringify(k)}`;
    }
    for (const k of ["apiGroups", "resources", "verbs"]) {
      const v = rule[k];
      if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) return `rule.${k} must be an array of strings`;
    }
    const names = rule["resourceNames"];
    if (names !== undefined && (!Array.isArray(names) || !names.every((x) => typeof x === "string"))) {
      return "rule.resourceNames must be an array of strings";
    }
  }
  return undefined;
}
