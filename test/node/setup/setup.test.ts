// `npm run setup` end to end, as a user runs it, against stand-ins: GitHub's web
// (the manifest form) and API (the code exchange, under /api/v3 as a GitHub
// Enterprise Server serves it), Cloudflare's API reached through wrangler's own
// CLOUDFLARE_API_BASE_URL, and Kubernetes. Chromium clicks the buttons. The
// "deployment" the final check waits for is `wrangler dev` of the config setup
// deployed, with the secrets the Cloudflare stand-in received, and `npm run
// agent` against the Kubernetes stand-in. The first run is stopped while it
// waits for the browser and a second one resumes; a third changes nothing.
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addAgentServiceAccount } from "../../../scripts/lib/local-agent.ts";
import { freePort, ROOT, waitFor } from "../../../scripts/lib/local-stack.ts";
import { createGithubTenant, type GithubTenant } from "../../standins/github/control.ts";
import { startGithubStandin, type GithubStandin } from "../../standins/github/server.ts";
import { startCloudflareStandin, type CloudflareStandin } from "../../standins/cloudflare/server.ts";
import { createKubeTenant, type KubeTenant } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { pickChromium } from "../admin/pick-chromium.ts";
import { configCopy, filesContaining, filesUnder, runSetup } from "./setup-rig.ts";

const NAME = "arc-reaper-e2e";
const CLUSTER = "eu-west";
const NS = "arc-runners";
const SECRETS = ["GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET", "ADMIN_TOKEN", "METRICS_TOKEN", "AGENT_TOKEN"];

let github: GithubStandin;
let cloudflare: CloudflareStandin;
let kubeStandin: KubeStandin;
let tenant: GithubTenant;
let kube: KubeTenant;
let work: string;
let browser: BrowserContext | undefined;
const children: ChildProcess[] = [];

function env(): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(CLOUDFLARE_|CF_|WRANGLER_|KUBECONFIG)/.test(k)) base[k] = v;
  return {
    ...base,
    HOME: join(work, "home"),
    XDG_CONFIG_HOME: join(work, "home/.config"),
    KUBECONFIG: join(work, "no-kubeconfig"),
    CLOUDFLARE_API_BASE_URL: cloudflare.apiBaseUrl,
    CLOUDFLARE_API_TOKEN: "dummy-api-token",
    CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    CI: "true",
    NO_COLOR: "1",
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // gone
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "arc-reaper-setup-"));
  [github, cloudflare, kubeStandin] = await Promise.all([startGithubStandin(), startCloudflareStandin(), startKubeStandin()]);
  tenant = await createGithubTenant(github.url, { ghes: true });
  kube = await createKubeTenant(kubeStandin.url, { namespaces: [NS] });
  const chrome = await pickChromium();
  browser = await chromium.launchPersistentContext(join(work, "chromium"), {
    executablePath: chrome.executablePath,
    headless: true,
    args: chrome.args,
    timeout: 30_000,
  });
  browser.setDefaultTimeout(20_000);
}, 120_000);

afterAll(async () => {
  for (const c of children) killGroup(c, "SIGKILL");
  await browser?.close().catch(() => undefined);
  await Promise.all([github?.close(), cloudflare?.close(), kubeStandin?.close()]);
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
}, 30_000);

describe("npm run setup: bad answers", () => {
  it.each([
    [["--org", "octo-org/octo-repo"], /--org "octo-org\/octo-repo" has a slash/],
    [["--org", "octo-org", "--github-url", "http://github.example.com"], /--github-url "http:\/\/github.example.com" is http:\/\/: .*https:\/\//],
    [["--org", "octo-org", "--clusters", "eu_west"], /--clusters: "eu_west" is not a DNS label/],
  ])("%j: a clear error, exit code 2, and nothing created", async (bad, message) => {
    const stateDir = join(work, `bad-${Math.random().toString(16).slice(2)}`);
    const before = cloudflare.calls.length;
    const run = runSetup(["--yes", "--state-dir", stateDir, ...bad], env());
    expect(await run.exited).toBe(2);
    expect(run.output()).toMatch(message);
    expect(run.output()).toMatch(/Nothing was created/);
    expect(existsSync(stateDir)).toBe(false);
    expect(cloudflare.calls.length).toBe(before);
  });
});

describe("npm run setup: what it did not make", () => {
  it("names a Worker of that name that setup did not make, keeps it, and stops", async () => {
    const name = "someone-elses-worker";
    cloudflare.scripts.set(name, {
      name,
      metadata: { main_module: "theirs.js" },
      modules: ["theirs.js"],
      migrationTag: null,
      migrations: [],
      secrets: new Map([["THEIRS", "x"]]),
      schedules: [],
      workersDev: true,
      uploads: 1,
    });
    const stateDir = join(work, "theirs");
    const run = runSetup(["--yes", "--org", "octo-org", "--github-url", tenant.webUrl ?? "", "--name", name, "--state-dir", stateDir], env());
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/A Worker named someone-elses-worker already exists on this Cloudflare account and setup did not make it: kept\. .*--replace/);
    expect(cloudflare.scripts.get(name)).toMatchObject({ uploads: 1, metadata: { main_module: "theirs.js" } });
    expect([...(cloudflare.scripts.get(name)?.secrets.keys() ?? [])]).toEqual(["THEIRS"]);
    expect(await tenant.manifestApps()).toEqual([]);
  });
});

describe("npm run setup: from nothing to a checked dry run", () => {
  it("is stopped, resumes, passes the check, and a re-run changes nothing", async () => {
    const t0 = Date.now();
    const stateDir = join(work, "state");
    // The clone's wrangler.toml (a copy): setup writes the deployment into it as [env.production].
    const config = configCopy(join(work, "clone"));
    const devPort = await freePort();
    const workerUrl = `http://127.0.0.1:${devPort}`;
    const args = [
      "--yes",
      "--org",
      "octo-org",
      "--github-url",
      tenant.webUrl ?? "",
      "--name",
      NAME,
      "--mode",
      "agent",
      "--clusters",
      CLUSTER,
      "--namespaces",
      NS,
      "--agent-image",
      "ghcr.io/octo-org/arc-reaper-agent:0.2.0",
      "--worker-url",
      workerUrl,
      "--state-dir",
      stateDir,
      "--wrangler-config",
      config,
      "--wait-minutes",
      "2",
    ];
    const outputs: string[] = [];
    const argvSeen: string[] = [];
    const sampleArgv = setInterval(() => {
      const ps = spawn("ps", ["-eo", "args"], { stdio: ["ignore", "pipe", "ignore"] });
      let text = "";
      ps.stdout.on("data", (d: Buffer) => (text += d.toString("utf8")));
      ps.on("close", () => argvSeen.push(text));
    }, 500);

    // 1. Stopped in the middle of `wrangler deploy`: the next run knows the Worker it may find is its own.
    const zeroth = runSetup(args, env());
    children.push(zeroth.child);
    await zeroth.waitFor(/deploying arc-reaper-e2e with REAPER_DRY_RUN=true/, 120_000);
    // Stopped once the upload has reached Cloudflare, before wrangler is done: the Worker exists, setup's record of it does not.
    await waitFor("wrangler's upload", async () => (cloudflare.scripts.has(NAME) ? true : undefined), 120_000, 20);
    killGroup(zeroth.child, "SIGINT");
    expect(await zeroth.exited).toBe(130);
    outputs.push(zeroth.output());
    expect((JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")) as { deploying?: unknown }).deploying).toEqual({ name: NAME, createdBySetup: true });

    // Then stopped while it waits for the browser: the Worker is deployed and recorded; no App yet.
    const first = runSetup(args, env());
    children.push(first.child);
    await first.waitFor(/Open (http:\/\/127\.0\.0\.1:\d+\/[\w-]+\/) and click/, 150_000);
    killGroup(first.child, "SIGINT");
    expect(await first.exited).toBe(130);
    outputs.push(first.output());
    expect(first.output()).toMatch(/run npm run setup again to resume/);
    expect(first.output()).not.toMatch(/already exists/);
    const script = cloudflare.scripts.get(NAME);
    const uploads = script?.uploads ?? 0;
    expect(uploads).toBeGreaterThanOrEqual(1);
    const afterStop = JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")) as { worker?: { url: string }; app?: unknown; deploying?: unknown };
    expect(afterStop.worker?.url).toBe(workerUrl);
    expect(afterStop.deploying).toBeUndefined();
    expect(afterStop.app).toBeUndefined();

    // 2. Resumed: no second deploy; the browser makes the App; the secrets arrive; the check passes.
    const second = runSetup(args, env());
    children.push(second.child);
    const page = (await second.waitFor(/Open (http:\/\/127\.0\.0\.1:\d+\/[\w-]+\/) and click/, 60_000))[1] ?? "";
    expect(second.output()).toMatch(/deployed by an earlier run/);
    const tab = await (browser as BrowserContext).newPage();
    await tab.goto(page);
    await tab.click("#create");
    await tab.waitForSelector("#create-app");
    expect(await tab.textContent("#hook-url")).toBe(`${workerUrl}/webhook`);
    await tab.click("#create-app");
    await tab.waitForSelector("text=The App is made");
    await tab.close();

    await waitFor("every secret on the Cloudflare stand-in", async () => (SECRETS.every((s) => script?.secrets.has(s)) ? true : undefined), 60_000);
    const secrets = Object.fromEntries(SECRETS.map((s) => [s, script?.secrets.get(s) ?? ""]));
    expect(secrets["GITHUB_APP_ID"]).toBe(String(tenant.appId));
    expect(secrets["GITHUB_APP_PRIVATE_KEY"]).toBe(tenant.privateKeyPkcs1.trim());
    expect(secrets["GITHUB_WEBHOOK_SECRET"]).toMatch(/^[0-9a-f]{40}$/);
    for (const s of ["ADMIN_TOKEN", "METRICS_TOKEN", "AGENT_TOKEN"]) expect(secrets[s]).toMatch(/^[0-9a-f]{64}$/);
    const made = await tenant.manifestApps();
    expect(made).toHaveLength(1);
    expect(made[0]?.owner).toBe("octo-org");
    expect((made[0]?.manifest["hook_attributes"] as { url: string } | undefined)?.url).toBe(`${workerUrl}/webhook`);

    // The upload: dry run on, agent mode, the namespaces, the ledger's binding and migration.
    const bindings = (script?.metadata["bindings"] ?? []) as { name: string; type: string; text?: string; class_name?: string }[];
    const plain = Object.fromEntries(bindings.filter((b) => b.type === "plain_text").map((b) => [b.name, b.text]));
    expect(plain).toMatchObject({
      REAPER_DRY_RUN: "true",
      CLUSTER_MODE: "agent",
      REAPER_NAMESPACES: NS,
      AGENT_CLUSTERS: CLUSTER,
      GITHUB_API_URL: tenant.baseUrl,
    });
    expect(bindings.find((b) => b.name === "LEDGER")).toMatchObject({ type: "durable_object_namespace", class_name: "Ledger" });
    expect(script?.migrations).toEqual([expect.objectContaining({ new_tag: "v1", steps: [{ new_sqlite_classes: ["Ledger"] }] })]);
    expect(script?.schedules).toEqual(["* * * * *"]);

    // The cluster: the overlay, and the one command whose Secret comes from setup over loopback.
    const line = await second.waitFor(/curl -fsS (http:\/\/127\.0\.0\.1:\d+\/\S+) \| kubectl apply -f - && kubectl apply -k (\S+)/, 60_000);
    const served = parse((await (await fetch(line[1] ?? "")).text()).split("---\n")[1] ?? "") as { data: { AGENT_TOKEN: string } };
    const agentToken = Buffer.from(served.data.AGENT_TOKEN, "base64").toString("utf8");
    expect(agentToken).toBe(
      createHmac("sha256", secrets["AGENT_TOKEN"] ?? "")
        .update(CLUSTER)
        .digest("hex"),
    );
    const kustomized = spawn("kubectl", ["kustomize", join(stateDir, `agent-${CLUSTER}`)], { stdio: ["ignore", "pipe", "pipe"] });
    let rendered = "";
    kustomized.stdout.on("data", (d: Buffer) => (rendered += d.toString("utf8")));
    await new Promise((resolve) => kustomized.on("close", resolve));
    expect(rendered).toContain(`value: ${workerUrl}`);
    expect(rendered).toContain(`value: ${CLUSTER}`);
    expect(rendered).toContain("image: ghcr.io/octo-org/arc-reaper-agent:0.2.0");
    expect(rendered).toMatch(new RegExp(`kind: RoleBinding[\\s\\S]*namespace: ${NS}`));

    // The "deployment": wrangler dev of the config setup deployed, with the secrets Cloudflare received.
    const secretsFile = join(work, "dev-secrets.env");
    writeFileSync(
      secretsFile,
      Object.entries(secrets)
        .map(([k, v]) => `${k}="${v.replace(/\n/g, "\\n")}"`)
        .join("\n"),
      { mode: 0o600 },
    );
    const dev = spawn(
      process.execPath,
      [
        join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
        "dev",
        "--config",
        config,
        "--env",
        "production",
        "--ip",
        "127.0.0.1",
        "--port",
        String(devPort),
        "--inspector-port",
        String(await freePort()),
        "--env-file",
        secretsFile,
        "--persist-to",
        join(work, "dev-state"),
        "--show-interactive-dev-session=false",
      ],
      { cwd: ROOT, env: { ...env(), CLOUDFLARE_API_TOKEN: "", CLOUDFLARE_API_BASE_URL: "" }, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(dev);
    let devOut = "";
    dev.stdout?.on("data", (d: Buffer) => (devOut += d.toString("utf8")));
    dev.stderr?.on("data", (d: Buffer) => (devOut += d.toString("utf8")));
    // npm run agent against the Kubernetes stand-in, with the token setup served.
    const saToken = `sa-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    await addAgentServiceAccount(kube, [NS], saToken);
    const kubeconfig = join(work, "agent-kubeconfig.yaml");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "s", cluster: { server: kube.baseUrl, "insecure-skip-tls-verify": true } }],
        users: [{ name: "a", user: { token: saToken } }],
        contexts: [{ name: "s", context: { cluster: "s", user: "a" } }],
        "current-context": "s",
      }),
      { mode: 0o600 },
    );
    const agent = spawn(process.execPath, [join(ROOT, "src/agent/main.ts")], {
      cwd: ROOT,
      env: {
        ...env(),
        KUBECONFIG: kubeconfig,
        ARC_REAPER_URL: workerUrl,
        AGENT_TOKEN: agentToken,
        AGENT_CLUSTER: CLUSTER,
        REAPER_NAMESPACES: NS,
        AGENT_HEALTH_PORT: String(await freePort()),
      },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(agent);
    let agentOut = "";
    agent.stdout?.on("data", (d: Buffer) => (agentOut += d.toString("utf8")));
    agent.stderr?.on("data", (d: Buffer) => (agentOut += d.toString("utf8")));

    const code = await Promise.race([second.exited, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 200_000))]);
    outputs.push(second.output());
    expect(code, `${second.output()}\n--- wrangler dev ---\n${devOut.slice(-1500)}\n--- agent ---\n${agentOut.slice(-3000)}`).toBe(0);
    expect(second.output()).toMatch(/\/healthz\/deep passed/);
    expect(second.output()).toContain(`${tenant.webUrl}/github-apps/arc-reaper-${tenant.appId}/installations/new`);
    expect(second.output()).toMatch(/REAPER_DRY_RUN = "false"/);
    const setupSeconds = (Date.now() - t0) / 1000;

    // 3. A re-run changes nothing: no upload, no secret written, no App.
    const calls = cloudflare.calls.length;
    const writes = () => cloudflare.calls.filter((c) => c.method !== "GET").length;
    const writesBefore = writes();
    const third = runSetup(args, env());
    children.push(third.child);
    expect(await third.exited).toBe(0);
    outputs.push(third.output());
    expect(third.output()).toMatch(/nothing to do/);
    expect(script?.uploads).toBe(uploads);
    expect(writes()).toBe(writesBefore);
    expect(cloudflare.calls.length - calls).toBeLessThanOrEqual(2);
    expect(await tenant.manifestApps()).toHaveLength(1);
    expect(Object.fromEntries(SECRETS.map((s) => [s, script?.secrets.get(s)]))).toEqual(secrets);

    // The documented upgrade (npm run deploy -- --env production) deploys the same bindings and vars;
    // npm run deploy of the top level, whose Worker name is the same, is refused and uploads nothing.
    const deployScript = (extra: string[]) =>
      new Promise<{ code: number; out: string }>((resolve) => {
        const child = spawn(process.execPath, [join(ROOT, "scripts/deploy.ts"), "--config", config, ...extra], { cwd: ROOT, env: env() });
        let out = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
        child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
        child.on("close", (code) => resolve({ code: code ?? 1, out }));
      });
    const wholeTop = readFileSync(config, "utf8").replace(/^name = "arc-reaper"$/m, `name = "${NAME}"`);
    writeFileSync(config, wholeTop);
    const refused = await deployScript([]);
    expect(refused.code, refused.out).toBe(1);
    expect(refused.out).toContain(`Worker ${NAME} was made by npm run setup from [env.production]`);
    expect(refused.out).toContain("npm run deploy -- --env production");
    expect(script?.uploads).toBe(uploads);
    const upgraded = await deployScript(["--env", "production"]);
    expect(upgraded.code, upgraded.out).toBe(0);
    expect(cloudflare.scripts.get(NAME)?.uploads).toBe(uploads + 1);
    const sorted = (b: unknown) => JSON.stringify([...((b ?? []) as { name: string }[])].sort((x, y) => x.name.localeCompare(y.name)));
    expect(sorted(cloudflare.scripts.get(NAME)?.metadata["bindings"])).toBe(sorted(bindings));
    expect(cloudflare.scripts.get(NAME)?.schedules).toEqual(["* * * * *"]);
    const upgradedUploads = cloudflare.scripts.get(NAME)?.uploads;

    // Step 8 done by the user (REAPER_DRY_RUN = "false" in setup's environment): a re-run keeps their edit and deploys nothing.
    const text = readFileSync(config, "utf8");
    const at = text.lastIndexOf('REAPER_DRY_RUN = "true"');
    const edited = `${text.slice(0, at)}REAPER_DRY_RUN = "false"${text.slice(at + 'REAPER_DRY_RUN = "true"'.length)}`;
    expect(edited).toMatch(/\[env\.production\.vars\][^[]*REAPER_DRY_RUN = "false"/);
    writeFileSync(config, edited);
    const fourth = runSetup(args, env());
    children.push(fourth.child);
    expect(await fourth.exited).toBe(0);
    outputs.push(fourth.output());
    expect(fourth.output()).toMatch(/was edited since setup deployed it: kept as you left it/);
    expect(readFileSync(config, "utf8")).toBe(edited);
    expect(cloudflare.scripts.get(NAME)?.uploads).toBe(upgradedUploads);

    // With CLOUDFLARE_API_TOKEN (no OAuth login) wrangler called only the account's Workers API:
    // a token with Workers Scripts Edit on the account does (docs/deploy.md#a-cloudflare-api-token).
    const families = new Set(
      cloudflare.calls.map((k) =>
        k.path
          .replace(cloudflare.accountId, ":account")
          .replace(/\/workers\/(scripts|services|workers)\/[^/]+/, "/workers/$1/:name")
          .replace(/\/secrets\/[^/]+$/, "/secrets/:secret"),
      ),
    );
    for (const f of families) expect(f).toMatch(/\/accounts\/:account\/workers\/|\/user\/tokens\/verify$|\/memberships$/);
    process.stdout.write(`\nCloudflare API paths wrangler called during setup: ${[...families].sort().join(", ")}\n`);

    // No secret in setup's output, in its state dir or the repository's .setup, or on any command line.
    clearInterval(sampleArgv);
    const values = Object.values(secrets)
      .filter((v) => v.length >= 16)
      .concat(agentToken);
    const keyLines = (secrets["GITHUB_APP_PRIVATE_KEY"] ?? "").split("\n").filter((l) => l.length > 40);
    for (const out of outputs) for (const v of [...values, ...keyLines]) expect(out.includes(v)).toBe(false);
    expect(filesContaining([config, ...filesUnder(stateDir), ...filesUnder(join(ROOT, ".setup"))], [...values, ...keyLines])).toEqual([]);
    expect(argvSeen.length).toBeGreaterThan(10);
    for (const snapshot of argvSeen) for (const v of [...values, ...keyLines]) expect(snapshot.includes(v)).toBe(false);

    killGroup(agent, "SIGTERM");
    killGroup(dev, "SIGTERM");
    process.stdout.write(
      `\nsetup end to end against the stand-ins: ${setupSeconds.toFixed(1)} s from the first run to the check passing (stopped twice: mid-deploy and at the browser; resumed), ${((Date.now() - t0) / 1000).toFixed(1)} s with the re-run\n`,
    );
  }, 480_000);
});
