// kustomize's configMapGenerator, as far as infra/ uses it: `envs` files and
// `literals`, `options.labels`, the name suffixed with kustomize's hash of the
// data (a changed setting is a new name, so the pod rolls), and the pod
// templates' references to the generated name following it. The result is
// compared with `kubectl kustomize` wherever kubectl is installed
// (server-manifests.test.ts), so a drift from kustomize shows there.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { isJsonObject, type JsonObject, type KubeObject } from "./infra-rbac.ts";

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** An env file's pairs as kustomize reads them: blank lines and `#` lines skipped, split at the first `=`, values kept as written. */
function envFilePairs(text: string, where: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [i, raw] of text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .entries()) {
    const line = raw.trimStart();
    if (line === "" || line.startsWith("#")) continue;
    const at = line.indexOf("=");
    const key = at < 0 ? line : line.slice(0, at);
    if (!ENV_NAME.test(key)) throw new Error(`${where}:${i + 1}: ${JSON.stringify(key)} is not a valid environment variable name`);
    if (at < 0) throw new Error(`${where}:${i + 1}: ${key} has no "=" (kustomize would read it from its own environment)`);
    pairs.push([key, line.slice(at + 1)]);
  }
  return pairs;
}

/** Go's json.Marshal of a string map: keys sorted, <, > and & escaped as kustomize's hasher sees them. */
function goJson(value: unknown): string {
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${goJson(k)}:${goJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * kustomize's name suffix for a generated ConfigMap: the SHA-256 of {data, kind, name}, its first ten hex
 * digits with 0, 1, 3, a, e swapped for g, h, k, m, t. kubectl's kustomize hashes before it names the
 * object, so `name` is "" there (checked against kubectl 1.32: server-manifests.test.ts).
 */
export function configMapHash(data: Record<string, string>): string {
  const hex = createHash("sha256")
    .update(goJson({ data, kind: "ConfigMap", name: "" }))
    .digest("hex");
  const swap: Record<string, string> = { "0": "g", "1": "h", "3": "k", a: "m", e: "t" };
  return [...hex.slice(0, 10)].map((c) => swap[c] ?? c).join("");
}

interface Generated {
  object: KubeObject;
  /** The name the kustomization's objects refer to. */
  name: string;
}

/** The ConfigMaps a kustomization's `configMapGenerator` makes (before its namespace is set). */
export function generateConfigMaps(dir: string, generators: unknown, file: string): Generated[] {
  if (!Array.isArray(generators)) throw new Error(`${file}: configMapGenerator must be a list`);
  return generators.map((g, i) => {
    const where = `${file}: configMapGenerator[${i}]`;
    if (!isJsonObject(g) || typeof g["name"] !== "string") throw new Error(`${where} needs a name`);
    for (const key of Object.keys(g))
      if (!["name", "envs", "literals", "options"].includes(key)) throw new Error(`${where}: field "${key}" is not understood; extend config-map-generator.ts`);
    const data: Record<string, string> = {};
    for (const env of (g["envs"] as string[] | undefined) ?? []) {
      const path = resolve(dir, env);
      for (const [k, v] of envFilePairs(readFileSync(path, "utf8"), path)) data[k] = v;
    }
    for (const literal of (g["literals"] as string[] | undefined) ?? []) {
      for (const [k, v] of envFilePairs(literal, `${where} literal`)) data[k] = v;
    }
    const options = isJsonObject(g["options"]) ? g["options"] : {};
    const metadata: KubeObject["metadata"] = { name: g["name"] };
    if (isJsonObject(options["labels"])) metadata["labels"] = options["labels"];
    const name = options["disableNameSuffixHash"] === true ? g["name"] : `${g["name"]}-${configMapHash(data)}`;
    return { object: { apiVersion: "v1", kind: "ConfigMap", metadata: { ...metadata, name }, data }, name: g["name"] };
  });
}

/** Points the pod templates' references to each generated ConfigMap at its suffixed name. */
export function followGeneratedNames(objects: KubeObject[], generated: Generated[]): KubeObject[] {
  const renamed = new Map(generated.map((g) => [g.name, g.object.metadata.name]));
  const rename = (ref: unknown) => {
    if (isJsonObject(ref) && typeof ref["name"] === "string") ref["name"] = renamed.get(ref["name"]) ?? ref["name"];
  };
  return objects.map((obj) => {
    const spec = (obj as JsonObject & { spec?: { template?: { spec?: PodSpec } } }).spec?.template?.spec;
    if (spec === undefined) return obj;
    const copy = structuredClone(obj) as KubeObject & { spec: { template: { spec: PodSpec } } };
    const pod = copy.spec.template.spec;
    for (const c of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
      for (const from of c.envFrom ?? []) rename(from.configMapRef);
      for (const e of c.env ?? []) rename(e.valueFrom?.configMapKeyRef);
    }
    for (const v of pod.volumes ?? []) {
      rename(v.configMap);
      for (const s of v.projected?.sources ?? []) rename(s.configMap);
    }
    return copy;
  });
}

interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  volumes?: Array<{ configMap?: unknown; projected?: { sources?: Array<{ configMap?: unknown }> } }>;
}
interface Container {
  envFrom?: Array<{ configMapRef?: unknown }>;
  env?: Array<{ valueFrom?: { configMapKeyRef?: unknown } }>;
}
