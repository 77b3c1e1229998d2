// Every command in README.md and docs/ that acts on the deployment (deploy,
// secrets, tail, rollback, versions, delete) names the one config setup writes:
// the environment [env.production] of the repository's wrangler.toml, no other
// file (no -c, no .setup/wrangler.toml). Each deploy among them, given to
// npm run deploy's check against a config as setup writes it, is let through and
// deploys setup's Worker; the top level's deploy is refused.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../../scripts/lib/local-stack.ts";
import { deployedName, refusal } from "../../../scripts/deploy.ts";
import { renderEnvironment } from "../../../scripts/setup/wrangler-config.ts";

const ENV = "production";
const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const ACTS = /^(?:npx )?wrangler (deploy|secret|tail|rollback|delete|deployments|versions)\b|^npm run deploy\b/;

/** Each command of a code span or a fenced block's line, split at pipes, && and ;, without comments or redirections. */
function commands(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const pieces: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) pieces.push(line.replace(/\s#\s.*$/, ""));
    else for (const m of line.matchAll(/`([^`]+)`/g)) pieces.push(m[1] ?? "");
  }
  return pieces
    .flatMap((p) => p.split(/\s*(?:\|\||\||&&|;)\s*/))
    .map((c) => c.replace(/\s[<>]\s?\S+/g, "").trim())
    .filter((c) => ACTS.test(c));
}

const found = DOCS.flatMap((file) => commands(file).map((command) => ({ file, command })));
// The clone's wrangler.toml after setup (a copy, its paths made absolute for wrangler to read it there).
const config = join(mkdtempSync(join(tmpdir(), "arc-reaper-docs-")), "wrangler.toml");
writeFileSync(
  config,
  renderEnvironment(readFileSync(join(ROOT, "wrangler.toml"), "utf8"), ENV, "arc-reaper", { REAPER_DRY_RUN: "true" }).replace(
    /"(\.\/)?src\//g,
    `"${ROOT}/src/`,
  ),
);

describe("the commands in the docs and the one config", () => {
  it("finds the documented commands (upgrade, dry run off, rollback, uninstall among them)", () => {
    const all = found.map((f) => f.command).join("\n");
    for (const c of ["npm run deploy -- --env production", "npx wrangler rollback --env production", "npx wrangler delete --env production"])
      expect(all).toContain(c);
    expect(found.length).toBeGreaterThan(20);
    process.stdout.write(`\ndocs commands checked against [env.${ENV}]: ${found.length}\n${[...new Set(found.map((f) => f.command))].join("\n")}\n`);
  });

  it("refuses npm run deploy of the top level over the Worker setup made, and names the command", () => {
    expect(refusal([], config)).toMatch(
      /refused\. Worker arc-reaper was made by npm run setup from \[env\.production\][\s\S]*npm run deploy -- --env production$/,
    );
    expect(refusal(["--env", "staging"], config)).toBeUndefined();
    expect(refusal(["--name", "arc-reaper"], config)).toMatch(/refused/);
  });

  it.each(found.map((f) => [f.file, f.command]))("%s: %s names [env.production] and no other config", (_file, command) => {
    // The test suite's own build (`wrangler deploy --dry-run`) uploads nothing.
    if (/--dry-run\b/.test(command)) return;
    expect(command).toMatch(new RegExp(`(^|\\s)--env ${ENV}(\\s|$)`));
    expect(command).not.toMatch(/(^|\s)(-c|--config)(\s|=)|\.setup\/wrangler/);
    if (!/deploy\b/.test(command) || /deployments/.test(command)) return;
    const argv = command.split(/\s+/).slice(command.startsWith("npm run deploy") ? 4 : command.startsWith("npx") ? 3 : 2);
    expect(refusal(argv, config)).toBeUndefined();
    expect(deployedName(argv, config)).toBe("arc-reaper");
  });
});
