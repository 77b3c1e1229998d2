// npm run setup in direct mode, against the Cloudflare API stand-in and a
// stand-in kubectl: infra/kubernetes applied for the namespaces, the
// ServiceAccount's token read with kubectl and stored as KUBE_TOKEN through
// stdin alone (never argv, output or disk), KUBE_API_URL and CLUSTER_MODE=direct
// deployed with REAPER_DRY_RUN=true; and a token Secret or a KUBE_TOKEN setup
// did not make is kept unless --replace.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../../scripts/lib/local-stack.ts";
import { resolveAnswers } from "../../../scripts/setup/answers.ts";
import type { StepContext } from "../../../scripts/setup/context.ts";
import { directClusterStep } from "../../../scripts/setup/direct-step.ts";
import { emptyState } from "../../../scripts/setup/state.ts";
import { writeWorkerConfig } from "../../../scripts/setup/worker-step.ts";
import { startCloudflareStandin, type CloudflareStandin } from "../../standins/cloudflare/server.ts";
import { kubectlCalls, startHealthStub, writeAppFiles, writeFakeKubectl } from "./setup-fakes.ts";
import { configCopy, filesContaining, filesUnder, runSetup } from "./setup-rig.ts";

const KUBE_API = "https://kube.octo-org.example:6443";
let cloudflare: CloudflareStandin;
let work: string;
let bin: string;

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(CLOUDFLARE_|CF_|WRANGLER_|KUBECONFIG|FAKE_)/.test(k)) base[k] = v;
  return {
    ...base,
    PATH: [bin, process.env["PATH"] ?? ""].join(delimiter),
    HOME: join(work, "home"),
    XDG_CONFIG_HOME: join(work, "home/.config"),
    CLOUDFLARE_API_BASE_URL: cloudflare.apiBaseUrl,
    CLOUDFLARE_API_TOKEN: "dummy-api-token",
    CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    CI: "true",
    NO_COLOR: "1",
    ...extra,
  };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "arc-reaper-setup-direct-"));
  bin = join(work, "bin");
  mkdirSync(bin);
  writeFakeKubectl(bin);
  cloudflare = await startCloudflareStandin();
});
afterAll(async () => {
  await cloudflare?.close();
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

const secretPatches = () => cloudflare.calls.filter((c) => c.method === "PATCH" && c.path.endsWith("/secrets-bulk")).length;

describe("npm run setup --mode direct", () => {
  it("applies infra/kubernetes, stores the ServiceAccount's token as KUBE_TOKEN through stdin only, and a re-run changes nothing", async () => {
    const t0 = Date.now();
    const name = "arc-reaper-direct";
    const saToken = `eyJhbGciOiJSUzI1NiJ9.sa-token-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const stateDir = join(work, "state");
    const app = writeAppFiles(work);
    const health = await startHealthStub(cloudflare, name);
    const log = join(work, "kubectl.jsonl");
    const e = env({ FAKE_LOG: log, FAKE_CONTEXTS: "prod", FAKE_SA_SECRET: "none", FAKE_SA_TOKEN: saToken });
    const args = [
      "--yes",
      "--org",
      "octo-org",
      "--name",
      name,
      "--mode",
      "direct",
      "--kube-api-url",
      KUBE_API,
      "--clusters",
      "eu-west",
      "--namespaces",
      "arc-runners,arc-runners-big",
      "--apply",
      "--app-id",
      "4242",
      "--app-key-file",
      app.keyFile,
      "--webhook-secret-file",
      app.secretFile,
      "--worker-url",
      health.url,
      "--state-dir",
      stateDir,
      "--wait-minutes",
      "1",
    ];
    const argvSeen: string[] = [];
    const sampleArgv = setInterval(() => {
      const ps = spawn("ps", ["-eo", "args"], { stdio: ["ignore", "pipe", "ignore"] });
      let text = "";
      ps.stdout.on("data", (d: Buffer) => (text += d.toString("utf8")));
      ps.on("close", () => argvSeen.push(text));
    }, 500);
    try {
      const first = runSetup(args, e);
      const code = await first.exited;
      expect(code, first.output()).toBe(0);
      const firstSeconds = (Date.now() - t0) / 1000;
      const script = cloudflare.scripts.get(name);
      // The secrets: KUBE_TOKEN is the ServiceAccount's token; no AGENT_TOKEN in direct mode.
      expect(script?.secrets.get("KUBE_TOKEN")).toBe(saToken);
      expect([...(script?.secrets.keys() ?? [])].sort()).toEqual([
        "ADMIN_TOKEN",
        "GITHUB_APP_ID",
        "GITHUB_APP_PRIVATE_KEY",
        "GITHUB_WEBHOOK_SECRET",
        "KUBE_TOKEN",
        "METRICS_TOKEN",
      ]);
      expect(script?.secrets.get("GITHUB_APP_PRIVATE_KEY")).toBe(app.key);
      // The vars: direct mode, dry run, the API server, the cluster's name; KUBE_TOKEN is no plain var.
      const bindings = (script?.metadata["bindings"] ?? []) as { name: string; type: string; text?: string }[];
      const plain = Object.fromEntries(bindings.filter((b) => b.type === "plain_text").map((b) => [b.name, b.text]));
      expect(plain).toMatchObject({
        CLUSTER_MODE: "direct",
        REAPER_DRY_RUN: "true",
        KUBE_API_URL: KUBE_API,
        KUBE_CLUSTER_NAME: "eu-west",
        REAPER_NAMESPACES: "arc-runners,arc-runners-big",
      });
      expect(bindings.some((b) => b.name === "KUBE_TOKEN" || b.name === "AGENT_CLUSTERS")).toBe(false);
      // The cluster: what was applied (with context prod): the ServiceAccount, its token Secret (labelled setup's), a Role per namespace.
      const calls = kubectlCalls(log);
      const applied = calls.filter((k) => k.args.includes("apply"));
      expect(applied.map((k) => k.args.slice(0, 4).join(" "))).toEqual(["--context prod apply -k"]);
      const rendered = applied[0]?.rendered ?? "";
      expect(rendered).toMatch(/kind: ServiceAccount\n[\s\S]*name: arc-reaper\n/);
      expect(rendered).toMatch(
        /app\.kubernetes\.io\/managed-by: arc-reaper-setup\n[\s\S]*name: arc-reaper-token\n[\s\S]*type: kubernetes\.io\/service-account-token/,
      );
      for (const ns of ["arc-runners", "arc-runners-big"]) expect(rendered).toMatch(new RegExp(`kind: RoleBinding\\n[\\s\\S]*namespace: ${ns}\\n`));
      expect(first.output()).toMatch(/stored the ServiceAccount's token as KUBE_TOKEN/);
      expect(first.output()).toMatch(/\/healthz\/deep passed/);
      // The token: on no command line (setup's, wrangler's, kubectl's), not in the output, in no file.
      expect(argvSeen.length).toBeGreaterThan(5);
      for (const snapshot of argvSeen) expect(snapshot.includes(saToken)).toBe(false);
      for (const k of calls) expect(`${k.args.join(" ")} ${k.stdin}`).not.toContain(saToken);
      expect(first.output().includes(saToken)).toBe(false);
      expect(filesContaining(filesUnder(work), [saToken, Buffer.from(saToken).toString("base64")])).toEqual([]);

      // A re-run: no upload, no secret written, no kubectl apply.
      const uploads = script?.uploads;
      const patches = secretPatches();
      const again = runSetup(args, e);
      expect(await again.exited, again.output()).toBe(0);
      expect(again.output()).toMatch(/KUBE_TOKEN stored by an earlier run: kept/);
      expect(script?.uploads).toBe(uploads);
      expect(secretPatches()).toBe(patches);
      expect(kubectlCalls(log).filter((k) => k.args.includes("apply"))).toHaveLength(1);
      process.stdout.write(
        `\nsetup --mode direct against the stand-ins: ${firstSeconds.toFixed(1)} s, ${((Date.now() - t0) / 1000).toFixed(1)} s with the re-run\n`,
      );
    } finally {
      clearInterval(sampleArgv);
      await health.close();
    }
  }, 300_000);
});

/** The direct step alone, on a Worker setup deployed (seeded in the stand-in) with `secrets` already on it. */
async function directStep(label: string, o: { saSecret: "none" | "other" | "setup"; saToken: string; secrets?: Record<string, string>; replace?: boolean }) {
  const name = `direct-${label}`;
  const stateDir = join(work, label);
  cloudflare.scripts.set(name, {
    name,
    metadata: {},
    modules: ["index.js"],
    migrationTag: "v1",
    migrations: [],
    secrets: new Map(Object.entries(o.secrets ?? {})),
    schedules: [],
    workersDev: true,
    uploads: 1,
  });
  const log = join(work, `${label}.jsonl`);
  const saved = { ...process.env };
  Object.assign(process.env, env({ FAKE_LOG: log, FAKE_CONTEXTS: "prod", FAKE_SA_SECRET: o.saSecret, FAKE_SA_TOKEN: o.saToken }));
  const said: string[] = [];
  try {
    const a = await resolveAnswers(
      { org: "octo-org", name, mode: "direct", "kube-api-url": KUBE_API, "state-dir": stateDir, apply: true, ...(o.replace ? { replace: true } : {}) },
      undefined,
      ROOT,
      {},
    );
    const state = emptyState();
    state.secretsBySetup = ["GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET", "ADMIN_TOKEN", "METRICS_TOKEN"];
    const c: StepContext = {
      a,
      root: ROOT,
      state,
      save: () => undefined,
      say: { step: () => undefined, done: (t) => said.push(t), info: (t) => said.push(t), warn: (t) => said.push(`warning: ${t}`) },
      wrangler: { root: ROOT, config: configCopy(stateDir), env: "production" },
      memory: new Map(),
      ask: undefined,
      open: () => undefined,
    };
    const { digest } = writeWorkerConfig(c);
    state.worker = { name, url: "https://x.workers.dev", createdBySetup: true, config: c.wrangler.config, digest };
    await directClusterStep(c);
    const rendered = kubectlCalls(log).find((k) => k.args.includes("-k"))?.rendered ?? "";
    return { c, said: said.join("\n"), rendered, secrets: cloudflare.scripts.get(name)?.secrets ?? new Map<string, string>() };
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

describe("setup's direct step and what it did not make", () => {
  it("keeps a token Secret setup did not make (applies everything else) and stores its token; --replace applies setup's", async () => {
    const kept = await directStep("kept", { saSecret: "other", saToken: "their-sa-token-0123456789" });
    expect(kept.rendered).toMatch(/kind: ServiceAccount/);
    expect(kept.rendered).toMatch(/kind: RoleBinding/);
    expect(kept.rendered).not.toMatch(/kind: Secret/);
    expect(kept.said).toMatch(/Secret arc-reaper\/arc-reaper-token was there before setup: kept, not applied over \(--replace/);
    expect(kept.c.state.clusters["default"]).toMatchObject({ secret: "kept", applied: true });
    expect(kept.secrets.get("KUBE_TOKEN")).toBe("their-sa-token-0123456789");

    const replaced = await directStep("replaced", { saSecret: "other", saToken: "new-sa-token-0123456789", replace: true });
    expect(replaced.rendered).toMatch(/managed-by: arc-reaper-setup\n[\s\S]*name: arc-reaper-token/);
    expect(replaced.c.state.clusters["default"]).toMatchObject({ secret: "created", applied: true });
    expect(replaced.secrets.get("KUBE_TOKEN")).toBe("new-sa-token-0123456789");
  }, 120_000);

  it("keeps a KUBE_TOKEN already on the Worker that setup did not store", async () => {
    const r = await directStep("kube-token-kept", { saSecret: "setup", saToken: "sa-token-from-cluster-0123", secrets: { KUBE_TOKEN: "theirs-0123456789" } });
    expect(r.secrets.get("KUBE_TOKEN")).toBe("theirs-0123456789");
    expect(r.c.state.secretsKept).toContain("KUBE_TOKEN");
    expect(r.c.state.secretsBySetup).not.toContain("KUBE_TOKEN");
    expect(r.said).toMatch(/KUBE_TOKEN was already set on the Worker, not by setup: kept/);
  }, 120_000);
});
