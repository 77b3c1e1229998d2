// metadata.managedFields as the API server writes them for an EphemeralRunner:
// one entry for the controller's create (metadata and spec) and one for its
// status subresource writes, each a FieldsV1 set of every field it set (maps as
// "f:<key>", keyed lists as "k:{...}", sets as "v:..."), the structure a
// server-side apply records too. They are what makes a real object as large as
// it is on the wire; the stand-in's objects carry them so that listings cost
// what they cost against a real API server.
import { isPlainObject } from "./crd-schema.ts";
import type { Json, JsonObject } from "./types.ts";

/** ARC's controller-manager binary: the field manager of everything it writes. */
const MANAGER = "manager";

function fieldSet(value: Json | undefined, top = false): JsonObject {
  if (Array.isArray(value)) {
    const out: JsonObject = { ".": {} };
    for (const item of value) {
      if (typeof item === "string") out[`v:${JSON.stringify(item)}`] = {};
      else if (isPlainObject(item)) {
        const o = item as JsonObject;
        const key = typeof o["name"] === "string" ? { name: o["name"] } : typeof o["uid"] === "string" ? { uid: o["uid"] } : undefined;
        // A list without a key is atomic: the whole list is one field.
        if (key === undefined) return {};
        out[`k:${JSON.stringify(key)}`] = fieldSet(o);
      } else return {};
    }
    return out;
  }
  if (!isPlainObject(value)) return {};
  const out: JsonObject = top ? {} : { ".": {} };
  for (const [k, v] of Object.entries(value as JsonObject)) out[`f:${k}`] = fieldSet(v);
  return out;
}

/** The managedFields of an object as created (metadata, spec) and then given its status (if it has one). */
export function managedFieldsOf(obj: JsonObject, time: string): Json[] {
  const meta = (obj["metadata"] ?? {}) as JsonObject;
  const written: JsonObject = {};
  for (const k of ["generateName", "labels", "annotations", "finalizers", "ownerReferences"]) if (meta[k] !== undefined) written[k] = meta[k] as Json;
  const entry = (fields: JsonObject, subresource?: string): JsonObject => ({
    apiVersion: "actions.github.com/v1alpha1",
    fieldsType: "FieldsV1",
    fieldsV1: fieldSet(fields, true),
    manager: MANAGER,
    operation: "Update",
    ...(subresource === undefined ? {} : { subresource }),
    time,
  });
  const out: Json[] = [entry({ metadata: written, ...(obj["spec"] === undefined ? {} : { spec: obj["spec"] as Json }) })];
  if (isPlainObject(obj["status"])) out.push(entry({ status: obj["status"] as Json }, "status"));
  return out;
}
