// The operator's documents hold together: every relative link in README.md and
// docs/*.md names a file or folder that exists, every #anchor a heading that
// exists (GitHub's anchors), the deploy guide's step list is its numbered
// sections in order, and every placeholder host is in the reserved .invalid
// domain (RFC 2606), so a value nobody replaced can never reach a real host.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ARC_VERSIONS } from "../../standins/kube/arc-versions.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks, line by line (fenced lines become empty, so line numbers hold). */
function prose(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split("\n").map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === undefined) fence = m[1]![0]!.repeat(m[1]!.length);
      else if (m[1]!.startsWith(fence)) fence = undefined;
      return "";
    }
    return fence === undefined ? line : "";
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // [text](url) -> text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/`/g, "");
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

interface Link {
  line: number;
  target: string;
}

function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  prose(markdown).forEach((raw, i) => {
    const line = raw.replace(/`[^`]*`/g, "``"); // code spans are not links
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: m[1]! });
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (def) links.push({ line: i + 1, target: def[1]! });
  });
  return links;
}

/** Every way a link of `file` fails to resolve, in words. */
function brokenLinks(file: string, markdown: string, readDoc: (path: string) => string | undefined): string[] {
  const problems: string[] = [];
  for (const { line, target } of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check
    const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
    const path = pathPart === "" ? file : join(dirname(file), decodeURIComponent(pathPart));
    const where = `${file}:${line}: ${target}`;
    if (relative(ROOT, resolve(ROOT, path)).startsWith("..")) {
      problems.push(`${where}: leaves the repository`);
      continue;
    }
    const text = pathPart === "" ? markdown : path.endsWith(".md") ? readDoc(path) : undefined;
    if (pathPart !== "" && text === undefined && !existsSync(join(ROOT, path))) {
      problems.push(`${where}: no such file or folder`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (text === undefined) {
      problems.push(`${where}: an anchor into something that is not a Markdown file`);
    } else if (!anchorsOf(text).has(anchor)) {
      problems.push(`${where}: no heading with the anchor #${anchor}`);
    }
  }
  return problems;
}

const readDoc = (path: string): string | undefined => {
  const full = join(ROOT, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, "utf8") : undefined;
};

describe("the link checker itself", () => {
  it("makes GitHub's anchors", () => {
    expect(slug("5. Cloudflare: settings, secrets, deploy")).toBe("5-cloudflare-settings-secrets-deploy");
    expect(slug("7. The ARC backstop: activeDeadlineSeconds")).toBe("7-the-arc-backstop-activedeadlineseconds");
    expect(slug("`REAPER_DRY_RUN` and the [pause](x.md)")).toBe("reaper_dry_run-and-the-pause");
    expect(slug("Upgrade & roll back")).toBe("upgrade--roll-back");
    expect([...anchorsOf("## Notes\n\n## Notes\n```\n## not a heading\n```\n")]).toEqual(["notes", "notes-1"]);
  });

  it("finds a missing file, a missing heading, and an anchor into a file that has no headings", () => {
    const doc = [
      "See [the guide](docs/deploy.md#1-create-the-github-app), [here](#top), [gone](docs/nope.md),",
      "[wrong](docs/deploy.md#no-such-step), [infra](infra/kubernetes), [json](infra/github-app/manifest.json#x),",
      "`[not a link](nowhere.md)` and [web](https://github.invalid/x#y).",
      "```",
      "[inside a fence](nowhere.md)",
      "```",
      "# Top",
    ].join("\n");
    expect(brokenLinks("README.md", doc, readDoc)).toEqual([
      "README.md:1: docs/nope.md: no such file or folder",
      "README.md:2: docs/deploy.md#no-such-step: no heading with the anchor #no-such-step",
      "README.md:2: infra/github-app/manifest.json#x: an anchor into something that is not a Markdown file",
    ]);
  });
});

describe.each(DOCS)("%s", (file) => {
  const markdown = readFileSync(join(ROOT, file), "utf8");

  it("has links, and every relative link and #anchor resolves", () => {
    expect(linksOf(markdown).length).toBeGreaterThan(0);
    expect(brokenLinks(file, markdown, readDoc)).toEqual([]);
  });

  it("uses the reserved .invalid domain for every placeholder host", () => {
    expect(placeholderHosts(markdown)).toEqual([]);
  });
});

// Hosts that are real and meant: GitHub, Cloudflare, Kubernetes' in-cluster name, this machine.
const REAL_HOSTS = [
  "github.com",
  "api.github.com",
  "docs.github.com",
  "github.blog",
  "developers.cloudflare.com",
  "dash.cloudflare.com",
  "ghcr.io",
  // Sigstore's issuer for GitHub Actions' identity and SPDX's predicate type, in the commands that verify an image.
  "token.actions.githubusercontent.com",
  "spdx.dev",
  "kubernetes.default.svc",
  "localhost",
  "127.0.0.1",
];
/** Hosts in URLs that are neither real nor .invalid: a placeholder that looks like a real host. */
function placeholderHosts(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\bhttps?:\/\/([^/\s)"'`>\]:]+)/g)) {
    const host = m[1]!;
    if (REAL_HOSTS.includes(host) || host.endsWith(".invalid")) continue;
    if (/^[A-Z][A-Z0-9_-]*$/.test(host) || host.includes("<") || host.includes("$")) continue; // HOST, <host>, $URL: a template, not a host
    out.push(host);
  }
  for (const m of text.matchAll(/(?<![\w./-])(?:[\w-]+\.)*example\.(?:com|org|net)\b/g)) out.push(m[0]); // outside URLs too
  return out;
}

describe("placeholders", () => {
  it("the checker refuses a placeholder that looks real, and lets templates and .invalid through", () => {
    expect(
      placeholderHosts("https://kube.example.com/x https://arc-reaper.example.workers.dev http://HOST/api/v3 https://kube.example.invalid https://$HOST/a"),
    ).toEqual(["kube.example.com", "arc-reaper.example.workers.dev"]);
    expect(placeholderHosts("a hostname such as kube.example.com, or kube.example.invalid")).toEqual(["kube.example.com"]);
  });

  it("the GitHub App manifest and the monitoring manifests use only .invalid placeholders", () => {
    for (const file of ["infra/github-app/manifest.json", "infra/monitoring/scrape-config.yaml"]) {
      expect(placeholderHosts(readFileSync(join(ROOT, file), "utf8")), file).toEqual([]);
    }
    const manifest = JSON.parse(readFileSync(join(ROOT, "infra/github-app/manifest.json"), "utf8")) as { url: string; hook_attributes: { url: string } };
    expect(new URL(manifest.url).hostname).toMatch(/\.invalid$/);
    expect(new URL(manifest.hook_attributes.url).hostname).toMatch(/\.invalid$/);
  });
});

describe("docs/deploy.md", () => {
  const guide = readFileSync(join(ROOT, "docs/deploy.md"), "utf8");
  const lines = prose(guide);
  const numbered = lines.flatMap((l) => {
    const m = /^## (\d+)\. (.*)$/.exec(l);
    return m ? [{ n: Number(m[1]), anchor: slug(`${m[1]}. ${m[2]}`) }] : [];
  });

  it("numbers its sections 1, 2, 3, ... in order", () => {
    expect(numbered.length).toBeGreaterThan(5);
    expect(numbered.map((s) => s.n)).toEqual(numbered.map((_, i) => i + 1));
  });

  it("has a step list that links every numbered section, once, in order", () => {
    const start = lines.findIndex((l) => /^The steps, in order:/.test(l));
    expect(start).toBeGreaterThan(-1);
    const list: string[] = [];
    for (const l of lines.slice(start + 1)) {
      if (l.trim() === "" && list.length === 0) continue;
      if (!/^\d+\. /.test(l)) break;
      list.push(l);
    }
    expect(list.map((l) => Number(/^(\d+)\./.exec(l)![1]))).toEqual(list.map((_, i) => i + 1));
    const linked = list.flatMap((l) => [...l.matchAll(/\]\(#(\d+-[^)]+)\)/g)].map((m) => m[1]!));
    expect(linked).toEqual(numbered.map((s) => s.anchor));
    // Step N of the list is section N.
    list.forEach((l, i) => expect(l, l).toContain(`](#${numbered[i]!.anchor})`));
  });

  it("installs the App only after /healthz answers, and never creates a KV namespace", () => {
    const install = numbered.findIndex((s) => /install-the-app/.test(s.anchor));
    const deploy = numbered.findIndex((s) => /deploy/.test(s.anchor));
    expect(install, "a section that installs the App").toBeGreaterThan(-1);
    expect(deploy, "a section that deploys").toBeGreaterThan(-1);
    expect(install).toBeGreaterThan(deploy);
    const installSection = guide.slice(guide.indexOf(`## ${install + 1}. `), guide.indexOf(`## ${install + 2}. `));
    expect(installSection).toMatch(/\/healthz/);
    expect(guide).not.toMatch(/kv namespace create/);
  });
});

describe("the Settings tables", () => {
  const table = (markdown: string): string => {
    const start = markdown.indexOf("| Name | Default | Meaning |");
    if (start < 0) throw new Error("no Settings table");
    const end = markdown.indexOf("\n\n", start);
    return markdown.slice(start, end).replace(/\]\(docs\/deploy\.md#/g, "](#");
  };
  const names = (t: string): string[] =>
    t
      .split("\n")
      .slice(2)
      .flatMap((row) => [...row.split("|")[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!));
  const guide = table(readFileSync(join(ROOT, "docs/deploy.md"), "utf8"));

  it("name every setting src/config/settings.ts reads, and no other", () => {
    // Every quoted SETTING_NAME in the settings reader is a setting it reads (or names in an error).
    const source = readFileSync(join(ROOT, "src/config/settings.ts"), "utf8");
    const read = new Set([...source.matchAll(/"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"/g)].map((m) => m[1]!));
    expect(read.size).toBeGreaterThan(15);
    expect(new Set(names(guide))).toEqual(read);
  });
});

describe("the supported ARC versions table", () => {
  const guide = readFileSync(join(ROOT, "docs/deploy.md"), "utf8");
  const start = guide.indexOf("| ARC | Supported | Exercised by `npm test` |");
  const rows = guide
    .slice(start, guide.indexOf("\n\n", start))
    .split("\n")
    .slice(2)
    .map((r) =>
      r
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim()),
    );

  it("names, as exercised, exactly the ARC versions whose CRD the Kubernetes stand-in serves", () => {
    expect(start).toBeGreaterThan(-1);
    const exercised = rows.filter((r) => !/not exercised/.test(r[1] ?? "")).map((r) => r[2] ?? "");
    const named = exercised.map((cell) => /\*\*(\d+\.\d+\.\d+)\*\*/.exec(cell)?.[1] ?? (/^its CRD/.test(cell) ? "master" : "?"));
    const served = ARC_VERSIONS.map((v) => (v.startsWith("master-") ? "master" : v));
    expect(named).toEqual(served);
    // The master row names the fixture's date; every exercised row says its CRD is served byte for byte.
    expect(rows.map((r) => r[0])).toContain(
      `upstream \`master\` of ${ARC_VERSIONS.find((v) => v.startsWith("master-"))?.slice("master-".length)} (unreleased)`,
    );
    for (const cell of exercised) expect(cell).toMatch(/CRD/);
    // A row that is not exercised says so in both columns.
    for (const r of rows.filter((x) => /not exercised/.test(x[1] ?? ""))) expect(r[2]).toMatch(/^none/);
  });
});
