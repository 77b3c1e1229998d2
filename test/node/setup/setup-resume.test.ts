// A setup resumed after its secrets were stored: the tokens it made were in the
// earlier run's memory only, so it makes new ones where it needs them, but only
// those setup itself stored (ADMIN_TOKEN for the check, AGENT_TOKEN for the
// clusters); each cluster's agent token is derived again from the new
// AGENT_TOKEN and applied or served again. Tokens that were on the Worker
// before setup are never replaced. Real wrangler against the Cloudflare stand-in.
import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../../scripts/lib/local-stack.ts";
import { resolveAnswers } from "../../../scripts/setup/answers.ts";
import { checkStep } from "../../../scripts/setup/check-step.ts";
import { agentClusterStep } from "../../../scripts/setup/cluster-step.ts";
import type { StepContext } from "../../../scripts/setup/context.ts";
import { secretServer } from "../../../scripts/setup/secret-server.ts";
import { secretsStep } from "../../../scripts/setup/secrets-step.ts";
import { emptyState } from "../../../scripts/setup/state.ts";
import { writeWorkerConfig } from "../../../scripts/setup/worker-step.ts";
import { startCloudflareStandin, type CloudflareStandin } from "../../standins/cloudflare/server.ts";
import { kubectlCalls, startHealthStub, writeFakeKubectl } from "./setup-fakes.ts";
import { configCopy } from "./setup-rig.ts";

const GITHUB = ["GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET"];
let cloudflare: CloudflareStandin;
let work: string;
const saved = { ...process.env };

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "arc-reaper-setup-resume-"));
  const bin = join(work, "bin");
  mkdirSync(bin);
  writeFakeKubectl(bin);
  cloudflare = await startCloudflareStandin();
  for (const k of Object.keys(process.env)) if (/^(CLOUDFLARE_|CF_|WRANGLER_|KUBECONFIG)/.test(k)) delete process.env[k];
  Object.assign(process.env, {
    PATH: [bin, saved["PATH"] ?? ""].join(delimiter),
    HOME: join(work, "home"),
    XDG_CONFIG_HOME: join(work, "home/.config"),
    CLOUDFLARE_API_BASE_URL: cloudflare.apiBaseUrl,
    CLOUDFLARE_API_TOKEN: "dummy-api-token",
    CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    CI: "true",
    NO_COLOR: "1",
  });
});
afterAll(async () => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  await cloudflare?.close();
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

const hex = (n: number) => `${n}`.repeat(64).slice(0, 64);
const derived = (agentToken: string, cluster: string) => createHmac("sha256", agentToken).update(cluster).digest("hex");

/** A run resumed on a Worker an earlier run deployed, with `before` on it; `bySetup`: the secrets that run stored. */
async function resumed(label: string, before: Record<string, string>, bySetup: string[], clusters: StepContext["state"]["clusters"]) {
  const name = `resume-${label}`;
  const stateDir = join(work, label);
  cloudflare.scripts.set(name, {
    name,
    metadata: {},
    modules: ["index.js"],
    migrationTag: "v1",
    migrations: [],
    secrets: new Map(Object.entries(before)),
    schedules: [],
    workersDev: true,
    uploads: 1,
  });
  const health = await startHealthStub(cloudflare, name);
  const a = await resolveAnswers(
    { org: "octo-org", name, clusters: "eu-west,us-east", namespaces: "arc-runners", "state-dir": stateDir, apply: true, "worker-url": health.url },
    undefined,
    ROOT,
    {},
  );
  const said: string[] = [];
  const state = emptyState();
  state.secretsBySetup = bySetup;
  state.secretsKept = Object.keys(before).filter((k) => !bySetup.includes(k));
  state.app = { id: 4242, slug: "arc-reaper-octo-org", madeBySetup: true };
  state.clusters = clusters;
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
  state.worker = { name, url: health.url, createdBySetup: true, config: c.wrangler.config, digest };
  const log = join(work, `${label}.jsonl`);
  // eu-west has a kubectl context (its token Secret is setup's); us-east has none: its Secret is served.
  Object.assign(process.env, { FAKE_LOG: log, FAKE_CONTEXTS: "eu-west", FAKE_AGENT_SECRET: "setup" });
  const serve = secretServer();
  const patchesBefore = cloudflare.calls.filter((k) => k.method === "PATCH").length;
  try {
    await secretsStep(c);
    await agentClusterStep(c, serve);
    const passed = await checkStep(c, 60_000);
    const text = said.join("\n");
    const servedUrl = /curl -fsS (\S+) \|/.exec(text)?.[1];
    const served = servedUrl ? (parse((await (await fetch(servedUrl)).text()).split("---\n")[1] ?? "") as { data: { AGENT_TOKEN: string } }) : undefined;
    return {
      c,
      text,
      passed,
      asked: health.asked(),
      kubectl: kubectlCalls(log),
      after: cloudflare.scripts.get(name)?.secrets ?? new Map<string, string>(),
      served: served && Buffer.from(served.data.AGENT_TOKEN, "base64").toString("utf8"),
      patches: cloudflare.calls.filter((k) => k.method === "PATCH").length - patchesBefore,
    };
  } finally {
    await serve.close();
    await health.close();
  }
}

describe("setup resumed after its secrets were stored", () => {
  it("replaces the ADMIN_TOKEN and AGENT_TOKEN it stored, derives every cluster's token again and applies or serves it; keeps the rest", async () => {
    const before: Record<string, string> = {
      GITHUB_APP_ID: "4242",
      GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----",
      GITHUB_WEBHOOK_SECRET: "w".repeat(40),
      ADMIN_TOKEN: hex(1),
      METRICS_TOKEN: hex(2),
      AGENT_TOKEN: hex(3),
    };
    const r = await resumed("ours", before, [...GITHUB, "ADMIN_TOKEN", "METRICS_TOKEN", "AGENT_TOKEN"], {
      "eu-west": { overlay: "", secret: "created", applied: true },
      "us-east": { overlay: "", secret: "printed", applied: false },
    });
    expect(r.text).toMatch(/all 6 secrets were stored by an earlier run/);
    const agent = r.after.get("AGENT_TOKEN") ?? "";
    const admin = r.after.get("ADMIN_TOKEN") ?? "";
    expect(agent).toMatch(/^[0-9a-f]{64}$/);
    expect(admin).toMatch(/^[0-9a-f]{64}$/);
    expect(agent).not.toBe(before["AGENT_TOKEN"]);
    expect(admin).not.toBe(before["ADMIN_TOKEN"]);
    expect(agent).not.toBe(admin);
    expect(r.text).toMatch(/made a new AGENT_TOKEN and stored it on the Worker/);
    expect(r.text).toMatch(/made a new ADMIN_TOKEN and stored it on the Worker/);
    // Only those two: METRICS_TOKEN (not needed by setup) and the App's secrets are as they were; one write each.
    for (const k of [...GITHUB, "METRICS_TOKEN"]) expect(r.after.get(k)).toBe(before[k]);
    expect(r.patches).toBe(2);
    // eu-west, set up by the earlier run with the old token, gets the new one (stdin); us-east's is served.
    const applied = r.kubectl.filter((k) => k.args.join(" ") === "--context eu-west apply -f -");
    expect(applied).toHaveLength(1);
    expect(applied[0]?.stdin).toContain(`AGENT_TOKEN: ${Buffer.from(derived(agent, "eu-west")).toString("base64")}`);
    expect(r.served).toBe(derived(agent, "us-east"));
    for (const k of r.kubectl) expect(k.args.join(" ")).not.toContain(derived(agent, "eu-west"));
    // The check used the new ADMIN_TOKEN, which the Worker (stand-in) now holds.
    expect(r.passed).toBe(true);
    expect(r.c.state.checkedAt).toBeDefined();
  }, 120_000);

  it("never replaces an ADMIN_TOKEN or AGENT_TOKEN that was on the Worker before setup", async () => {
    const before = {
      GITHUB_APP_ID: "4242",
      GITHUB_APP_PRIVATE_KEY: "k",
      GITHUB_WEBHOOK_SECRET: "w".repeat(40),
      ADMIN_TOKEN: hex(4),
      METRICS_TOKEN: hex(5),
      AGENT_TOKEN: hex(6),
    };
    const r = await resumed("theirs", before, [...GITHUB, "METRICS_TOKEN"], {
      "eu-west": { overlay: "", secret: "printed", applied: false },
      "us-east": { overlay: "", secret: "printed", applied: false },
    });
    expect(Object.fromEntries(r.after)).toEqual(before);
    expect(r.patches).toBe(0);
    expect(r.text).toMatch(/cluster eu-west: AGENT_TOKEN was on the Worker before setup, so setup cannot make this cluster's token/);
    expect(r.text).toMatch(/cluster us-east: AGENT_TOKEN was on the Worker before setup/);
    expect(r.served).toBeUndefined();
    expect(r.kubectl.some((k) => k.args.includes("apply"))).toBe(false);
    expect(r.text).toMatch(/ADMIN_TOKEN was on the Worker before setup: check .*\/healthz\/deep with it yourself/);
    expect(r.passed).toBe(false);
    expect(r.asked).toBe(0);
  }, 60_000);
});
