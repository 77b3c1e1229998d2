// One version, package.json's: every image tag, release tag (`?ref=v…`) and
// kustomize `newTag` in the manifests and docs names it, the base's image is the
// one the release publishes, and CHANGELOG.md has an Unreleased section above
// a heading for it. Bumping the version without the rest fails here.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readRelease } from "../../../scripts/lib/release.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const release = readRelease(ROOT);

/** Where a version is written for users: the manifests, the docs, the Dockerfile, the workflows. */
const files = execFileSync(
  "git",
  ["ls-files", "--cached", "--others", "--exclude-standard", "infra", "docs", "Dockerfile", "Dockerfile.server", "*.md", ".github"],
  {
    cwd: ROOT,
    encoding: "utf8",
  },
)
  .split("\n")
  .filter((f) => f !== "" && f !== "CHANGELOG.md");

const VERSION_MENTIONS = [/arc-reaper-(?:agent|server):(\d+\.\d+\.\d+[\w.-]*)/g, /\?ref=v(\d+\.\d+\.\d+[\w.-]*)/g, /newTag: "?(\d+\.\d+\.\d+[\w.-]*)/g];

/** Every version a text names that is not `version`, as "line: what". */
function driftedVersions(text: string, version: string): string[] {
  const out: string[] = [];
  for (const pattern of VERSION_MENTIONS) {
    for (const m of text.matchAll(pattern)) {
      if (m[1] !== version) out.push(`${text.slice(0, m.index).split("\n").length}: ${m[0]}`);
    }
  }
  return out;
}

describe("one version (package.json's)", () => {
  it("no manifest, doc or workflow names another version", () => {
    expect(files.length).toBeGreaterThan(10);
    let mentions = 0;
    const drifted: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), "utf8");
      mentions += VERSION_MENTIONS.reduce((n, p) => n + [...text.matchAll(p)].length, 0);
      drifted.push(...driftedVersions(text, release.version).map((d) => `${f}:${d}`));
    }
    expect(drifted).toEqual([]);
    expect(mentions).toBeGreaterThanOrEqual(5);
  });

  it("the check can fail: another version in an image, a ref or a newTag is named with its line", () => {
    const text =
      "image: ghcr.io/o/arc-reaper-agent:0.0.9\n- https://github.com/o/arc-reaper//infra/agent?ref=v1.0.0\nnewTag: 0.2.0\nimage: x/arc-reaper-agent:9.9.9\nimage: x/arc-reaper-server:0.1.0";
    expect(driftedVersions(text, "9.9.9")).toEqual(["1: arc-reaper-agent:0.0.9", "5: arc-reaper-server:0.1.0", "2: ?ref=v1.0.0", "3: newTag: 0.2.0"]);
  });

  it("every published image and repository address names the images and repository the release publishes", () => {
    const published = [release.agentImage, release.serverImage].map((i) => i.replace(/:[^:]+$/, ""));
    const others: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), "utf8");
      for (const m of text.matchAll(/ghcr\.io\/[A-Za-z0-9<>_.-]+\/arc-reaper[\w-]*/g))
        if (!published.includes(m[0]) && !m[0].includes("<")) others.push(`${f}: ${m[0]}`);
      for (const m of text.matchAll(/github\.com\/([A-Za-z0-9_.-]+\/arc-reaper)\b/g)) if (m[1] !== release.repository) others.push(`${f}: ${m[0]}`);
    }
    expect(others).toEqual([]);
  });

  it("infra/agent's and infra/server's bases run the images this version's release publishes", () => {
    expect(readFileSync(join(ROOT, "infra/agent/base/deployment.yaml"), "utf8")).toMatch(
      new RegExp(`^\\s+image: ${release.agentImage.replaceAll(".", "\\.")}$`, "m"),
    );
    expect(readFileSync(join(ROOT, "infra/server/base/deployment.yaml"), "utf8")).toMatch(
      new RegExp(`^\\s+image: ${release.serverImage.replaceAll(".", "\\.")}$`, "m"),
    );
  });

  it("CHANGELOG.md (Keep a Changelog): Unreleased first, then this version, each linked", () => {
    const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
    const headings = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1]);
    expect(headings.slice(0, 2)).toEqual(["Unreleased", release.version]);
    expect(changelog).toMatch(new RegExp(`^## \\[${release.version.replaceAll(".", "\\.")}\\] - \\d{4}-\\d{2}-\\d{2}$`, "m"));
    expect(changelog).toContain(`[${release.version}]: https://github.com/${release.repository}/releases/tag/v${release.version}`);
    expect(changelog).toContain(`[Unreleased]: https://github.com/${release.repository}/compare/v${release.version}...HEAD`);
  });

  it("LICENSE is the Apache License 2.0 package.json names", () => {
    expect((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { license: string }).license).toBe("Apache-2.0");
    const license = readFileSync(join(ROOT, "LICENSE"), "utf8");
    expect(license).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    expect(license).toContain("END OF TERMS AND CONDITIONS");
  });
});
