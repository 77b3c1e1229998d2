// Label and field selectors with the grammar and semantics of
// k8s.io/apimachinery/pkg/labels and fields, as used by list calls.
import { isLabelValue, isQualifiedName } from "./crd-schema.ts";
import { badRequest, type KubeError } from "./status.ts";

type Op = "=" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

export interface Requirement {
  key: string;
  op: Op;
  values: string[];
}

type Token = { kind: "id"; text: string } | { kind: "op"; text: "!" | "=" | "==" | "!=" | "(" | ")" | "," | "<" | ">" } | { kind: "eof" };

const special = new Set(["!", "=", ",", "(", ")", "<", ">"]);

function tokenize(input: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i] ?? "";
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const two = input.slice(i, i + 2);
    if (two === "==" || two === "!=") {
      out.push({ kind: "op", text: two });
      i += 2;
      continue;
    }
    if (special.has(c)) {
      out.push({ kind: "op", text: c as "!" | "=" | "(" | ")" | "," | "<" | ">" });
      i++;
      continue;
    }
    let j = i;
    while (j < input.length && !special.has(input[j] ?? "") && !/\s/.test(input[j] ?? "")) j++;
    out.push({ kind: "id", text: input.slice(i, j) });
    i = j;
  }
  out.push({ kind: "eof" });
  return out;
}

function describe(t: Token): string {
  return t.kind === "eof" ? "EOF" : `'${t.text}'`;
}

function parseError(detail: string): KubeError {
  return badRequest(`unable to parse requirement: ${detail}`);
}

function checkKey(key: string): void {
  if (!isQualifiedName(key)) {
    throw parseError(
      `<nil>: Invalid value: ${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

function checkValue(key: string, value: string): void {
  if (!isLabelValue(value)) {
    throw parseError(
      `values[0][${key}]: Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

/** Parse a labelSelector; throws a 400 BadRequest Status on a syntax error. */
export function parseLabelSelector(input: string): Requirement[] {
  const tokens = tokenize(input);
  let pos = 0;
  const peek = (): Token => tokens[pos] ?? { kind: "eof" };
  const next = (): Token => tokens[pos++] ?? { kind: "eof" };
  const reqs: Requirement[] = [];
  if (peek().kind === "eof") return reqs;
  for (;;) {
    let t = next();
    if (t.kind === "op" && t.text === "!") {
      const k = next();
      if (k.kind !== "id") throw parseError(`found ${describe(k)}, expected: identifier`);
      checkKey(k.text);
      reqs.push({ key: k.text, op: "!", values: [] });
    } else if (t.kind === "id") {
      const key = t.text;
      checkKey(key);
      const o = peek();
      if (o.kind === "eof" || (o.kind === "op" && o.text === ",")) {
        reqs.push({ key, op: "exists", values: [] });
      } else if (o.kind === "id" && (o.text === "in" || o.text === "notin")) {
        next();
        const open = next();
        if (!(open.kind === "op" && open.text === "(")) throw parseError(`found ${describe(open)}, expected: '('`);
        const values: string[] = [];
        for (;;) {
          const v = next();
          if (v.kind === "id") {
            checkValue(key, v.text);
            values.push(v.text);
            const sep = next();
            if (sep.kind === "op" && sep.text === ")") break;
            if (!(sep.kind === "op" && sep.text === ",")) throw parseError(`found ${describe(sep)}, expected: ',' or ')'`);
          } else if (v.kind === "op" && v.text === ")" && values.length === 0) {
            break;
          } else {
            throw parseError(`found ${describe(v)}, expected: ',', ')' or identifier`);
          }
        }
        if (values.length === 0) throw parseError(`for 'in', 'notin' operators, values set can't be empty`);
        reqs.push({ key, op: o.text, values });
      } else if (o.kind === "op" && ["=", "==", "!=", "<", ">"].includes(o.text)) {
        next();
        const v = peek();
        let value = "";
        if (v.kind === "id") {
          next();
          value = v.text;
        } else if (!(v.kind === "eof" || (v.kind === "op" && v.text === ","))) {
          throw parseError(`found ${describe(v)}, expected: identifier`);
        }
        if (o.text === "<" || o.text === ">") {
          if (!/^-?\d+$/.test(value)) throw parseError(`for 'Gt', 'Lt' operators, the value must be an integer`);
          reqs.push({ key, op: o.text === "<" ? "lt" : "gt", values: [value] });
        } else {
          checkValue(key, value);
          reqs.push({ key, op: o.text === "!=" ? "!=" : "=", values: [value] });
        }
      } else {
        throw parseError(`found ${describe(o)}, expected: '=', '!=', '==', 'in', notin'`);
      }
    } else {
      throw parseError(`found ${describe(t)}, expected: !, identifier, or 'end of string'`);
    }
    t = next();
    if (t.kind === "eof") return reqs;
    if (!(t.kind === "op" && t.text === ",")) throw parseError(`found ${describe(t)}, expected: ',' or 'end of string'`);
  }
}

export function matchesLabels(reqs: Requirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case "=":
        return has && v === r.values[0];
      case "!=":
        return !has || v !== r.values[0];
      case "in":
        return has && r.values.includes(v ?? "");
      case "notin":
        return !has || !r.values.includes(v ?? "");
      case "exists":
        return has;
      case "!":
        return !has;
      case "gt":
      case "lt": {
        if (!has || !/^-?\d+$/.test(v ?? "")) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        return r.op === "gt" ? n > bound : n < bound;
      }
    }
  });
}

export interface FieldRequirement {
  field: "metadata.name" | "metadata.namespace";
  equal: boolean;
  value: string;
}

/** Custom resources support field selectors on metadata.name and metadata.namespace only. */
export function parseFieldSelector(input: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  if (input.trim() === "") return out;
  for (const part of input.split(",")) {
    const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${input}'; can't understand '${part}'`);
    const field = m[1] ?? "";
    if (field !== "metadata.name" && field !== "metadata.namespace") {
      throw badRequest(`"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
    }
    out.push({ field, equal: m[2] !== "!=", value: m[3] ?? "" });
  }
  return out;
}

export function matchesFields(reqs: FieldRequirement[], namespace: string, name: string): boolean {
  return reqs.every((r) => {
    const actual = r.field === "metadata.name" ? name : namespace;
    return r.equal ? actual === r.value : actual !== r.value;
  });
}
