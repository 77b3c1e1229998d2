// The App manifest flow's URLs for GitHub Enterprise Server in docs/deploy.md:
// the table in "Supported versions" says them, the commands of steps 1 and 5
// build them from GITHUB_WEB / GITHUB_API, and the two must agree. The
// documented conversion URL is then called on a stand-in GHES host (API under
// /api/v3), and the App it answers is installed at the documented address.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGithubTenant } from "../../standins/github/control.ts";
import { startGithubStandin, type GithubStandin } from "../../standins/github/server.ts";

const guide = readFileSync(fileURLToPath(new URL("../../../docs/deploy.md", import.meta.url).href), "utf8");

function must(re: RegExp, what: string): RegExpExecArray {
  const m = re.exec(guide);
  if (!m) throw new Error(`docs/deploy.md: ${what} not found (${re})`);
  return m;
}

/** The "GitHub.com and GitHub Enterprise Server" table: row title to [GitHub.com, GHES] cells. */
function hostTable(): Map<string, [string, string]> {
  const start = guide.indexOf("### GitHub.com and GitHub Enterprise Server");
  expect(start).toBeGreaterThan(-1);
  const lines = guide.slice(start).split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  const end = lines.findIndex((l, i) => i > first && !l.startsWith("|"));
  const rows = lines.slice(first + 2, end); // past the header and its |---| line
  const out = new Map<string, [string, string]>();
  for (const row of rows) {
    const [title = "", com = "", ghes = ""] = row
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    out.set(title, [com, ghes]);
  }
  return out;
}

/** The one URL in backticks of a cell (after an optional method). */
function urlOf(cell: string): string {
  const m = /`(?:POST )?(https:\/\/[^`]+)`/.exec(cell);
  if (!m) throw new Error(`docs/deploy.md: no URL in the table cell ${JSON.stringify(cell)}`);
  return m[1] ?? "";
}

// The variables of step 1, for GitHub.com (their values) and GHES (their comments).
const web = must(/^GITHUB_WEB=(\S+)\s+# GitHub Enterprise Server: (\S+)$/m, "GITHUB_WEB=");
const api = must(/^GITHUB_API=(\S+)\s+# GitHub Enterprise Server: (\S+)$/m, "GITHUB_API=");
const hosts = { com: { web: web[1] ?? "", api: api[1] ?? "" }, ghes: { web: web[2] ?? "", api: api[2] ?? "" } };

// What the commands build from them.
const formAction = must(/action="\$\{process\.argv\[1\]\}(\/organizations\/)\$\{process\.argv\[2\]\}(\/settings\/apps\/new)"/, "the manifest form's action");
must(/^\s*' "\$GITHUB_WEB" "\$ORG"$/m, "the form script's arguments");
const curl = must(/curl -fsS -X POST "\$GITHUB_API(\/app-manifests\/)\$CODE(\/conversions)"/, "the conversion curl");
const install = must(
  /Open `\$GITHUB_WEB(\/apps\/<slug>\/installations\/new)` on GitHub\.com, or\n`(https:\/\/HOST\/github-apps\/<slug>\/installations\/new)` on GitHub Enterprise Server/,
  "step 5's install address",
);
const built = (h: { web: string; api: string }, ghes: boolean) => ({
  create: `${h.web}${formAction[1]}ORG${formAction[2]}`,
  exchange: `${h.api}${curl[1]}{code}${curl[2]}`,
  install: ghes ? (install[2] ?? "") : `${h.web}${install[1]}`,
});

let standin: GithubStandin;
beforeAll(async () => {
  standin = await startGithubStandin();
});
afterAll(async () => {
  await standin.close();
});

describe("docs/deploy.md: GitHub Enterprise Server's manifest flow", () => {
  it("gives GHES the API at https://HOST/api/v3, and the table's URLs are what steps 1 and 5 build", () => {
    expect(hosts).toEqual({ com: { web: "https://github.com", api: "https://api.github.com" }, ghes: { web: "https://HOST", api: "https://HOST/api/v3" } });
    const table = hostTable();
    const column = (i: 0 | 1) => ({
      api: urlOf(table.get("`GITHUB_API_URL`")?.[i] ?? ""),
      create: urlOf(table.get("Create the App from the manifest (step 1)")?.[i] ?? ""),
      exchange: urlOf(table.get("Exchange the manifest code (step 1)")?.[i] ?? ""),
      install: urlOf(table.get("Install the App (step 5)")?.[i] ?? ""),
    });
    expect(column(1)).toEqual({ api: hosts.ghes.api, ...built(hosts.ghes, true) });
    expect(column(0)).toEqual({ api: hosts.com.api, ...built(hosts.com, false) });
    expect(column(1)).toEqual({
      api: "https://HOST/api/v3",
      create: "https://HOST/organizations/ORG/settings/apps/new",
      exchange: "https://HOST/api/v3/app-manifests/{code}/conversions",
      install: "https://HOST/github-apps/<slug>/installations/new",
    });
    // The settings tables and wrangler.toml's comment say the same API address.
    expect(guide).toContain("For GitHub Enterprise Server: `https://HOST/api/v3`");
    expect(guide).toMatch(/^GITHUB_API_URL = "https:\/\/api\.github\.com"\s+# GitHub Enterprise Server: "https:\/\/HOST\/api\/v3"$/m);
  });

  it("exchanges a code at the documented URL on a GHES host, once, and the App it answers is installed at the documented address", async () => {
    const t = await createGithubTenant(standin.url, { ghes: true });
    const webUrl = t.webUrl ?? "";
    expect(t.baseUrl).toBe(`${webUrl}/api/v3`);
    await t.addManifestCode("a1b2c3");
    // GITHUB_API as step 1 sets it for GHES, with HOST being the stand-in's host.
    const githubApi = hosts.ghes.api.replace("https://HOST", webUrl);
    const url = built({ web: webUrl, api: githubApi }, true).exchange.replace("{code}", "a1b2c3");
    const res = await fetch(url, { method: "POST" });
    expect(res.status).toBe(201);
    const app = (await res.json()) as { id: number; slug: string; html_url: string; pem: string; webhook_secret: string };
    expect(app.id).toBe(t.appId);
    expect(app.pem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(app.webhook_secret).toMatch(/^[0-9a-f]{40}$/);
    expect(`${app.html_url}/installations/new`).toBe(built(hosts.ghes, true).install.replace("https://HOST", webUrl).replace("<slug>", app.slug));
    expect((await fetch(url, { method: "POST" })).status).toBe(404); // a code works once
    expect((await t.calls()).map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([
      "POST /app-manifests/a1b2c3/conversions 201",
      "POST /app-manifests/a1b2c3/conversions 404",
    ]);
  });
});
