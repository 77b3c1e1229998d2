// Structural-schema validation of EphemeralRunners against ARC's own CRD
// (test/fixtures/arc, one per ARC version), so an object a test seeds is one a
// real cluster running that version would accept.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { ARC_VERSION_FIXTURES, DEFAULT_ARC_VERSION, type ArcVersion } from "./arc-versions.ts";
import type { FieldError } from "./status.ts";

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: boolean | Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  pattern?: string;
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-embedded-resource"?: boolean;
}

const fixtures = new URL("../../fixtures/arc/", import.meta.url);

export interface Crd {
  spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
}

const crds = new Map<ArcVersion, Crd>();

/** ARC's EphemeralRunner CRD of `version`, parsed from its fixture (test/fixtures/arc). */
export function ephemeralRunnerCrd(version: ArcVersion = DEFAULT_ARC_VERSION): Crd {
  let crd = crds.get(version);
  if (!crd) {
    const path = fileURLToPath(new URL(ARC_VERSION_FIXTURES[version].crdFile, fixtures).href);
    crd = parse(readFileSync(path, "utf8")) as Crd;
    crds.set(version, crd);
  }
  return crd;
}

/** The v1alpha1 openAPIV3Schema of ARC's EphemeralRunner CRD of `version`. */
export function ephemeralRunnerSchema(version: ArcVersion = DEFAULT_ARC_VERSION): Schema {
  const found = ephemeralRunnerCrd(version).spec.versions.find((v) => v.name === "v1alpha1");
  if (!found) throw new Error(`ARC ${version}'s EphemeralRunner CRD has no v1alpha1 version`);
  return found.schema.openAPIV3Schema;
}

export type UnknownFieldMode = "reject" | "prune";

export interface ValidationResult {
  errors: FieldError[];
  /** Paths of fields the schema does not declare (rejected or pruned, per mode). */
  unknown: string[];
}

const MAX_ERRORS = 100;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** go-openapi's name for a JSON value's type, as used in validation messages. */
function jsonTypeName(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "string") return "string";
  return "object";
}

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case "object":
      return isPlainObject(v);
    case "array":
      return Array.isArray(v);
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "boolean":
      return typeof v === "boolean";
    default:
      return true;
  }
}

const patterns = new Map<string, RegExp>();
// CRD patterns are Go RE2; the ones ARC's CRD uses are valid JavaScript too.
function compiled(pattern: string): RegExp {
  let re = patterns.get(pattern);
  if (!re) {
    re = new RegExp(pattern);
    patterns.set(pattern, re);
  }
  return re;
}

const dateTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Fill in absent properties that declare a `default`, as the API server does on write. */
export function applyDefaults(value: unknown, schema: Schema): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const item of value) applyDefaults(item, schema.items);
    return;
  }
  if (!isPlainObject(value)) return;
  if (schema.properties) {
    for (const [key, sub] of Object.entries(schema.properties)) {
      if (!(key in value) && sub.default !== undefined) value[key] = structuredClone(sub.default);
      if (key in value) applyDefaults(value[key], sub);
    }
  }
  if (isPlainObject(schema.additionalProperties)) {
    const sub = schema.additionalProperties;
    for (const [key, v] of Object.entries(value)) if (!schema.properties?.[key]) applyDefaults(v, sub);
  }
}

/**
 * Validate `value` at `path` against a structural schema. In "prune" mode unknown
 * fields are deleted from `value` (the API server's default for writes).
 */
export function validate(value: unknown, schema: Schema, path: string, mode: UnknownFieldMode): ValidationResult {
  const result: ValidationResult = { errors: [], unknown: [] };
  walk(value, schema, path, mode, result);
  return result;
}

function add(result: ValidationResult, e: FieldError): void {
  if (result.errors.length < MAX_ERRORS) result.errors.push(e);
}

function walk(value: unknown, schema: Schema, path: string, mode: UnknownFieldMode, result: ValidationResult): void {
  const where = path === "" ? "body" : path;
  if (value === null) {
    if (schema.nullable) return;
    const expected = schema["x-kubernetes-int-or-string"] ? "integer,string" : schema.type;
    if (expected) {
      add(result, { type: "Invalid", field: where, value: "null", detail: `${where} in body must be of type ${expected}: "null"` });
    }
    return;
  }
  if (schema["x-kubernetes-int-or-string"]) {
    if (!(typeof value === "string" || (typeof value === "number" && Number.isInteger(value)))) {
      const t = jsonTypeName(value);
      add(result, { type: "Invalid", field: where, value: t, detail: `${where} in body must be of type integer,string: "${t}"` });
      return;
    }
  } else if (schema.type && !typeMatches(schema.type, value)) {
    const t = jsonTypeName(value);
    add(result, { type: "Invalid", field: where, value: t, detail: `${where} in body must be of type ${schema.type}: "${t}"` });
    return;
  }
  if (schema.enum && !schema.enum.some((e) => deepEqual(e, value))) {
    add(result, { type: "NotSupported", field: where, value, supported: schema.enum.map((e) => String(e)) });
  }
  if (typeof value === "string") {
    if (schema.pattern && !compiled(schema.pattern).test(value)) {
      add(result, { type: "Invalid", field: where, value, detail: `${where} in body should match '${schema.pattern}'` });
    }
    if (schema.format === "date-time" && !dateTime.test(value)) {
      add(result, { type: "Invalid", field: where, value, detail: `${where} in body must be of type date-time: ${JSON.stringify(value)}` });
    }
    if (schema.maxLength !== undefined && value.length > schema.maxLength) {
      add(result, { type: "TooLong", field: where, value, detail: `may not be more than ${schema.maxLength} bytes` });
    }
    if (schema.minLength !== undefined && value.length < schema.minLength) {
      add(result, { type: "Invalid", field: where, value, detail: `${where} in body should be at least ${schema.minLength} chars long` });
    }
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) {
      add(result, { type: "Invalid", field: where, value, detail: `${where} in body should be greater than or equal to ${schema.minimum}` });
    }
    if (schema.maximum !== undefined && value > schema.maximum) {
      add(result, { type: "Invalid", field: where, value, detail: `${where} in body should be less than or equal to ${schema.maximum}` });
    }
  }
  // anyOf/allOf in a structural schema carry value checks only (not types or fields).
  if (schema.anyOf && !schema["x-kubernetes-int-or-string"]) {
    const ok = schema.anyOf.some((s) => validate(structuredClone(value), s, path, "prune").errors.length === 0);
    if (!ok) add(result, { type: "Invalid", field: where, value, detail: "must validate at least one schema (anyOf)" });
  }
  if (schema.allOf) {
    for (const s of schema.allOf) for (const e of validate(structuredClone(value), s, path, "prune").errors) add(result, e);
  }
  if (Array.isArray(value)) walkArray(value, schema, path, mode, result);
  else if (isPlainObject(value)) walkObject(value, schema, path, mode, result);
}

function walkArray(value: unknown[], schema: Schema, path: string, mode: UnknownFieldMode, result: ValidationResult): void {
  const where = path === "" ? "body" : path;
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    add(result, { type: "TooLong", field: where, value, detail: `must have at most ${schema.maxItems} items` });
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    add(result, { type: "Invalid", field: where, value, detail: `${where} in body should have at least ${schema.minItems} items` });
  }
  if (schema.items) value.forEach((item, i) => walk(item, schema.items as Schema, `${path}[${i}]`, mode, result));
  // list-type map/set: the API server rejects duplicate keys/elements.
  const listType = schema["x-kubernetes-list-type"];
  const seen = new Set<string>();
  value.forEach((item, i) => {
    let key: string | undefined;
    if (listType === "set") key = JSON.stringify(item);
    else if (listType === "map" && isPlainObject(item)) {
      const keys = schema["x-kubernetes-list-map-keys"] ?? [];
      key = JSON.stringify(keys.map((k) => item[k] ?? null));
    }
    if (key === undefined) return;
    if (seen.has(key)) {
      const shown =
        listType === "map" && isPlainObject(item) ? Object.fromEntries((schema["x-kubernetes-list-map-keys"] ?? []).map((k) => [k, item[k]])) : item;
      add(result, { type: "Duplicate", field: `${path}[${i}]`, value: shown });
    }
    seen.add(key);
  });
}

function walkObject(value: Record<string, unknown>, schema: Schema, path: string, mode: UnknownFieldMode, result: ValidationResult): void {
  for (const req of schema.required ?? []) {
    if (!(req in value)) add(result, { type: "Required", field: join(path, req) });
  }
  const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true;
  for (const [key, v] of Object.entries(value)) {
    const field = join(path, key);
    const declared = schema.properties?.[key];
    if (declared) {
      walk(v, declared, field, mode, result);
    } else if (isPlainObject(schema.additionalProperties)) {
      walk(v, schema.additionalProperties, field, mode, result);
    } else if (schema.additionalProperties === true || preserve) {
    } else {
      if (result.unknown.length < MAX_ERRORS) result.unknown.push(field);
      if (mode === "prune") delete value[key];
    }
  }
}

// ObjectMeta is not in the CRD's schema (it says only `type: object`): the API
// server validates it itself. These are the checks that catch test mistakes.
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const labelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const labelValueMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const qualifiedMsg =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && dns1123Subdomain.test(s);
}
function isDns1123Label(s: string): boolean {
  return s.length <= 63 && dns1123Label.test(s);
}
export function isQualifiedName(s: string): boolean {
  const parts = s.split("/");
  if (parts.length > 2) return false;
  const name = parts.length === 2 ? (parts[1] ?? "") : (parts[0] ?? "");
  const prefix = parts.length === 2 ? (parts[0] ?? "") : undefined;
  if (prefix !== undefined && !isDns1123Subdomain(prefix)) return false;
  return name.length > 0 && name.length <= 63 && qualifiedNamePart.test(name);
}
export function isLabelValue(s: string): boolean {
  return s.length <= 63 && labelValue.test(s);
}

const metaFields: Record<string, string> = {
  name: "string",
  generateName: "string",
  namespace: "string",
  uid: "string",
  resourceVersion: "string",
  generation: "integer",
  creationTimestamp: "string",
  deletionTimestamp: "string",
  deletionGracePeriodSeconds: "integer",
  labels: "object",
  annotations: "object",
  finalizers: "array",
  ownerReferences: "array",
  managedFields: "array",
  selfLink: "string",
};
const ownerRefFields: Record<string, string> = {
  apiVersion: "string",
  kind: "string",
  name: "string",
  uid: "string",
  controller: "boolean",
  blockOwnerDeletion: "boolean",
};

/** Validate a top-level ObjectMeta; unknown fields are reported (and pruned in "prune" mode). */
export function validateObjectMeta(meta: unknown, mode: UnknownFieldMode): ValidationResult {
  const result: ValidationResult = { errors: [], unknown: [] };
  if (!isPlainObject(meta)) {
    add(result, { type: "Invalid", field: "metadata", value: jsonTypeName(meta), detail: "metadata in body must be of type object" });
    return result;
  }
  for (const [key, v] of Object.entries(meta)) {
    const type = metaFields[key];
    const field = `metadata.${key}`;
    if (!type) {
      result.unknown.push(field);
      if (mode === "prune") delete meta[key];
      continue;
    }
    if (!typeMatches(type, v)) {
      const t = jsonTypeName(v);
      add(result, { type: "Invalid", field, value: t, detail: `${field} in body must be of type ${type}: "${t}"` });
    }
  }
  const name = meta["name"];
  if (typeof name === "string" && !isDns1123Subdomain(name)) {
    add(result, { type: "Invalid", field: "metadata.name", value: name, detail: subdomainMsg });
  }
  const ns = meta["namespace"];
  if (typeof ns === "string" && !isDns1123Label(ns)) {
    add(result, { type: "Invalid", field: "metadata.namespace", value: ns, detail: labelMsg });
  }
  for (const ts of ["creationTimestamp", "deletionTimestamp"]) {
    const v = meta[ts];
    if (typeof v === "string" && !dateTime.test(v)) {
      add(result, { type: "Invalid", field: `metadata.${ts}`, value: v, detail: "must be an RFC 3339 date-time" });
    }
  }
  const labels = meta["labels"];
  if (isPlainObject(labels)) {
    for (const [k, v] of Object.entries(labels)) {
      if (!isQualifiedName(k)) add(result, { type: "Invalid", field: "metadata.labels", value: k, detail: qualifiedMsg });
      if (typeof v !== "string") {
        add(result, { type: "Invalid", field: `metadata.labels.${k}`, value: jsonTypeName(v), detail: `metadata.labels.${k} in body must be of type string` });
      } else if (!isLabelValue(v)) {
        add(result, { type: "Invalid", field: "metadata.labels", value: v, detail: labelValueMsg });
      }
    }
  }
  const annotations = meta["annotations"];
  if (isPlainObject(annotations)) {
    for (const [k, v] of Object.entries(annotations)) {
      if (!isQualifiedName(k)) add(result, { type: "Invalid", field: "metadata.annotations", value: k, detail: qualifiedMsg });
      if (typeof v !== "string") {
        add(result, {
          type: "Invalid",
          field: `metadata.annotations.${k}`,
          value: jsonTypeName(v),
          detail: `metadata.annotations.${k} in body must be of type string`,
        });
      }
    }
  }
  const finalizers = meta["finalizers"];
  if (Array.isArray(finalizers)) {
    finalizers.forEach((f, i) => {
      if (typeof f !== "string" || !isQualifiedName(f)) {
        add(result, { type: "Invalid", field: `metadata.finalizers[${i}]`, value: f, detail: qualifiedMsg });
      }
    });
  }
  const owners = meta["ownerReferences"];
  if (Array.isArray(owners)) {
    let controllers = 0;
    owners.forEach((o, i) => {
      const field = `metadata.ownerReferences[${i}]`;
      if (!isPlainObject(o)) {
        add(result, { type: "Invalid", field, value: jsonTypeName(o), detail: `${field} in body must be of type object` });
        return;
      }
      for (const req of ["apiVersion", "kind", "name", "uid"]) {
        if (typeof o[req] !== "string" || o[req] === "") add(result, { type: "Required", field: `${field}.${req}` });
      }
      for (const [k, v] of Object.entries(o)) {
        const type = ownerRefFields[k];
        if (!type) {
          result.unknown.push(`${field}.${k}`);
          if (mode === "prune") delete o[k];
        } else if (!typeMatches(type, v)) {
          add(result, { type: "Invalid", field: `${field}.${k}`, value: jsonTypeName(v), detail: `must be of type ${type}` });
        }
      }
      if (o["controller"] === true) controllers++;
    });
    if (controllers > 1) {
      add(result, { type: "Invalid", field: "metadata.ownerReferences", value: owners.length, detail: "Only one reference can have Controller set to true" });
    }
  }
  return result;
}
