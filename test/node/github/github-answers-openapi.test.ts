// arc-reaper's schemas of GitHub's answers (src/github/github-answers.ts) held
// to GitHub's published REST description (@octokit/openapi, through its checked-in
// extract: scripts/openapi-extract.ts), as the stand-in is
// (github-standin-openapi.test.ts): each reads GitHub's own example of its
// answer, asks for no field the description leaves optional, accepts null
// wherever the description allows it, and every value of a described enum.
// So a real answer is never refused, and `{}` or a page never read as one.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import {
  DeliveriesAnswer,
  InstallationAnswer,
  JobAnswer,
  readAnswer,
  RunAnswer,
  RunJobsAnswer,
  RunsAnswer,
  TokenAnswer,
  toJob,
} from "../../../src/github/github-answers.ts";
import { EXTRACT_DIR } from "../../../scripts/openapi-extract.ts";

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/** The checked-in extract of the description (scripts/openapi-extract.ts): the operations we call, each with GitHub's default example. */
function load(name: "api.github.com" | "ghes-3.19"): Obj {
  return JSON.parse(readFileSync(join(EXTRACT_DIR, `${name}.json`), "utf8")) as Obj;
}

function deref(doc: Obj, value: unknown): unknown {
  if (!isObj(value) || typeof value["$ref"] !== "string") return value;
  let at: unknown = doc;
  for (const part of value["$ref"].slice(2).split("/")) at = (at as Obj)[part];
  return deref(doc, at);
}

/** The answer's schema and GitHub's example of it, for one operation and status. */
function described(doc: Obj, method: string, path: string, status: number): { schema: Obj; example: unknown } {
  const operation = ((doc["paths"] as Obj)[path] as Obj)[method] as Obj;
  const response = deref(doc, (operation["responses"] as Obj)[String(status)]) as Obj;
  const json = (response["content"] as Obj)["application/json"] as Obj;
  const example = deref(doc, (json["examples"] as Obj)["default"]) as Obj;
  return { schema: deref(doc, json["schema"]) as Obj, example: example["value"] };
}

type AnySchema = v.GenericSchema & { entries?: Record<string, AnySchema>; item?: AnySchema; wrapped?: AnySchema };
const OPTIONAL = new Set(["optional", "nullish", "exact_optional"]);

/** Where our schema asks more of an answer than the description promises ("jobs[].status: …"). */
function stricter(doc: Obj, ours: AnySchema, theirs: Obj, at: string): string[] {
  const out: string[] = [];
  const item = ours.type === "array" ? ours.item : undefined;
  if (item) return stricter(doc, item, deref(doc, theirs["items"]) as Obj, `${at}[]`);
  if (!ours.entries) return out;
  const required = new Set((theirs["required"] as string[] | undefined) ?? []);
  const properties = (theirs["properties"] as Obj | undefined) ?? {};
  for (const [key, entry] of Object.entries(ours.entries)) {
    const where = `${at}${at ? "." : ""}${key}`;
    const property = deref(doc, properties[key]) as Obj | undefined;
    if (!property) {
      out.push(`${where}: not in the description`);
      continue;
    }
    if (!OPTIONAL.has(entry.type) && !required.has(key)) out.push(`${where}: required here, optional in the description`);
    if (property["nullable"] === true && !v.safeParse(entry, null).success) out.push(`${where}: refuses null, which the description allows`);
    for (const value of (property["enum"] as unknown[] | undefined) ?? []) {
      if (value !== null && !v.safeParse(entry, value).success) out.push(`${where}: refuses ${JSON.stringify(value)}`);
    }
    const inner = entry.wrapped ?? entry;
    if (inner.entries || inner.type === "array") out.push(...stricter(doc, inner, property, where));
  }
  return out;
}

const ANSWERS = [
  ["a job", JobAnswer, "get", "/repos/{owner}/{repo}/actions/jobs/{job_id}", 200],
  ["a run", RunAnswer, "get", "/repos/{owner}/{repo}/actions/runs/{run_id}", 200],
  ["a run's jobs", RunJobsAnswer, "get", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs", 200],
  ["a repository's runs", RunsAnswer, "get", "/repos/{owner}/{repo}/actions/runs", 200],
  ["an installation", InstallationAnswer, "get", "/app/installations/{installation_id}", 200],
  ["a repository's installation", InstallationAnswer, "get", "/repos/{owner}/{repo}/installation", 200],
  ["an installation token", TokenAnswer, "post", "/app/installations/{installation_id}/access_tokens", 201],
  ["the deliveries listing", DeliveriesAnswer, "get", "/app/hook/deliveries", 200],
] as const;

describe.each(["api.github.com", "ghes-3.19"] as const)("GitHub's answers as %s describes them", (name) => {
  const doc = load(name);
  it.each(ANSWERS)("%s: GitHub's example is read, and nothing is asked that the description leaves out", (_what, schema, method, path, status) => {
    const { schema: theirs, example } = described(doc, method, path, status);
    // Delivery ids exceed 2^53: the client quotes them before reading (as it does with the wire text).
    const input = schema === DeliveriesAnswer ? (example as Obj[]).map((d) => ({ ...d, id: String(d["id"]) })) : example;
    expect(readAnswer(schema, input)).toMatchObject({ ok: true });
    expect(stricter(doc, schema as AnySchema, theirs, "")).toEqual([]);
  });
});

describe("what is not GitHub's answer", () => {
  it.each([
    ["{}", {}, /^id: /],
    ["an HTML page", "<!DOCTYPE html><title>Sign in</title>", /^a text of 37 characters, not JSON$/],
    ["a job of an unknown status", { id: 1, run_id: 2, status: "sleeping", conclusion: null, completed_at: null, runner_name: null }, /^status: /],
    ["a job with an id of text", { id: "1", run_id: 2, status: "queued", conclusion: null, completed_at: null, runner_name: null }, /^id: /],
  ])("%s is not a job, and the reason names the field", (_what, body, why) => {
    const read = readAnswer(JobAnswer, body);
    expect(read.ok).toBe(false);
    expect(read.ok ? "" : read.why).toMatch(why);
  });

  it("the check can fail: a schema asking for a field GitHub leaves optional is named", () => {
    const doc = load("api.github.com");
    const { schema } = described(doc, "get", "/repos/{owner}/{repo}/actions/jobs/{job_id}", 200);
    const strict = v.looseObject({ id: v.number(), run_attempt: v.number(), conclusion: v.string() }) as AnySchema;
    expect(stricter(doc, strict, schema, "")).toEqual([
      "run_attempt: required here, optional in the description",
      "conclusion: refuses null, which the description allows",
    ]);
  });
});

describe("a job without run_attempt", () => {
  it("is attempt 0 (unknown, so no run's completion covers it), never a guessed attempt 1", () => {
    const doc = load("api.github.com");
    const example = described(doc, "get", "/repos/{owner}/{repo}/actions/jobs/{job_id}", 200).example as Obj;
    const { run_attempt: _, ...without } = example;
    const read = readAnswer(JobAnswer, without);
    if (!read.ok) throw new Error(read.why);
    expect(toJob(read.value).runAttempt).toBe(0);
    expect(toJob({ ...read.value, run_attempt: 2 }).runAttempt).toBe(2);
  });
});
