// The judge's header and docs/design.md's decision table are one source: the same
// lines; no other document holds a copy (README.md links to it).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const read = (path: string): string[] => readFileSync(join(ROOT, path), "utf8").split("\n");
const tableOf = (lines: string[]) => lines.filter((l) => l.startsWith("|"));

it("the judge's header is docs/design.md's decision table, row for row, and the only copy", () => {
  const judge = read("src/reaper/judge.ts")
    .filter((l) => l.startsWith("// |"))
    .map((l) => l.slice(3));
  const readme = read("docs/design.md");
  const start = readme.findIndex((l) => l.startsWith("| # | what is known | verdict |"));
  for (const other of ["README.md", "docs/deploy.md"])
    expect(
      read(other).some((l) => l.startsWith("| # | what is known | verdict |")),
      other,
    ).toBe(false);
  expect(start).toBeGreaterThan(0);
  const end = readme.findIndex((l, i) => i > start && !l.startsWith("|"));
  expect(judge.length).toBeGreaterThanOrEqual(16); // header, rule and 14 rows
  expect(tableOf(readme.slice(start, end))).toEqual(judge);
  // Numbered 1..n in order, as the code's comments cite them.
  expect(judge.slice(2).map((l) => Number(l.split("|")[1]))).toEqual(judge.slice(2).map((_, i) => i + 1));
});
