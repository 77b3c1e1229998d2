// `npm run setup -- --target cluster`: arc-reaper at home in the cluster, with
// no Cloudflare account and no Cloudflare call: the GitHub App by the manifest
// flow (or one you have), an overlay of infra/server for your namespace, host
// and image in the state dir, applied with kubectl (--apply, or when you say
// so), the Secret through kubectl's stdin (the App's key, its webhook secret and
// a new ADMIN_TOKEN: memory only, never argv, output or a file), then a wait
// for /healthz/deep. The App's key lives only in the cluster's Secret, so
// nothing is made unless it will be applied.
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readRelease } from "../lib/release.ts";
import { githubPlace } from "./github-urls.ts";
import { applyKustomize, applyStdin, contextFor } from "./kubectl.ts";
import { startManifestFlow } from "./manifest-page.ts";
import { serverSecretYaml, writeServerOverlay } from "./server-overlay.ts";
import { newToken } from "./tokens.ts";
import { checkLabels, checkLogin, splitList } from "./validate.ts";

const OPTIONS = {
  target: { type: "string" },
  org: { type: "string" },
  "account-type": { type: "string", default: "org" },
  "github-url": { type: "string", default: "https://github.com" },
  "github-api-url": { type: "string" },
  host: { type: "string" },
  namespace: { type: "string", default: "arc-reaper" },
  namespaces: { type: "string", default: "arc-runners" },
  image: { type: "string" },
  "app-id": { type: "string" },
  "app-key-file": { type: "string" },
  "webhook-secret-file": { type: "string" },
  "state-dir": { type: "string", default: ".setup-cluster" },
  "health-url": { type: "string" },
  "wait-minutes": { type: "string", default: "10" },
  apply: { type: "boolean", default: false },
  yes: { type: "boolean", short: "y", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

const HELP = `npm run setup -- --target cluster --org ORG --host HOST --apply [--image IMAGE] [FLAGS]
arc-reaper in your cluster (infra/server), no Cloudflare account: the GitHub App by the manifest flow
(webhook https://HOST/webhook), the overlay in --state-dir, kubectl apply (current context), the Secret
through kubectl's stdin, then a wait for /healthz/deep (at --health-url, default https://HOST; e.g. a
kubectl port-forward). Flags: ${Object.keys(OPTIONS)
  .map((k) => `--${k}`)
  .join(" ")}`;

class Refused extends Error {}

const say = (line: string) => process.stdout.write(`${line}\n`);

export async function clusterTarget(argv: string[], root: string, env: NodeJS.ProcessEnv): Promise<number> {
  let values: { [K in keyof typeof OPTIONS]?: string | boolean };
  try {
    values = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    process.stderr.write(`setup: ${e instanceof Error ? e.message : String(e)}\nNothing was created.\n`);
    return 2;
  }
  if (values.help) {
    say(HELP);
    return 0;
  }
  try {
    return await run(values as Record<string, string | boolean | undefined>, root, env);
  } catch (e) {
    if (e instanceof Refused) {
      process.stderr.write(`setup: ${e.message}\n`);
      return 2;
    }
    process.stderr.write(`\nsetup failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

async function run(v: Record<string, string | boolean | undefined>, root: string, env: NodeJS.ProcessEnv): Promise<number> {
  const text = (k: string): string => (typeof v[k] === "string" ? (v[k] as string) : "");
  const need = (k: string, what: string): string => {
    if (text(k) === "") throw new Refused(`--${k} is needed: ${what}. Nothing was created.`);
    return text(k);
  };
  if (text("target") !== "cluster")
    throw new Refused(`--target ${JSON.stringify(text("target"))}: the one target is cluster (without --target, setup deploys to Cloudflare)`);
  const org = need("org", "the GitHub organization (or user) that owns the App");
  const login = checkLogin("--org", org);
  if (!login.ok) throw new Refused(login.problem);
  const host = need("host", "the host your Ingress serves, which GitHub reaches over HTTPS (its webhook is https://HOST/webhook)");
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/i.test(host))
    throw new Refused(`--host must be a host name, e.g. arc-reaper.example.com; got ${JSON.stringify(host)}`);
  // The image this version's release publishes, unless --image names a mirror or a build of your own.
  const image = text("image") || readRelease(root).serverImage;
  const namespaces = splitList(text("namespaces"));
  for (const check of [checkLabels("--namespaces", namespaces), checkLabels("--namespace", [text("namespace")])]) {
    if (!check.ok) throw new Refused(check.problem);
  }
  // The App's key goes straight into the cluster's Secret and is kept nowhere else: refuse before making it.
  if (v.apply !== true) throw new Refused("--apply is needed: the App's key and tokens go only into the cluster's Secret. Nothing was created.");
  const dotcom = (env.ARC_REAPER_SETUP_GITHUB_COM ?? "").split(/\s+/);
  const place = githubPlace(text("github-url"), text("github-api-url") || undefined, dotcom[0] && dotcom[1] ? { web: dotcom[0], api: dotcom[1] } : undefined);
  const stateDir = resolve(text("state-dir"));
  const context = await contextFor(root, "", true);
  if (!context) throw new Refused("kubectl has no current context: point it at your cluster first. Nothing was created.");
  const k = { root, context };

  say("== 1. The GitHub App");
  const secrets = new Map<string, string>();
  let appId: number;
  if (text("app-id") !== "") {
    appId = Number(text("app-id"));
    secrets.set("GITHUB_APP_PRIVATE_KEY", readFileSync(need("app-key-file", "that App's private key (.pem)"), "utf8").trim());
    secrets.set("GITHUB_WEBHOOK_SECRET", readFileSync(need("webhook-secret-file", "that App's webhook secret, in a file"), "utf8").trim());
    say(`  done: using App ${appId}`);
  } else {
    const base = JSON.parse(readFileSync(join(root, "infra/github-app/manifest.json"), "utf8")) as Record<string, unknown>;
    const url = `https://${host}`;
    const manifest = { ...base, name: `arc-reaper-${org}`.slice(0, 34).replace(/-+$/, ""), url, hook_attributes: { url: `${url}/webhook`, active: true } };
    const accountType = text("account-type") === "user" ? "user" : "org";
    const flow = await startManifestFlow({ place, accountType, org, manifest });
    try {
      say(`  Open ${flow.url} and click the button: GitHub shows the App (webhook ${url}/webhook); choose Create GitHub App.`);
      const made = await flow.done;
      appId = made.id;
      secrets.set("GITHUB_APP_PRIVATE_KEY", made.pem.trim());
      secrets.set("GITHUB_WEBHOOK_SECRET", made.webhookSecret);
      say(`  done: made GitHub App ${made.slug} (id ${made.id}); its key and webhook secret are in memory until the Secret holds them`);
    } finally {
      await flow.close();
    }
  }
  const adminToken = newToken();
  secrets.set("ADMIN_TOKEN", adminToken);

  say("== 2. The overlay");
  const namespace = text("namespace");
  const dir = writeServerOverlay(root, join(stateDir, "server"), { namespace, host, image, appId, runnerNamespaces: namespaces, githubApiUrl: place.api });
  say(
    `  done: ${relative(process.cwd(), dir) || dir} (namespace ${namespace}, host ${host}, image ${image}, runners in ${namespaces.join(", ")}); no secrets in it`,
  );

  say(`== 3. Apply (kubectl context ${context})`);
  say(`  ${(await applyKustomize(k, dir)).split("\n").join("\n  ")}`);
  await applyStdin(k, serverSecretYaml(namespace, Object.fromEntries(secrets)));
  secrets.clear();
  say(`  done: Secret ${namespace}/arc-reaper-secrets through kubectl's stdin (GITHUB_APP_PRIVATE_KEY, GITHUB_WEBHOOK_SECRET, ADMIN_TOKEN)`);

  say("== 4. /healthz/deep");
  const health = `${(text("health-url") || `https://${host}`).replace(/\/+$/, "")}/healthz/deep`;
  const deadline = Date.now() + Math.max(1, Number(text("wait-minutes")) || 10) * 60_000;
  for (;;) {
    const answer = await fetch(health, { headers: { authorization: `Bearer ${adminToken}` }, signal: AbortSignal.timeout(10_000) })
      .then(async (r) => ({ status: r.status, body: await r.text() }))
      .catch((e: unknown) => ({ status: 0, body: e instanceof Error ? e.message : String(e) }));
    if (answer.status === 200) break;
    if (Date.now() > deadline) {
      say(`  not yet: ${health} answered ${answer.status || "nothing"}; kubectl -n ${namespace} logs deploy/arc-reaper says why`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
  say(`  done: every check passed; arc-reaper runs in ${namespace}, in dry run`);
  say(`  The admin token is in the Secret only: kubectl -n ${namespace} get secret arc-reaper-secrets -o jsonpath='{.data.ADMIN_TOKEN}' | base64 -d`);
  return 0;
}
