// The judge's header and README's decision table are one source: the same lines.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string): string[] => readFileSync(join(ROOT, path), "utf8").split("\n");
const tableOf = (lines: string[]) => lines.filter((l) => l.startsWith("|"));

it("the judge's header is README's decision table, row for row", () => {
  const judge = read("src/reaper/judge.ts")
    .filter((l) => l.startsWith("// |"))
    .map((l) => l.slice(3));
  const readme = read("README.md");
  const start = readme.findIndex((l) => l.startsWith("| # | what is known | verdict |"));
  expect(start).toBeGreaterThan(0);
  const end = readme.findIndex((l, i) => i > start && !l.startsWith("|"));
  expect(judge.length).toBeGreaterThanOrEqual(16); // header, rule and 14 rows
  expect(tableOf(readme.slice(start, end))).toEqual(judge);
  // Numbered 1..n in order, as the code's comments cite them.
  expect(judge.slice(2).map((l) => Number(l.split("|")[1]))).toEqual(judge.slice(2).map((_, i) => i + 1));
});
