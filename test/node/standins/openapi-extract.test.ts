// test/fixtures/openapi: the extract of GitHub's REST description the stand-in
// is checked against is exactly what scripts/openapi-extract.ts makes: closed
// (every $ref it holds is in it), nothing more than the operations arc-reaper
// calls, and, wherever @octokit/openapi is installed at the recorded version,
// equal to the script's output from the whole description.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DESCRIPTIONS, EXTRACT_DIR, extract, extractFromPackage, extractText, OPERATIONS } from "../../../scripts/openapi-extract.ts";

type Obj = Record<string, unknown>;
const read = (name: string): string => readFileSync(join(EXTRACT_DIR, `${name}.json`), "utf8");
const sourceOf = (doc: Obj) => {
  const { package: pkg, file, sha256 } = doc["x-extract"] as { package: string; file: string; sha256: string };
  return { package: pkg, file, sha256 };
};

/** The whole @octokit/openapi, when installed (it is not a dependency: see the script's header). */
const fullPackage = (() => {
  try {
    return createRequire(import.meta.url)
      .resolve("@octokit/openapi/package.json")
      .replace(/package\.json$/, "");
  } catch {
    return undefined;
  }
})();

describe("the extract of GitHub's REST description", () => {
  it.each(DESCRIPTIONS)("%s is what the script makes from it: closed over its $refs, the operations arc-reaper calls and no more", (name) => {
    const text = read(name);
    const doc = JSON.parse(text) as Obj;
    expect(extractText(doc, sourceOf(doc))).toBe(text);
    expect(Object.entries(doc["paths"] as Obj).flatMap(([path, ops]) => Object.keys(ops as Obj).map((m) => `${m.toUpperCase()} ${path}`))).toEqual(
      expect.arrayContaining([...OPERATIONS]),
    );
    expect((doc["x-extract"] as Obj)["package"]).toMatch(/^@octokit\/openapi@\d+\.\d+\.\d+$/);
    // Small enough to check in: the whole description is 11-13 MB, the package 385 MB.
    expect(text.length).toBeLessThan(200_000);
  });

  it("the check can fail: a referenced schema missing, or an operation the description lacks, is named", () => {
    const doc = JSON.parse(read("api.github.com")) as Obj;
    const schemas = (doc["components"] as Obj)["schemas"] as Obj;
    const { job: _job, ...withoutJob } = schemas;
    const broken = { ...doc, components: { ...(doc["components"] as Obj), schemas: withoutJob } };
    expect(() => extract(broken, sourceOf(doc))).toThrow('$ref "#/components/schemas/job" names nothing in the description');
    const { "/app": _app, ...otherPaths } = doc["paths"] as Obj;
    expect(() => extract({ ...doc, paths: otherPaths }, sourceOf(doc))).toThrow("the description has no responses for GET /app");
  });

  it.skipIf(fullPackage === undefined)("equals the script's output from the installed @octokit/openapi", () => {
    const made = extractFromPackage(fullPackage!);
    for (const name of DESCRIPTIONS) expect(made.get(name), name).toBe(read(name));
  });
});
