// npm run setup -- --target cluster, against the GitHub stand-in (the manifest
// flow, done as a browser would), a stand-in kubectl (its port-forward reaches
// a stand-in server answering /healthz/deep) : the plan shown first, the App
// made, the overlay written as YAML with its bases by URL at the tag, rendered
// and applied, the Secret applied server-side through kubectl's stdin, the
// health check through setup's own port-forward, and no Cloudflare request, no
// secret in argv, output, files or an annotation. --dry-run touches nothing;
// without --yes and a terminal, setup refuses after its plan.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readRelease } from "../../../scripts/lib/release.ts";
import { ROOT } from "../../../scripts/lib/local-stack.ts";
import { startCloudflareStandin, type CloudflareStandin } from "../../standins/cloudflare/server.ts";
import { createGithubTenant } from "../../standins/github/control.ts";
import { startGithubStandin, type GithubStandin } from "../../standins/github/server.ts";
import { kubectlCalls, writeFakeKubectl } from "./setup-fakes.ts";
import { filesContaining, filesUnder, runSetup } from "./setup-rig.ts";

const release = readRelease(ROOT);
/** kubectl verbs that change a cluster or start a tunnel. */
const CHANGES = ["apply", "create", "delete", "patch", "replace", "rollout", "port-forward"];

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
  it("shows its plan, makes the App, writes and applies the overlay, the Secret server-side, checks /healthz/deep itself, never calls Cloudflare", async () => {
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
      FAKE_API_SERVER: "https://prod.k8s.example.invalid:6443",
      FAKE_HEALTH_URL: `http://127.0.0.1:${(stub.address() as AddressInfo).port}`,
      ARC_REAPER_SETUP_GITHUB_COM: `${tenant.webUrl} ${tenant.baseUrl}`,
      // Were anything on this path to call Cloudflare, it would land here.
      CLOUDFLARE_API_BASE_URL: cloudflare.apiBaseUrl,
      CLOUDFLARE_API_TOKEN: "dummy-api-token",
      CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
    });
    const stateDir = join(work, "state");
    const args = ["--target", "cluster", "--org", "octo-org", "--host", "hooks.example.invalid", "--image", "ghcr.io/octo-org/arc-reaper-server:0.2.0"];
    const more = ["--namespace", "reaper", "--namespaces", "arc-runners,team-b", "--yes", "--state-dir", stateDir];
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
    // The plan, before anything was made: the context and its API server, the namespaces, host and image.
    const plan = setup.output().slice(0, setup.output().indexOf("== 1."));
    for (const part of [
      "kubectl context prod (API server https://prod.k8s.example.invalid:6443)",
      "Namespace reaper",
      "arc-runners, team-b",
      "https://hooks.example.invalid/webhook",
      "ghcr.io/octo-org/arc-reaper-server:0.2.0",
    ])
      expect(plan).toContain(part);
    // The Secret server-side (no last-applied annotation to copy its values into); the overlay's objects through stdin.
    expect(secretCall?.args).toEqual(expect.arrayContaining(["apply", "--server-side", "-f", "-"]));
    const apply = calls.find((c) => c.args.includes("apply") && !c.args.includes("--server-side"));
    expect(apply?.args).toEqual(["--context", "prod", "apply", "-f", "-"]);
    const rendered = apply?.stdin ?? "";
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
    // The overlay is YAML, ready to commit: its bases by URL at this release's tag, nothing of the clone's paths.
    const written = parseYaml(readFileSync(join(stateDir, "server/server/kustomization.yaml"), "utf8")) as { namespace: string; resources: string[] };
    expect(written.namespace).toBe("reaper");
    expect(written.resources).toEqual([`https://github.com/${release.repository}//infra/server/base?ref=v${release.version}`, "ingress.yaml"]);
    // The health check went through setup's own port-forward, which it stopped, after the rollout.
    const order = calls.map((c) => c.args.find((x) => ["apply", "rollout", "port-forward"].includes(x))).filter(Boolean);
    expect(order).toEqual(["apply", "apply", "rollout", "port-forward"]);
  });

  it("--dry-run shows the plan and the YAML, and makes, writes and applies nothing", async () => {
    const log = join(work, "dry-run.jsonl");
    const stateDir = join(work, "dry-run-state");
    const setup = runSetup(
      ["--target", "cluster", "--org", "octo-org", "--host", "h.example.invalid", "--namespaces", "team-a", "--dry-run", "--state-dir", stateDir],
      {
        ...process.env,
        PATH: [bin, process.env.PATH ?? ""].join(delimiter),
        FAKE_LOG: log,
        FAKE_CONTEXTS: "staging",
      },
    );
    expect(await setup.exited, setup.output()).toBe(0);
    expect(setup.output()).toContain("kubectl context staging");
    expect(setup.output()).toContain(`image: ${release.serverImage}`);
    expect(setup.output()).toMatch(/kind: RoleBinding[\s\S]*namespace: team-a/);
    expect(setup.output()).not.toContain("Open ");
    expect(kubectlCalls(log).filter((c) => CHANGES.some((verb) => c.args.includes(verb)))).toEqual([]);
    expect(existsSync(stateDir)).toBe(false);
  });

  it("--help says what each flag does", async () => {
    const setup = runSetup(["--target", "cluster", "--help"], { ...process.env, PATH: [bin, process.env.PATH ?? ""].join(delimiter) });
    expect(await setup.exited).toBe(0);
    for (const flag of ["--namespace NAMESPACE", "--namespaces NAMESPACES", "--dry-run", "--yes, -y", "--out OUT", "--image IMAGE"])
      expect(setup.output()).toMatch(new RegExp(`^  ${flag.replace(/[-]/g, "\\-")}\\s+\\S.{10,}`, "m"));
  });

  it("without --yes and no terminal to ask on, shows its plan and refuses before making anything", async () => {
    const setup = runSetup(["--target", "cluster", "--org", "octo-org", "--host", "h.example.invalid", "--image", "i:1"], {
      ...process.env,
      PATH: [bin, process.env.PATH ?? ""].join(delimiter),
      FAKE_LOG: join(work, "none.jsonl"),
      FAKE_CONTEXTS: "prod",
    });
    expect(await setup.exited).toBe(2);
    expect(setup.output()).toContain("== The plan");
    expect(setup.output()).toMatch(/--yes is needed when setup cannot ask/);
    expect(kubectlCalls(join(work, "none.jsonl")).filter((c) => CHANGES.some((verb) => c.args.includes(verb)))).toEqual([]);
  });
});
