// Code reads a verdict's code, never the words of its reason (src/model/verdict.ts). This holds the
// line: a new place in src/ that matches, strips or compares reason text fails here. The places left
// are named, each with what still needs a code of its own, so the list only shrinks.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { expect, it } from "vitest";
import { VERDICT_CODES } from "../../../src/model/verdict.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const READS_REASON_TEXT = /\breason\??\.(startsWith|endsWith|includes|match|replace|search|split)\(|\breason (===|!==) "/;

/** Reason text still read, and why (to be replaced by codes): file → the count of such lines. */
const LEFT: Record<string, number> = {};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

it("no code in src/ reads reason text beyond the places named", () => {
  const found: Record<string, number> = {};
  for (const file of sources(join(ROOT, "src"))) {
    const n = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => READS_REASON_TEXT.test(line)).length;
    if (n > 0) found[relative(ROOT, file)] = n;
  }
  expect(found).toEqual(LEFT);
});

it("the check can fail: a line that tests a reason's words is caught", () => {
  expect(READS_REASON_TEXT.test('if (v.reason.startsWith("paused")) return "paused";')).toBe(true);
  expect(READS_REASON_TEXT.test('if (v.code === "Paused") return "paused";')).toBe(false);
});

it("the codes are a closed set of distinct names", () => {
  expect(new Set(VERDICT_CODES).size).toBe(VERDICT_CODES.length);
  for (const code of VERDICT_CODES) expect(code).toMatch(/^[A-Z][A-Za-z]+$/);
});
