// GitHub's published REST description (@octokit/openapi: the same OpenAPI files
// GitHub publishes in github/rest-api-description) as a judge of the stand-in:
// the response schema of one operation and status, compiled with Ajv, says what
// in an answer's body differs from what GitHub documents. Read from the
// checked-in extract of the operations arc-reaper calls (test/fixtures/openapi,
// made by scripts/openapi-extract.ts), not the 385 MB package.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

const EXTRACT_DIR = join(import.meta.dirname, "../../fixtures/openapi");
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
// ajv-formats is CommonJS with a default export.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

/** "api.github.com" or "ghes-3.19": a description shipped in @octokit/openapi (not dereferenced: the $refs stay), as extracted. */
export type DescriptionName = "api.github.com" | "ghes-3.19";

interface Description {
  name: DescriptionName;
  /** The package and version it was extracted from, for the report. */
  version: string;
  validator(method: string, path: string, status: number): { validate: ValidateFunction; declared: boolean };
}

const pointer = (...parts: string[]) => parts.map((p) => encodeURIComponent(p.replaceAll("~", "~0").replaceAll("/", "~1"))).join("/");

export function loadDescription(name: DescriptionName): Description {
  const raw = JSON.parse(readFileSync(join(EXTRACT_DIR, `${name}.json`), "utf8")) as Obj;
  const version = String((raw["x-extract"] as Obj | undefined)?.["package"]);
  const doc = withoutNullable(raw) as Obj;
  // OpenAPI 3.0 schemas: `nullable`, `example` and `x-*` keywords; the document itself is not a JSON Schema.
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(doc, name);
  const cache = new Map<string, { validate: ValidateFunction; declared: boolean }>();
  return {
    name,
    version,
    validator(method, path, status) {
      const key = `${method} ${path} ${status}`;
      const hit = cache.get(key);
      if (hit) return hit;
      const paths = doc["paths"] as Obj;
      const operation = (paths[path] as Obj | undefined)?.[method.toLowerCase()];
      if (!isObj(operation)) throw new Error(`${name} describes no ${method} ${path}`);
      const responses = operation["responses"] as Obj;
      let response = responses[String(status)];
      const declared = response !== undefined;
      let ref: string;
      if (!declared) {
        // An error the operation does not list: GitHub answers those with a basic-error.
        if (status < 400) throw new Error(`${name}: ${method} ${path} declares no ${status}`);
        ref = `${name}#/components/schemas/basic-error`;
      } else {
        let base = `/paths/${pointer(path, method.toLowerCase(), "responses", String(status))}`;
        if (isObj(response) && typeof response["$ref"] === "string") {
          base = response["$ref"].slice(1);
          response = ((doc["components"] as Obj)["responses"] as Obj)[base.split("/").pop()!];
        }
        const content = isObj(response) ? response["content"] : undefined;
        if (!isObj(content) || !isObj(content["application/json"])) throw new Error(`${name}: ${method} ${path} ${status} has no JSON body`);
        ref = `${name}#${base}/content/${pointer("application/json")}/schema`;
      }
      const made = { validate: ajv.compile({ $ref: ref }), declared };
      cache.set(key, made);
      return made;
    },
  };
}

/**
 * OpenAPI 3.0's `nullable: true` in JSON Schema's words: `type: [t, "null"]`, or, beside a
 * `$ref` or `allOf` (GitHub writes both), `anyOf: [the schema, {type: "null"}]`.
 */
function withoutNullable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullable);
  if (!isObj(value)) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) if (k !== "nullable") out[k] = withoutNullable(v);
  if (value["nullable"] !== true) return out;
  if (typeof out["type"] === "string") {
    out["type"] = [out["type"], "null"];
    if (Array.isArray(out["enum"]) && !out["enum"].includes(null)) out["enum"] = [...out["enum"], null];
    return out;
  }
  return { anyOf: [out, { type: "null" }] };
}

/** Ajv's errors in words: "/jobs/0/steps: must be array" (at most `max`). */
export function describeErrors(errors: ErrorObject[] | null | undefined, max = 12): string[] {
  return (errors ?? [])
    .slice(0, max)
    .map(
      (e) =>
        `${e.instancePath || "(body)"}: ${e.message ?? e.keyword}${e.keyword === "additionalProperties" ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : ""}`,
    );
}
