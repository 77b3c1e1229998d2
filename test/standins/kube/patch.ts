// JSON merge patch (RFC 7386) and JSON patch (RFC 6902): the two patch types
// the API server accepts for custom resources.
import { isPlainObject } from "./crd-schema.ts";

export class PatchError extends Error {}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new PatchError(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

type Container = Record<string, unknown> | unknown[];

function resolveParent(doc: unknown, tokens: string[], op: string): { parent: Container; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isPlainObject(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined) throw new PatchError(`${op} operation does not apply: doc is missing path: "/${tokens.join("/")}"`);
  }
  if (!Array.isArray(cur) && !isPlainObject(cur)) {
    throw new PatchError(`${op} operation does not apply: doc is missing path: "/${tokens.join("/")}"`);
  }
  return { parent: cur, key: tokens[tokens.length - 1] ?? "" };
}

function arrayIndex(parent: unknown[], key: string, forInsert: boolean, op: string): number {
  if (forInsert && key === "-") return parent.length;
  if (!/^(0|[1-9]\d*)$/.test(key)) throw new PatchError(`${op} operation: invalid array index ${JSON.stringify(key)}`);
  const i = Number(key);
  if (i > parent.length || (!forInsert && i === parent.length)) throw new PatchError(`${op} operation: array index ${i} out of bounds`);
  return i;
}

function get(doc: unknown, pointer: string, op: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return doc;
  const { parent, key } = resolveParent(doc, tokens, op);
  const v = Array.isArray(parent) ? parent[arrayIndex(parent, key, false, op)] : parent[key];
  if (v === undefined) throw new PatchError(`${op} operation does not apply: doc is missing path: "${pointer}"`);
  return v;
}

function remove(doc: unknown, pointer: string, op: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new PatchError(`${op} operation: cannot remove the whole document`);
  const { parent, key } = resolveParent(doc, tokens, op);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, key, false, op), 1)[0];
  if (!(key in parent)) throw new PatchError(`${op} operation does not apply: doc is missing path: "${pointer}"`);
  const v = parent[key];
  delete parent[key];
  return v;
}

function add(doc: unknown, pointer: string, value: unknown, op: string, replace: boolean): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return structuredClone(value);
  const { parent, key } = resolveParent(doc, tokens, op);
  if (Array.isArray(parent)) {
    const i = arrayIndex(parent, key, !replace, op);
    if (replace) parent[i] = structuredClone(value);
    else parent.splice(i, 0, structuredClone(value));
  } else {
    if (replace && !(key in parent)) throw new PatchError(`${op} operation does not apply: doc is missing key: "${pointer}"`);
    parent[key] = structuredClone(value);
  }
  return doc;
}

export function jsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new PatchError("json patch must be an array of operations");
  let out = structuredClone(doc);
  for (const raw of ops) {
    if (!isPlainObject(raw)) throw new PatchError("each json patch operation must be an object");
    const op = raw["op"];
    const path = raw["path"];
    if (typeof path !== "string") throw new PatchError(`${String(op)} operation: missing path`);
    switch (op) {
      case "add":
        out = add(out, path, raw["value"], op, false);
        break;
      case "replace":
        out = add(out, path, raw["value"], op, true);
        break;
      case "remove":
        remove(out, path, op);
        break;
      case "test":
        if (JSON.stringify(get(out, path, op)) !== JSON.stringify(raw["value"])) {
          throw new PatchError(`testing value ${path} failed: test failed`);
        }
        break;
      case "move": {
        const from = raw["from"];
        if (typeof from !== "string") throw new PatchError("move operation: missing from");
        const v = remove(out, from, op);
        out = add(out, path, v, op, false);
        break;
      }
      case "copy": {
        const from = raw["from"];
        if (typeof from !== "string") throw new PatchError("copy operation: missing from");
        out = add(out, path, get(out, from, op), op, false);
        break;
      }
      default:
        throw new PatchError(`Unexpected kind: ${String(op)}`);
    }
  }
  return out;
}
