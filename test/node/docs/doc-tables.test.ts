// Each of the operator's tables has one source, and a copy in a second document
// fails here: the settings and the supported versions are in docs/deploy.md, the
// routes (and the decision table, decision-table.test.ts) in docs/design.md;
// README.md links to them. The routes table must name every route src/ registers.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

describe("the Settings table", () => {
  it("is one table, in docs/deploy.md: README.md and docs/design.md link to it", () => {
    for (const other of ["README.md", "docs/design.md"]) expect(readFileSync(join(ROOT, other), "utf8"), other).not.toContain("| Name | Default | Meaning |");
    expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain("(docs/deploy.md#settings)");
  });
});

describe("the routes table", () => {
  const design = readFileSync(join(ROOT, "docs/design.md"), "utf8");
  const start = design.indexOf("| route | what |");
  const rows = design.slice(start, design.indexOf("\n\n", start));

  it("is in docs/design.md alone, and names every route the Worker registers", () => {
    expect(start).toBeGreaterThan(-1);
    for (const other of ["README.md", "docs/deploy.md"]) expect(readFileSync(join(ROOT, other), "utf8"), other).not.toContain("| route | what |");
    const registered = new Set<string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (/\.tsx?$/.test(e.name))
          for (const m of readFileSync(join(ROOT, dir, e.name), "utf8").matchAll(/\.(get|post)\("(\/[^"]*)"/g))
            registered.add(`${m[1]?.toUpperCase()} ${m[2]}`);
      }
    };
    walk("src");
    expect(registered.size).toBeGreaterThan(10);
    for (const r of registered) {
      const [method, path] = r.split(" ") as [string, string];
      const shown = path.replace(/:(\w+)/g, "{$1}");
      expect(rows, r).toMatch(new RegExp(`\`${method} [^\`]*${shown.replace(/[{}/]/g, "\\$&")}`));
    }
  });
});

describe("the supported versions tables", () => {
  it("are in docs/deploy.md alone", () => {
    for (const other of ["README.md", "docs/design.md"])
      expect(readFileSync(join(ROOT, other), "utf8"), other).not.toContain("| ARC | Supported | Exercised by `npm test` |");
  });
});
