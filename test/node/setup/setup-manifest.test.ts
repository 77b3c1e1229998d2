// The manifest flow of npm run setup against GitHub's web and API stand-ins, as
// GitHub.com serves them (the API at api.github.com's place) and as a GitHub
// Enterprise Server does (the API under /api/v3), for an organization's App and
// a user's: the page's form goes to GitHub's new-App page, GitHub's "Create"
// redirects back to setup's server with a code and the state, and the code is
// exchanged once. Plain HTTP, as a browser would do it (setup.test.ts clicks it in Chromium).
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { githubPlace } from "../../../scripts/setup/github-urls.ts";
import { startManifestFlow } from "../../../scripts/setup/manifest-page.ts";
import { createGithubTenant } from "../../standins/github/control.ts";
import { startGithubStandin, type GithubStandin } from "../../standins/github/server.ts";

let github: GithubStandin;
beforeAll(async () => {
  github = await startGithubStandin();
}, 60_000);
afterAll(async () => {
  await github?.close();
});

/** The first form on `html`: its action and hidden fields. */
function form(html: string, base: string): { action: string; fields: URLSearchParams } {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? "";
  const unescapeHtml = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields.set(m[1] ?? "", unescapeHtml(m[2] ?? ""));
  return { action: new URL(unescape(action), base).toString(), fields };
}

describe.each([
  ["GitHub.com", "org", false],
  ["GitHub.com", "user", false],
  ["GitHub Enterprise Server", "org", true],
] as const)("setup's manifest flow on %s, for an %s's App", (_label, accountType, ghes) => {
  it("posts the manifest, comes back with a code and its state, and exchanges it once", async () => {
    const tenant = await createGithubTenant(github.url, ghes ? { ghes: true } : {});
    const web = tenant.webUrl ?? "";
    const place = ghes ? githubPlace(web) : githubPlace("https://github.com", undefined, { web, api: tenant.baseUrl });
    expect(place.api).toBe(tenant.baseUrl);
    const flow = await startManifestFlow({
      place,
      accountType,
      org: "octo-org",
      manifest: {
        name: "arc-reaper-octo-org",
        url: "https://r.example.workers.dev",
        hook_attributes: { url: "https://r.example.workers.dev/webhook", active: true },
        public: false,
        default_permissions: { actions: "read" },
        default_events: ["workflow_job", "workflow_run"],
      },
    });
    try {
      const page = await (await fetch(flow.url)).text();
      const post = form(page, flow.url);
      expect(post.action).toMatch(
        accountType === "org" ? /\/organizations\/octo-org\/settings\/apps\/new\?state=[0-9a-f]{32}$/ : /\/settings\/apps\/new\?state=[0-9a-f]{32}$/,
      );
      expect(post.action.startsWith(web)).toBe(true);
      const shown = await fetch(post.action, { method: "POST", body: post.fields });
      expect(shown.status).toBe(200);
      const confirm = form(await shown.text(), post.action);
      const back = await fetch(confirm.action, { method: "POST", body: confirm.fields, redirect: "manual" });
      expect(back.status).toBe(302);
      const location = back.headers.get("location") ?? "";
      expect(location.startsWith(`${flow.url}created?`)).toBe(true);
      // A forged answer (another state) is refused and does not use the code.
      const forged = new URL(location);
      forged.searchParams.set("state", "0".repeat(32));
      expect((await fetch(forged)).status).toBe(400);
      expect((await fetch(location)).status).toBe(200);
      const made = await flow.done;
      expect(made).toMatchObject({ id: tenant.appId, slug: `arc-reaper-${tenant.appId}`, pem: tenant.privateKeyPkcs1 });
      expect(made.webhookSecret).toMatch(/^[0-9a-f]{40}$/);
      expect((await fetch(location)).status).toBe(409);
      const apps = await tenant.manifestApps();
      expect(apps).toEqual([expect.objectContaining({ owner: accountType === "org" ? "octo-org" : null })]);
      expect(String(apps[0]?.manifest["redirect_url"]).startsWith(flow.url.replace(/\/$/, ""))).toBe(true);
      const exchanges = (await tenant.calls()).filter((c) => c.path.startsWith("/app-manifests/"));
      expect(exchanges).toEqual([expect.objectContaining({ method: "POST", status: 201 })]);
    } finally {
      await flow.close();
    }
  });
});

/** A GET with the Host header as given (fetch would set its own). */
function get(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("setup's manifest page and another local caller", () => {
  it("gives nothing to a caller without the path secret or with another Host, and keeps the code for the real return", async () => {
    const tenant = await createGithubTenant(github.url, { ghes: true });
    const web = tenant.webUrl ?? "";
    const flow = await startManifestFlow({
      place: githubPlace(web),
      accountType: "org",
      org: "octo-org",
      manifest: { name: "arc-reaper-octo-org", url: "https://r.example.workers.dev", public: false },
    });
    try {
      const origin = new URL(flow.url).origin;
      const host = new URL(flow.url).host;
      const real = await get(flow.url, host);
      const state = /state=([0-9a-f]{32})/.exec(real.body)?.[1] ?? "";
      expect(state).toMatch(/^[0-9a-f]{32}$/);
      // The root, a guessed path and the right path under another Host (DNS rebinding) show no state.
      for (const [url, h] of [
        [`${origin}/`, host],
        [`${origin}/created`, host],
        [`${origin}/${"A".repeat(32)}/`, host],
        [flow.url, `localhost:${flow.port}`],
        [flow.url, "evil.example"],
      ] as const) {
        const r = await get(url, h);
        expect({ url, h, status: r.status }).toEqual({ url, h, status: 404 });
        expect(r.body).not.toContain(state);
      }
      expect(flow.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[\w-]{32}\/$/);
      expect(flow.port).toBe(Number(new URL(flow.url).port));
      // Whoever knows the state but not the secret cannot spend a code: it is not exchanged.
      expect((await get(`${origin}/created?code=stolen&state=${state}`, host)).status).toBe(404);
      expect((await tenant.calls()).filter((c) => c.path.startsWith("/app-manifests/"))).toEqual([]);
      // The redirect_url GitHub is given carries the same secret.
      const manifest =
        /name="manifest" value="([^"]*)"/
          .exec(real.body)?.[1]
          ?.replace(/&quot;/g, '"')
          .replace(/&amp;/g, "&") ?? "{}";
      expect((JSON.parse(manifest) as { redirect_url: string }).redirect_url).toBe(`${flow.url}created`);
    } finally {
      await flow.close();
    }
  });
});
