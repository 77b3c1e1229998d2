// npm run setup -- --target cluster, against the GitHub stand-in (the manifest
// flow, done as a browser would), a stand-in kubectl and a stand-in server
// answering /healthz/deep: the App made, the overlay rendered for the
// namespace, host and image and applied, the Secret sent through kubectl's
// stdin, and no Cloudflare request, no secret in argv, output or files.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCloudflareStandin, type CloudflareStandin } from "../../standins/cloudflare/server.ts";
import { createGithubTenant } from "../../standins/github/control.ts";
import { startGithubStandin, type GithubStandin } from "../../standins/github/server.ts";
import { kubectlCalls, writeFakeKubectl } from "./setup-fakes.ts";
import { filesContaining, filesUnder, runSetup } from "./setup-rig.ts";

let work: string;
let bin: string;
let github: GithubStandin;
let cloudflare: CloudflareStandin;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "arc-reaper-setup-cluster-"));
  bin = join(work, "bin");
  mkdirSync(bin);
  writeFakeKubectl(bin);
  [github, cloudflare] = await Promise.all([startGithubStandin(), startCloudflareStandin()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([github?.close(), cloudflare?.close()]);
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

/** The first form on `html`: its action and hidden fields (as setup-manifest.test.ts reads them). */
function form(html: string, base: string): { action: string; fields: URLSearchParams } {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? "";
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields.set(
      m[1] ?? "",
      (m[2] ?? "")
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&"),
    );
  }
  return { action: new URL(unescape(action), base).toString(), fields };
}

describe("npm run setup -- --target cluster", () => {
  it("makes the App, applies the overlay and the Secret through stdin, waits for /healthz/deep, and never calls Cloudflare", async () => {
    const tenant = await createGithubTenant(github.url);
    const log = join(work, "kubectl.jsonl");
    // The server's /healthz/deep passes for the ADMIN_TOKEN of the Secret kubectl was given.
    const stub = createServer((req, res) => {
      const secret = kubectlCalls(log).find((c) => c.stdin.includes('"arc-reaper-secrets"'));
      const admin = secret ? (JSON.parse(secret.stdin) as { stringData: Record<string, string> }).stringData.ADMIN_TOKEN : undefined;
      const ok = admin !== undefined && req.url === "/healthz/deep" && req.headers.authorization === `Bearer ${admin}`;
      res.writeHead(ok ? 200 : 401).end(JSON.stringify({ ok }));
    });
    await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve));
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^(CLOUDFLARE_|CF_|WRANGLER_|KUBECONFIG|FAKE_)/.test(k)) env[k] = v;
    Object.assign(env, {
      PATH: [bin, process.env.PATH ?? ""].join(delimiter),
      HOME: join(work, "home"),
      FAKE_LOG: log,
      FAKE_CONTEXTS: "prod",
      ARC_REAPER_SETUP_GITHUB_COM: `${tenant.webUrl} ${tenant.baseUrl}`,
      // Were anything on this path to call Cloudflare, it would land here.
      CLOUDFLARE_API_BASE_URL: cloudflare.apiBaseUrl,
      CLOUDFLARE_API_TOKEN: "dummy-api-token",
      CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
    });
    const stateDir = join(work, "state");
    const args = ["--target", "cluster", "--org", "octo-org", "--host", "hooks.example.invalid", "--image", "ghcr.io/octo-org/arc-reaper-server:0.2.0"];
    const more = [
      "--namespace",
      "reaper",
      "--namespaces",
      "arc-runners,team-b",
      "--apply",
      "--state-dir",
      stateDir,
      "--health-url",
      `http://127.0.0.1:${(stub.address() as AddressInfo).port}`,
    ];
    const setup = runSetup([...args, ...more], env);
    try {
      const open = await setup.waitFor(/Open (http:\/\/127\.0\.0\.1:\d+\/\S*) and click/, 30_000);
      const page = form(await (await fetch(open[1]!)).text(), open[1]!);
      const shown = await fetch(page.action, { method: "POST", body: page.fields });
      const confirm = form(await shown.text(), page.action);
      const back = await fetch(confirm.action, { method: "POST", body: confirm.fields, redirect: "manual" });
      expect((await fetch(back.headers.get("location") ?? "")).status).toBe(200);
      expect(await setup.exited, setup.output()).toBe(0);
    } finally {
      stub.close();
    }
    const calls = kubectlCalls(log);
    const secretCall = calls.find((c) => c.stdin.includes('"arc-reaper-secrets"'));
    const stringData = (JSON.parse(secretCall?.stdin ?? "{}") as { metadata: { namespace: string }; stringData: Record<string, string> }).stringData;
    expect(Object.keys(stringData).sort()).toEqual(["ADMIN_TOKEN", "GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET"]);
    expect(stringData.GITHUB_APP_PRIVATE_KEY).toBe(tenant.privateKeyPkcs1.trim());
    const apply = calls.find((c) => c.args.includes("-k"));
    const rendered = apply?.rendered ?? "";
    expect(rendered).toContain("image: ghcr.io/octo-org/arc-reaper-server:0.2.0");
    expect(rendered).toContain("host: hooks.example.invalid");
    expect(rendered).toContain(`GITHUB_APP_ID: "${tenant.appId}"`);
    expect(rendered).toContain("REAPER_NAMESPACES: arc-runners,team-b");
    // The settings merged into the base's generated ConfigMap: one of them, named by its hash, which the pod follows.
    const settingsNames = new Set(rendered.match(/arc-reaper-settings[-\w]*/g));
    expect([...settingsNames]).toEqual([expect.stringMatching(/^arc-reaper-settings-[a-z0-9]{10}$/)]);
    expect(rendered).toMatch(/kind: RoleBinding[\s\S]*namespace: team-b[\s\S]*subjects:\n- kind: ServiceAccount\n {2}name: arc-reaper\n {2}namespace: reaper/);
    // No Cloudflare request; no secret on a command line, in the output or in a file.
    expect(cloudflare.calls).toEqual([]);
    const secrets = Object.values(stringData);
    for (const c of calls) for (const s of secrets) expect(c.args.join(" ")).not.toContain(s);
    for (const s of secrets) expect(setup.output()).not.toContain(s);
    expect(filesContaining(filesUnder(stateDir), secrets)).toEqual([]);
    expect(readFileSync(join(stateDir, "server/app/kustomization.yaml"), "utf8")).toContain('"namespace": "reaper"');
  });

  it("refuses without --apply before making anything", async () => {
    const setup = runSetup(["--target", "cluster", "--org", "octo-org", "--host", "h.example.invalid", "--image", "i:1"], {
      ...process.env,
      PATH: [bin, process.env.PATH ?? ""].join(delimiter),
      FAKE_LOG: join(work, "none.jsonl"),
    });
    expect(await setup.exited).toBe(2);
    expect(setup.output()).toMatch(/--apply is needed/);
    expect(kubectlCalls(join(work, "none.jsonl"))).toEqual([]);
  });
});
