// A setup a person can finish: answers kept from the first one given (a stop
// before the first step ends asks nothing again), the plan shown before the
// first change and one confirmation, a way to the manifest page from another
// machine (an SSH port-forward line), a warning for a KUBE_API_URL a Worker
// cannot reach (private address or name, a certificate of a private CA).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../../scripts/lib/local-stack.ts";
import { resolveAnswers } from "../../../scripts/setup/answers.ts";
import { sshForward } from "../../../scripts/setup/app-step.ts";
import type { StepContext } from "../../../scripts/setup/context.ts";
import { confirmPlan, kubeApiUrlWarnings, planLines } from "../../../scripts/setup/plan.ts";
import { Cancelled, type Prompter } from "../../../scripts/setup/prompter.ts";
import { emptyState } from "../../../scripts/setup/state.ts";
import { writeWorkerConfig } from "../../../scripts/setup/worker-step.ts";
import { startCloudflareStandin, type CloudflareStandin } from "../../standins/cloudflare/server.ts";
import { configCopy, runSetup } from "./setup-rig.ts";

let cloudflare: CloudflareStandin;
let work: string;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "arc-reaper-setup-finish-"));
  cloudflare = await startCloudflareStandin();
});
afterAll(async () => {
  await cloudflare?.close();
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

function env(): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(CLOUDFLARE_|CF_|WRANGLER_|KUBECONFIG)/.test(k)) base[k] = v;
  return {
    ...base,
    HOME: join(work, "home"),
    KUBECONFIG: join(work, "no-kubeconfig"),
    CLOUDFLARE_API_BASE_URL: cloudflare.apiBaseUrl,
    CLOUDFLARE_API_TOKEN: "dummy-api-token",
    CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
    WRANGLER_SEND_METRICS: "false",
    NO_COLOR: "1",
  };
}

describe("setup's answers after a stop", () => {
  it("keeps them from before the first step ends, and a run with no answer flag uses them", async () => {
    const stateDir = join(work, "kept");
    const config = configCopy(join(work, "kept-clone"));
    const first = runSetup(
      ["--yes", "--state-dir", stateDir, "--wrangler-config", config, "--org", "octo-org", "--name", "kept-reaper", "--namespaces", "ns-a,ns-b"],
      env(),
    );
    // The plan comes before the first change; stopped while the first step runs.
    await first.waitFor(/deploying kept-reaper/, 60_000);
    if (first.child.pid) process.kill(-first.child.pid, "SIGINT");
    await first.exited;
    const out = first.output();
    expect(out.indexOf("== What setup will do")).toBeGreaterThanOrEqual(0);
    expect(out.indexOf("== What setup will do")).toBeLessThan(out.indexOf("== 1. The Worker"));
    expect(out).toMatch(/Worker kept-reaper \(--name\), in dry run, written as \[env\.production\] \(--env\)/);
    expect(out).toMatch(/Runner namespaces: ns-a, ns-b \(--namespaces\)/);
    const saved = JSON.parse(readFileSync(join(stateDir, "answers.json"), "utf8")) as Record<string, string>;
    expect(saved).toEqual({ org: "octo-org", name: "kept-reaper", namespaces: "ns-a,ns-b", "wrangler-config": config });
    // Again with no answer at all: the kept ones, named, and a flag replaces one.
    const second = runSetup(["--yes", "--state-dir", stateDir, "--namespaces", "ns-c"], env());
    await second.waitFor(/Runner namespaces: /, 60_000);
    if (second.child.pid) process.kill(-second.child.pid, "SIGINT");
    await second.exited;
    expect(second.output()).toMatch(/answers kept from an earlier run \(.*answers\.json\): --org, --name, --wrangler-config; a flag replaces one/);
    expect(second.output()).toMatch(/Worker kept-reaper \(--name\)/);
    expect(second.output()).toMatch(/Runner namespaces: ns-c \(--namespaces\)/);
  }, 120_000);

  it("keeps each answer given to a question at once, so a stop mid-questions asks only the rest", async () => {
    const remembered: [string, string][] = [];
    let asked = 0;
    const ask: Prompter = {
      text: async (q) => {
        asked += 1;
        if (asked === 3) throw new Cancelled();
        return q.initial ?? "octo-org";
      },
      select: async (q) => q.initial,
      confirm: async () => true,
    };
    await expect(resolveAnswers({}, ask, ROOT, {}, (k, v) => remembered.push([k, v]))).rejects.toThrow(Cancelled);
    expect(remembered).toEqual([
      ["account-type", "org"],
      ["org", "octo-org"],
      ["github-url", "https://github.com"],
    ]);
  });
});

describe("the plan and its one confirmation", () => {
  async function context(answers: Record<string, string>, ask: Prompter | undefined): Promise<{ c: StepContext; said: string[] }> {
    const a = await resolveAnswers({ org: "octo-org", "state-dir": join(work, "plan"), ...answers }, undefined, ROOT, {});
    const said: string[] = [];
    const c: StepContext = {
      a,
      root: ROOT,
      state: emptyState(),
      save: () => undefined,
      say: { step: (t) => said.push(`== ${t}`), done: (t) => said.push(t), info: (t) => said.push(t), warn: (t) => said.push(`warning: ${t}`) },
      wrangler: { root: ROOT, config: a.wranglerConfig, env: a.env },
      memory: new Map(),
      ask,
      open: () => undefined,
    };
    return { c, said };
  }

  it("names each answer by its flag, asks once, and a no changes nothing", async () => {
    const questions: string[] = [];
    const no: Prompter = {
      text: async () => "",
      select: async (q) => q.initial,
      confirm: async (q) => {
        questions.push(q.message);
        return false;
      },
    };
    const { c, said } = await context({ mode: "direct", "kube-api-url": "https://kube.example.com" }, no);
    expect(await confirmPlan(c, ["--kube-api-url ... is a private address"])).toBe(false);
    expect(questions).toEqual(["Go on? (nothing has been changed yet)"]);
    expect(said).toEqual(["== What setup will do", ...planLines(c), "warning: --kube-api-url ... is a private address"]);
    expect(said.join("\n")).toMatch(/Direct mode \(--mode\): the API server at https:\/\/kube\.example\.com \(--kube-api-url\)/);
    // --yes (no prompter): shown, and on.
    const { c: yes } = await context({}, undefined);
    expect(await confirmPlan(yes, [])).toBe(true);
  });
});

describe("an [env.production] setup did not write", () => {
  it("is kept, named, and nothing is written over it", async () => {
    const config = configCopy(join(work, "by-hand"));
    const text = `${readFileSync(config, "utf8")}\n[env.production]\nname = "mine"\n`;
    writeFileSync(config, text);
    const a = await resolveAnswers({ org: "octo-org", "state-dir": join(work, "by-hand-state"), "wrangler-config": config }, undefined, ROOT, {});
    const c = { a, root: ROOT, state: emptyState(), wrangler: { root: ROOT, config, env: "production" } } as unknown as StepContext;
    expect(() => writeWorkerConfig(c)).toThrow(/already has \[env\.production\] without setup's marker lines: kept/);
    expect(readFileSync(config, "utf8")).toBe(text);
  });
});

describe("the manifest page from a machine without a browser", () => {
  it("prints an SSH port-forward with the same port on both ends, to this host", () => {
    const line = sshForward(41234, { SSH_CONNECTION: "198.51.100.4 50022 203.0.113.7 22" });
    expect(line).toMatch(/^ssh -N -L 41234:127\.0\.0\.1:41234 [^@\s]+@203\.0\.113\.7$/);
  });
});

describe("a KUBE_API_URL a Worker cannot reach", () => {
  let server: ReturnType<typeof createServer> | undefined;
  afterAll(() => server?.close());

  it.each([
    ["https://10.1.2.3:6443", /is a private address \(10\.1\.2\.3\)/],
    ["https://172.20.0.1", /is a private address/],
    ["https://192.168.1.10:6443", /is a private address/],
    ["https://[fd00::1]:6443", /is a private address \(fd00::1\)/],
    ["https://kubernetes.default.svc", /is a private name/],
    ["https://kube.corp.internal", /is a private name/],
    ["https://kube", /is a private name/],
  ])("%s: a warning that names the setting", async (url, why) => {
    const warnings = await kubeApiUrlWarnings(url, 300);
    expect(warnings[0]).toMatch(new RegExp(`^--kube-api-url "${url.replace(/[.[\]/]/g, "\\$&")}" \\(KUBE_API_URL\\) `));
    expect(warnings[0]).toMatch(why);
    expect(warnings[0]).toMatch(/use agent mode/);
  });

  const openssl = spawnSync("openssl", ["version"]).status === 0;
  it.skipIf(!openssl)("warns of a certificate no public CA signed (skipped without openssl)", async () => {
    const dir = mkdtempSync(join(work, "ca-"));
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1", "-keyout", join(dir, "k.pem"), "-out", join(dir, "c.pem")],
      {
        stdio: "ignore",
      },
    );
    expect(existsSync(join(dir, "c.pem"))).toBe(true);
    server = createServer({ key: readFileSync(join(dir, "k.pem")), cert: readFileSync(join(dir, "c.pem")) }, (_q, r) => r.end("{}"));
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", () => resolve()));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const warnings = await kubeApiUrlWarnings(url, 3_000);
    expect(warnings).toEqual([
      expect.stringMatching(/is a private address \(127\.0\.0\.1\)/),
      expect.stringMatching(/its certificate is not publicly trusted \(DEPTH_ZERO_SELF_SIGNED_CERT\); a Worker cannot trust a private CA/),
    ]);
  });
});
