// The API server's Table of EphemeralRunners (Accept `as=Table;g=meta.k8s.io;v=v1`),
// as kube-apiserver builds one for a custom resource (apiextensions-apiserver's
// tableconvertor): a Name column, then the CRD's additionalPrinterColumns in
// order; per row the cells by each column's jsonPath (null when it finds
// nothing; a number column's cell the number, a string column's the value as
// text, a date column's the age) and the object as includeObject asks (Metadata
// by default: a PartialObjectMetadata, managedFields and all). Paging and limit
// are the list's own: the Table carries the list's metadata.
import type { ArcVersion } from "./arc-versions.ts";
import { ephemeralRunnerCrd, isPlainObject } from "./crd-schema.ts";
import { KubeError, badRequest, failure } from "./status.ts";
import type { Json, JsonObject } from "./types.ts";

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/** What a client asks of the answer's shape, from its Accept header. */
export type Wanted = { table: false } | { table: true; orPlain: boolean };

/** Whether `accept` asks for a meta.k8s.io Table (and whether it takes a plain answer after it). */
export function wantedShape(accept: string | undefined): Wanted {
  if (!accept) return { table: false };
  const types = accept.split(",").map((t) => {
    const [media = "", ...params] = t.split(";").map((p) => p.trim());
    return { media: media.toLowerCase(), params: new Map(params.map((p) => p.split("=").map((x) => x.trim()) as [string, string])) };
  });
  const asTable = (t: (typeof types)[number]): boolean =>
    t.params.get("as") === "Table" && t.params.get("g") === "meta.k8s.io" && ["v1", "v1beta1"].includes(t.params.get("v") ?? "");
  if (!types.some(asTable)) return { table: false };
  const orPlain = types.some((t) => !asTable(t) && ["application/json", "*/*", "application/*"].includes(t.media) && !t.params.has("as"));
  return { table: true, orPlain };
}

/** What a server without the Table handler answers a client that accepts nothing else. */
export function notAcceptable(): KubeError {
  return new KubeError(
    failure(406, "NotAcceptable", "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"),
  );
}

/** The CRD's v1alpha1 printer columns, less those `without` names (a CRD that lacks them). */
export function printerColumns(version: ArcVersion, without: readonly string[] = []): PrinterColumn[] {
  const crd = ephemeralRunnerCrd(version) as unknown as { spec: { versions: { name: string; additionalPrinterColumns?: PrinterColumn[] }[] } };
  const v1 = crd.spec.versions.find((v) => v.name === "v1alpha1");
  return (v1?.additionalPrinterColumns ?? []).filter((c) => !without.includes(c.name));
}

const NAME_COLUMN = {
  name: "Name",
  type: "string",
  format: "name",
  description:
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
  priority: 0,
};

/** A simple jsonPath (`.status.runnerId`): the value there, or undefined when there is none. */
function at(obj: Json, path: string): Json | undefined {
  let v: Json | undefined = obj;
  for (const key of path.replace(/^\./, "").split(".")) {
    if (!isPlainObject(v)) return undefined;
    v = (v as JsonObject)[key];
  }
  return v;
}

/** kubectl's short age (metatable.ConvertToHumanReadableDateType): 45s, 12m, 5h, 3d, 2y. */
function age(timestamp: string, now: number): string {
  const t = Date.parse(timestamp);
  if (!Number.isFinite(t)) return "<invalid>";
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 3600 * 3) return `${Math.floor(s / 60)}m`;
  if (s < 86400 * 2) return `${Math.floor(s / 3600)}h`;
  if (s < 86400 * 365 * 2) return `${Math.floor(s / 86400)}d`;
  return `${Math.floor(s / (86400 * 365))}y`;
}

/** One cell as the tableconvertor makes it: null for nothing found or a value the column's type cannot hold. */
function cell(column: PrinterColumn, value: Json | undefined, now: number): Json {
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case "string":
      // jsonpath's text of the value: a string as it is, anything else as JSON.
      return typeof value === "string" ? value : JSON.stringify(value);
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null;
    case "number":
      return typeof value === "number" ? value : null;
    case "boolean":
      return typeof value === "boolean" ? value : null;
    case "date":
      return typeof value === "string" ? age(value, now) : null;
    default:
      return null;
  }
}

/** The object a row carries: includeObject None (none), Metadata (default) or Object. */
function rowObject(o: JsonObject, include: string): Json | undefined {
  if (include === "None") return undefined;
  if (include === "Object") return o;
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o["metadata"] ?? {} };
}

/** The Table of `objects` with the list's (or object's) `metadata`. */
export function tableOf(
  objects: readonly JsonObject[],
  metadata: JsonObject,
  columns: readonly PrinterColumn[],
  q: URLSearchParams,
  now = Date.now(),
): JsonObject {
  const include = q.get("includeObject") ?? "Metadata";
  if (!["None", "Metadata", "Object"].includes(include))
    throw badRequest(`includeObject: Unsupported value: "${include}": supported values: "Metadata", "None", "Object"`);
  const definitions = [
    NAME_COLUMN,
    ...columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? "",
      description: c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
      priority: c.priority ?? 0,
    })),
  ];
  const rows = objects.map((o): JsonObject => {
    const cells: Json[] = [at(o, ".metadata.name") ?? null, ...columns.map((c) => cell(c, at(o, c.jsonPath), now))];
    const object = rowObject(o, include);
    return object === undefined ? { cells } : { cells, object };
  });
  return { kind: "Table", apiVersion: "meta.k8s.io/v1", metadata, columnDefinitions: definitions, rows };
}
