// npm run setup with a bad answer, one per flag: a clear error naming the flag
// and what is wrong, exit code 2, and nothing created: no state dir, not one
// call to Cloudflare (its API stand-in), not one kubectl call (a stand-in on PATH).
// setup.test.ts has the issue's three (an org with a slash, an http:// GHES, a cluster name).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCloudflareStandin, type CloudflareStandin } from "../../standins/cloudflare/server.ts";
import { kubectlCalls, writeAppFiles, writeFakeKubectl } from "./setup-fakes.ts";
import { runSetup } from "./setup-rig.ts";

let cloudflare: CloudflareStandin;
let work: string;
let app: { keyFile: string; secretFile: string };
let notKey: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "arc-reaper-setup-bad-"));
  mkdirSync(join(work, "bin"));
  writeFakeKubectl(join(work, "bin"));
  app = writeAppFiles(work);
  notKey = join(work, "not-a-key.txt");
  writeFileSync(notKey, "ssh-ed25519 AAAAC3Nza... me@laptop\n");
  cloudflare = await startCloudflareStandin();
});
afterAll(async () => {
  await cloudflare?.close();
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

const K = "https://kube.example.com:6443";
// Each: the flags (after --yes --state-dir ...), and what the error must say. Files are named by placeholders.
const CASES: [string, string[], RegExp][] = [
  ["--account-type", ["--org", "octo-org", "--account-type", "team"], /--account-type "team" must be org or user/],
  ["--org missing", [], /--org \(the organization\) is needed: give it as a flag/],
  ["--org", ["--org", "octo--org"], /--org "octo--org" is not a GitHub account name/],
  ["--github-url not a URL", ["--org", "o", "--github-url", "github.example.com"], /--github-url "github\.example\.com" is not a URL/],
  ["--github-url ftp", ["--org", "o", "--github-url", "ftp://github.example.com"], /--github-url "ftp:\/\/github\.example\.com" must start with https:\/\//],
  [
    "--github-url credentials",
    ["--org", "o", "--github-url", "https://me:pw@github.example.com"],
    /--github-url .* must have no query, fragment or credentials/,
  ],
  [
    "--github-api-url",
    ["--org", "o", "--github-url", "https://github.example.com", "--github-api-url", "http://api.example.com"],
    /--github-api-url "http:\/\/api\.example\.com" is http:\/\/: GitHub is reached over https:\/\/ only/,
  ],
  ["--name", ["--org", "o", "--name", "Arc_Reaper"], /--name "Arc_Reaper" is not a Worker name/],
  ["--mode", ["--org", "o", "--mode", "other"], /--mode "other" must be agent or direct/],
  ["--clusters twice", ["--org", "o", "--clusters", "eu,eu"], /--clusters names eu twice/],
  ["--clusters none", ["--org", "o", "--clusters", ","], /--clusters names none/],
  ["--clusters in direct mode", ["--org", "o", "--mode", "direct", "--clusters", "eu,us", "--kube-api-url", K], /--clusters: direct mode serves one cluster/],
  [
    "--namespaces underscore",
    ["--org", "o", "--namespaces", "arc-runners,arc_runners"],
    /--namespaces \(REAPER_NAMESPACES\): "arc_runners" is not a DNS label/,
  ],
  ["--namespaces upper case", ["--org", "o", "--namespaces", "Arc-Runners"], /--namespaces \(REAPER_NAMESPACES\): "Arc-Runners" is not a DNS label/],
  ["--namespaces twice", ["--org", "o", "--namespaces", "a,a"], /--namespaces \(REAPER_NAMESPACES\) names a twice/],
  ["--agent-image", ["--org", "o", "--agent-image", "ghcr.io/o/agent 1"], /--agent-image "ghcr\.io\/o\/agent 1" is not an image reference/],
  ["--kube-api-url missing", ["--org", "o", "--mode", "direct"], /--kube-api-url is needed/],
  [
    "--kube-api-url http",
    ["--org", "o", "--mode", "direct", "--kube-api-url", "http://kube.example.com"],
    // The message is about the setting it names (KUBE_API_URL and its token), not about GitHub.
    /--kube-api-url \(KUBE_API_URL\) "http:\/\/kube\.example\.com" is http:\/\/: the Worker sends KUBE_TOKEN to the API server, so KUBE_API_URL must be https:\/\/ \(http:\/\/ is taken for 127\.0\.0\.1 alone\)\nNothing/,
  ],
  ["--app-id alone", ["--org", "o", "--app-id", "12"], /--app-id and --app-key-file go together/],
  ["--app-id", ["--org", "o", "--app-id", "twelve", "--app-key-file", "KEY", "--webhook-secret-file", "SECRET"], /--app-id "twelve" is not a GitHub App id/],
  [
    "--webhook-secret-file missing",
    ["--org", "o", "--app-id", "12", "--app-key-file", "KEY"],
    /--app-id 12: setup also needs that App's webhook secret, in a file given with --webhook-secret-file/,
  ],
  ["--webhook-secret-file alone", ["--org", "o", "--webhook-secret-file", "SECRET"], /--app-id and --app-key-file go together/],
  [
    "--app-key-file unreadable",
    ["--org", "o", "--app-id", "12", "--app-key-file", "/nonexistent/app.pem", "--webhook-secret-file", "SECRET"],
    /--app-key-file "\/nonexistent\/app\.pem" cannot be read \(ENOENT\)/,
  ],
  [
    "--app-key-file not a key",
    ["--org", "o", "--app-id", "12", "--app-key-file", "NOTKEY", "--webhook-secret-file", "SECRET"],
    /--app-key-file ".*not-a-key\.txt" is not a private key/,
  ],
  [
    "--webhook-secret-file unreadable",
    ["--org", "o", "--app-id", "12", "--app-key-file", "KEY", "--webhook-secret-file", "/nonexistent/secret"],
    /--webhook-secret-file "\/nonexistent\/secret" cannot be read/,
  ],
  ["--worker-url", ["--org", "o", "--worker-url", "arc-reaper.example.com"], /--worker-url "arc-reaper\.example\.com" is not a URL/],
  ["--wrangler-config", ["--org", "o", "--wrangler-config", "/nonexistent/wrangler.toml"], /--wrangler-config "\/nonexistent\/wrangler\.toml" cannot be read/],
  ["--wait-minutes", ["--org", "o", "--wait-minutes", "soon"], /--wait-minutes "soon" is not a number of minutes above 0/],
  ["--wait-minutes zero", ["--org", "o", "--wait-minutes", "0"], /--wait-minutes "0" is not a number/],
  ["an unknown flag", ["--org", "o", "--namespace", "arc-runners"], /Unknown option '--namespace'/],
];

describe("npm run setup: a bad answer per flag", () => {
  it.concurrent.each(CASES)("%s: a clear error, exit code 2, nothing created", async (label, flags, message) => {
    const stateDir = join(work, `state-${label.replace(/\W+/g, "-")}`);
    const log = join(work, `kubectl-${label.replace(/\W+/g, "-")}.jsonl`);
    const files: Record<string, string> = { KEY: app.keyFile, SECRET: app.secretFile, NOTKEY: notKey };
    const args = ["--yes", "--state-dir", stateDir, "--apply", ...flags.map((f) => files[f] ?? f)];
    const base: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^(CLOUDFLARE_|CF_|WRANGLER_|KUBECONFIG)/.test(k)) base[k] = v;
    const run = runSetup(args, {
      ...base,
      PATH: [join(work, "bin"), process.env["PATH"] ?? ""].join(delimiter),
      HOME: join(work, "home"),
      FAKE_LOG: log,
      FAKE_CONTEXTS: "prod",
      CLOUDFLARE_API_BASE_URL: cloudflare.apiBaseUrl,
      CLOUDFLARE_API_TOKEN: "dummy",
      CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
      WRANGLER_SEND_METRICS: "false",
      NO_COLOR: "1",
    });
    // A bad answer stops setup within seconds; one that does not is stopped here (no setup left running).
    const code = await Promise.race([run.exited, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 45_000))]);
    if (code === -1 && run.child.pid) process.kill(-run.child.pid, "SIGKILL");
    expect(code, run.output()).toBe(2);
    expect(run.output()).toMatch(message);
    expect(run.output()).toMatch(/Nothing was created/);
    expect(existsSync(stateDir)).toBe(false);
    expect(kubectlCalls(log)).toEqual([]);
    // No case calls Cloudflare, so the stand-in has seen no call at all.
    expect(cloudflare.calls).toEqual([]);
  });
});
