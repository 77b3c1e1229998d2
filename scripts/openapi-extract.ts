// The few parts of GitHub's REST description that the tests check the GitHub
// stand-in against (test/node/standins/openapi-check.ts): the responses of the
// operations arc-reaper calls (each with its default example), every component
// they reference (transitively), and basic-error. The whole description (@octokit/openapi, 385 MB installed)
// is then not a dependency; its extract is checked in under
// test/fixtures/openapi/, and test/node/standins/openapi-extract.test.ts holds it to what
// this script makes.
//
// To refresh it after a new @octokit/openapi (the version is recorded in each extract):
//   npm install --no-save --prefix .tmp/openapi @octokit/openapi@<version>
//   node scripts/openapi-extract.ts .tmp/openapi/node_modules/@octokit/openapi
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The descriptions the stand-in is checked against. */
export const DESCRIPTIONS = ["api.github.com", "ghes-3.19"] as const;

/** Every operation arc-reaper calls on GitHub ("METHOD /path" as the description names it). */
export const OPERATIONS: readonly string[] = [
  "GET /app",
  "POST /app/installations/{installation_id}/access_tokens",
  "GET /app/installations/{installation_id}",
  "GET /repos/{owner}/{repo}/installation",
  "GET /app/hook/deliveries",
  "POST /app/hook/deliveries/{delivery_id}/attempts",
  "GET /repos/{owner}/{repo}/actions/runs/{run_id}",
  "GET /repos/{owner}/{repo}/actions/runs",
  "GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}",
  "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
  "GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs",
  "GET /repos/{owner}/{repo}/actions/jobs/{job_id}",
];

/** What an operation does not list is answered with this (openapi-check.ts). */
const ALWAYS = ["#/components/schemas/basic-error"];

export const EXTRACT_DIR: string = resolve(import.meta.dirname, "../test/fixtures/openapi");

function pointerGet(doc: Obj, ref: string): unknown {
  if (!ref.startsWith("#/")) throw new Error(`$ref ${JSON.stringify(ref)} is not local to the description`);
  let v: unknown = doc;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    v = isObj(v) ? v[key] : undefined;
    if (v === undefined) throw new Error(`$ref ${JSON.stringify(ref)} names nothing in the description`);
  }
  return v;
}

/**
 * A response with only its default example (the stand-in's checks read the schema; the answers' schemas are
 * also held to GitHub's own example of each answer, test/node/github/github-answers-openapi.test.ts): a copy.
 */
function withDefaultExample(response: unknown): unknown {
  if (!isObj(response) || !isObj(response["content"])) return response;
  const content = Object.fromEntries(
    Object.entries(response["content"]).map(([type, media]) => {
      if (!isObj(media)) return [type, media];
      const { examples, example: _example, ...rest } = media;
      const keep = isObj(examples) && examples["default"] !== undefined ? { examples: { default: examples["default"] } } : {};
      return [type, { ...rest, ...keep }];
    }),
  );
  return { ...response, content };
}

function refsIn(value: unknown, out: string[]): void {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (isObj(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refsIn(v, out);
    }
  }
}

/** The extract of one description: the listed operations' responses (each with its default example) and what they reference, in a stable order. */
export function extract(doc: Obj, source: { package: string; file: string; sha256: string }): Obj {
  const paths: Obj = {};
  const pending: string[] = [...ALWAYS];
  for (const op of [...OPERATIONS].sort()) {
    const [method, path] = op.split(" ") as [string, string];
    const operation = (doc["paths"] as Obj | undefined)?.[path];
    const found = isObj(operation) ? operation[method.toLowerCase()] : undefined;
    if (!isObj(found) || !isObj(found["responses"])) throw new Error(`the description has no responses for ${op}`);
    paths[path] ??= {};
    const entry = paths[path] as Obj;
    const responses = Object.fromEntries(Object.entries(found["responses"]).map(([status, r]) => [status, withDefaultExample(r)]));
    entry[method.toLowerCase()] = { operationId: found["operationId"], responses };
    refsIn(responses, pending);
  }
  const components: Obj = {};
  const seen = new Set<string>();
  while (pending.length > 0) {
    const ref = pending.pop()!;
    if (seen.has(ref)) continue;
    seen.add(ref);
    const parts = ref.split("/");
    if (parts.length !== 4 || parts[1] !== "components") throw new Error(`$ref ${JSON.stringify(ref)} is not a component`);
    const kind = parts[2]!;
    const target = kind === "responses" ? withDefaultExample(pointerGet(doc, ref)) : pointerGet(doc, ref);
    components[kind] ??= {};
    (components[kind] as Obj)[decodeURIComponent(parts[3]!)] = target;
    refsIn(target, pending);
  }
  const sorted: Obj = {};
  for (const kind of Object.keys(components).sort()) {
    const all = components[kind] as Obj;
    sorted[kind] = Object.fromEntries(
      Object.keys(all)
        .sort()
        .map((k) => [k, all[k]]),
    );
  }
  return { openapi: doc["openapi"], info: doc["info"], "x-extract": { ...source, operations: [...OPERATIONS].sort() }, paths, components: sorted };
}

export function extractText(doc: Obj, source: { package: string; file: string; sha256: string }): string {
  return `${JSON.stringify(extract(doc, source), null, 1)}\n`;
}

/** From the installed package's directory: each description's extract, as the files under test/fixtures/openapi hold them. */
export function extractFromPackage(packageDir: string): Map<string, string> {
  const version = (JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string }).version;
  const out = new Map<string, string>();
  for (const name of DESCRIPTIONS) {
    const file = `generated/${name}.json`;
    const text = readFileSync(join(packageDir, file), "utf8");
    const sha256 = createHash("sha256").update(text).digest("hex");
    out.set(name, extractText(JSON.parse(text) as Obj, { package: `@octokit/openapi@${version}`, file, sha256 }));
  }
  return out;
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (dir === undefined) {
    process.stderr.write("usage: node scripts/openapi-extract.ts <the directory of an installed @octokit/openapi>\n");
    process.exit(2);
  }
  for (const [name, text] of extractFromPackage(dir)) {
    writeFileSync(join(EXTRACT_DIR, `${name}.json`), text);
    process.stdout.write(`${name}: ${text.length} characters\n`);
  }
}
