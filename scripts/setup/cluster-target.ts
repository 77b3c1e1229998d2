// `npm run setup -- --target cluster`: arc-reaper at home in the cluster, with
// no Cloudflare account and no Cloudflare call. It first shows its plan (the
// kubectl context and its API server, the namespaces, host, image and every
// object it makes) and asks once on a terminal (--yes for scripts); --dry-run
// shows the plan and the rendered YAML and touches nothing. Then: the GitHub
// App by the manifest flow (or one you have), the overlay written where you say
// (YAML, the bases by URL at this release's tag: commit it), applied with
// kubectl, the Secret applied server-side through stdin (the App's key, its
// webhook secret and a new ADMIN_TOKEN: memory only, never argv, output, a file
// or an annotation), then the rollout and /healthz/deep through a port-forward
// setup starts itself, so the admin token goes only to 127.0.0.1.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readRelease } from "../lib/release.ts";
import { githubPlace } from "./github-urls.ts";
import { applyServerSide, applyStdin, contextFor, contextServer, type Kubectl, kustomize, rolloutStatus } from "./kubectl.ts";
import { startManifestFlow } from "./manifest-page.ts";
import { startPortForward } from "./port-forward.ts";
import { clackPrompter } from "./prompter.ts";
import { localOverlayCopy, type ServerOverlay, serverSecretYaml, writeServerOverlay } from "./server-overlay.ts";
import { newToken } from "./tokens.ts";
import { checkLabels, checkLogin, splitList } from "./validate.ts";

const OPTIONS = {
  target: { type: "string", help: "cluster: this target (without --target, setup deploys to Cloudflare)" },
  org: { type: "string", help: "the GitHub organization (or user, with --account-type user) that owns the App" },
  "account-type": { type: "string", default: "org", help: "org or user: who owns the App" },
  "github-url": { type: "string", default: "https://github.com", help: "GitHub's web address; https://HOST for GitHub Enterprise Server" },
  "github-api-url": { type: "string", help: "GitHub's API, when not derived from --github-url (GHES: https://HOST/api/v3)" },
  host: { type: "string", help: "the host your Ingress serves over HTTPS; the App's webhook is https://HOST/webhook" },
  namespace: { type: "string", default: "arc-reaper", help: "the namespace the server runs in" },
  namespaces: { type: "string", default: "arc-runners", help: "the runner namespaces it watches, comma-separated (REAPER_NAMESPACES)" },
  image: { type: "string", help: "the server's image, when not the one this release publishes (a mirror, a build of yours)" },
  "app-id": { type: "string", help: "an App you already have: its id (with --app-key-file and --webhook-secret-file)" },
  "app-key-file": { type: "string", help: "that App's private key (.pem)" },
  "webhook-secret-file": { type: "string", help: "that App's webhook secret, in a file" },
  out: { type: "string", help: "where the overlay is written, to commit to your repository (default: STATE-DIR/server)" },
  "state-dir": { type: "string", default: ".setup-cluster", help: "setup's own files" },
  "health-url": {
    type: "string",
    help: "check /healthz/deep at this URL (one you trust, it receives the admin token) instead of through setup's own port-forward",
  },
  "wait-minutes": { type: "string", default: "10", help: "how long to wait for the rollout and /healthz/deep" },
  "dry-run": { type: "boolean", default: false, help: "show the plan and the YAML it would apply; make, write and apply nothing" },
  yes: { type: "boolean", short: "y", default: false, help: "go on without asking (scripts); on a terminal setup asks once" },
  apply: { type: "boolean", default: false, help: "the same as --yes (kept for older scripts)" },
  help: { type: "boolean", short: "h", default: false, help: "this text" },
} as const;

const HELP = `npm run setup -- --target cluster --org ORG --host HOST [FLAGS]
arc-reaper in your cluster (infra/server), no Cloudflare account. Shows its plan first and asks once
(--yes for scripts; --dry-run shows the plan and the YAML and changes nothing).

${Object.entries(OPTIONS)
  .map(([k, o]) => {
    const name = `--${k}${"short" in o ? `, -${o.short}` : ""}`;
    const value = o.type === "string" ? ` ${k.toUpperCase().replaceAll("-", "_")}` : "";
    const def = "default" in o && o.type === "string" ? ` (default ${o.default})` : "";
    return `  ${`${name}${value}`.padEnd(34)} ${o.help}${def}`;
  })
  .join("\n")}`;

class Refused extends Error {}

const say = (line: string) => process.stdout.write(`${line}\n`);
const parseOptions = Object.fromEntries(Object.entries(OPTIONS).map(([k, { help: _help, ...o }]) => [k, o]));

export async function clusterTarget(argv: string[], root: string, env: NodeJS.ProcessEnv): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options: parseOptions as typeof parseOptions, strict: true, allowPositionals: false }).values as typeof values;
  } catch (e) {
    process.stderr.write(
      `setup: ${e instanceof Error ? e.message : String(e)}\nNothing was created. npm run setup -- --target cluster --help lists the flags.\n`,
    );
    return 2;
  }
  if (values["help"]) {
    say(HELP);
    return 0;
  }
  try {
    return await run(values, root, env);
  } catch (e) {
    if (e instanceof Refused) {
      process.stderr.write(`setup: ${e.message}\n`);
      return 2;
    }
    process.stderr.write(`\nsetup failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

interface Answers {
  org: string;
  host: string;
  image: string;
  namespace: string;
  runnerNamespaces: string[];
  stateDir: string;
  out: string;
  minutes: number;
}

/** The flags, checked: every refusal names the flag and comes before anything is made. */
function answersFrom(text: (k: string) => string, root: string): Answers {
  const need = (k: string): string => {
    if (text(k) === "") throw new Refused(`--${k} is needed: ${OPTIONS[k as keyof typeof OPTIONS].help}. Nothing was created.`);
    return text(k);
  };
  if (text("target") !== "cluster")
    throw new Refused(`--target ${JSON.stringify(text("target"))}: the one target is cluster (without --target, setup deploys to Cloudflare)`);
  const org = need("org");
  const login = checkLogin("--org", org);
  if (!login.ok) throw new Refused(login.problem);
  const host = need("host");
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/i.test(host))
    throw new Refused(`--host must be a host name, e.g. arc-reaper.example.com; got ${JSON.stringify(host)}`);
  const runnerNamespaces = splitList(text("namespaces"));
  for (const check of [checkLabels("--namespaces", runnerNamespaces), checkLabels("--namespace", [text("namespace")])]) {
    if (!check.ok) throw new Refused(check.problem);
  }
  const minutes = Number(text("wait-minutes"));
  if (!Number.isInteger(minutes) || minutes < 1)
    throw new Refused(`--wait-minutes must be a whole number of minutes, 1 or more; got ${JSON.stringify(text("wait-minutes"))}`);
  const stateDir = resolve(text("state-dir"));
  // The image this version's release publishes, unless --image names a mirror or a build of your own.
  const image = text("image") || readRelease(root).serverImage;
  return { org, host, image, namespace: text("namespace"), runnerNamespaces, stateDir, out: resolve(text("out") || join(stateDir, "server")), minutes };
}

/** What setup is about to do, in lines a reviewer reads before saying yes. */
function planLines(a: Answers, k: Kubectl, server: string, appId: string | undefined): string[] {
  return [
    `kubectl context ${k.context} (API server ${server})`,
    `GitHub App: ${appId === undefined ? `made by the manifest flow for ${a.org}, webhook https://${a.host}/webhook` : `App ${appId}, its key and webhook secret from the files given`}`,
    `Overlay, written to ${relative(process.cwd(), a.out) || a.out}, bases by URL at v${readRelease(k.root).version}: commit it`,
    `Namespace ${a.namespace}: ServiceAccount, ConfigMap arc-reaper-settings-<hash>, PersistentVolumeClaim, Deployment (image ${a.image}), Service, NetworkPolicy, Ingress for https://${a.host}/webhook`,
    `Runner namespaces ${a.runnerNamespaces.join(", ")}: Role and RoleBinding arc-reaper (get, list, delete on EphemeralRunners)`,
    `Secret ${a.namespace}/arc-reaper-secrets (GITHUB_APP_PRIVATE_KEY, GITHUB_WEBHOOK_SECRET, a new ADMIN_TOKEN), applied server-side: no annotation holds a value`,
    "Dry run stays on (REAPER_DRY_RUN=true): it decides and logs, and deletes nothing until you set it to false",
  ];
}

/** Yes from --yes (or --apply), or once from the person at the terminal; without either, refused. */
async function confirmed(v: Record<string, string | boolean | undefined>): Promise<boolean> {
  if (v["yes"] === true || v["apply"] === true) return true;
  if (process.stdin.isTTY !== true || process.stdout.isTTY !== true)
    throw new Refused("--yes is needed when setup cannot ask (no terminal): the plan above is what it would do. Nothing was created.");
  return clackPrompter.confirm({ message: "Go on? (nothing has been changed yet)", initial: true });
}

async function run(v: Record<string, string | boolean | undefined>, root: string, env: NodeJS.ProcessEnv): Promise<number> {
  const text = (k: string): string => (typeof v[k] === "string" ? (v[k] as string) : "");
  const a = answersFrom(text, root);
  const dotcom = (env.ARC_REAPER_SETUP_GITHUB_COM ?? "").split(/\s+/);
  const place = githubPlace(text("github-url"), text("github-api-url") || undefined, dotcom[0] && dotcom[1] ? { web: dotcom[0], api: dotcom[1] } : undefined);
  const context = await contextFor(root, "", true);
  if (!context) throw new Refused("kubectl has no current context: point it at your cluster first. Nothing was created.");
  const k = { root, context };

  say("== The plan");
  for (const line of planLines(a, k, await contextServer(k), text("app-id") || undefined)) say(`  - ${line}`);
  const overlay = (appId: number | undefined): ServerOverlay => ({
    namespace: a.namespace,
    host: a.host,
    image: a.image,
    appId,
    runnerNamespaces: a.runnerNamespaces,
    githubApiUrl: place.api,
  });
  if (v["dry-run"] === true) {
    const scratch = mkdtempSync(join(tmpdir(), "arc-reaper-setup-dry-run-"));
    try {
      say("== The YAML it would apply (--dry-run: nothing was made, written or applied)");
      say(await renderOverlay(root, writeServerOverlay(root, join(scratch, "server"), overlay(text("app-id") ? Number(text("app-id")) : undefined))));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    return 0;
  }
  if (!(await confirmed(v))) {
    say("Nothing was changed.");
    return 1;
  }

  say("== 1. The GitHub App");
  const secrets = new Map<string, string>();
  let appId: number;
  if (text("app-id") !== "") {
    appId = Number(text("app-id"));
    if (text("app-key-file") === "" || text("webhook-secret-file") === "")
      throw new Refused("--app-id needs --app-key-file and --webhook-secret-file (that App's key and webhook secret). Nothing was created.");
    secrets.set("GITHUB_APP_PRIVATE_KEY", readFileSync(text("app-key-file"), "utf8").trim());
    secrets.set("GITHUB_WEBHOOK_SECRET", readFileSync(text("webhook-secret-file"), "utf8").trim());
    say(`  done: using App ${appId}`);
  } else {
    const base = JSON.parse(readFileSync(join(root, "infra/github-app/manifest.json"), "utf8")) as Record<string, unknown>;
    const url = `https://${a.host}`;
    const manifest = { ...base, name: `arc-reaper-${a.org}`.slice(0, 34).replace(/-+$/, ""), url, hook_attributes: { url: `${url}/webhook`, active: true } };
    const accountType = text("account-type") === "user" ? "user" : "org";
    const flow = await startManifestFlow({ place, accountType, org: a.org, manifest });
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
  const dir = writeServerOverlay(root, a.out, overlay(appId));
  say(`  done: ${relative(process.cwd(), dir) || dir}, ready to commit; no secrets in it`);

  say(`== 3. Apply (kubectl context ${context})`);
  await applyStdin(k, await renderOverlay(root, dir));
  await applyServerSide(k, serverSecretYaml(a.namespace, Object.fromEntries(secrets)));
  secrets.clear();
  say(`  done: the overlay's objects, and Secret ${a.namespace}/arc-reaper-secrets server-side through kubectl's stdin`);

  say("== 4. The rollout and /healthz/deep");
  return (await healthy(k, a, text("health-url"), adminToken)) ? 0 : 1;
}

/** The overlay as it will be applied: rendered from this checkout's copy of the bases it names (no network). */
async function renderOverlay(root: string, dir: string): Promise<string> {
  const local = localOverlayCopy(root, dir);
  try {
    return await kustomize(root, local.dir);
  } finally {
    local.done();
  }
}

/** The pod ready, then every dependency checked by /healthz/deep; the admin token goes only to 127.0.0.1 (or the --health-url given). */
async function healthy(k: Kubectl, a: Answers, healthUrl: string, adminToken: string): Promise<boolean> {
  const rollout = await rolloutStatus(k, a.namespace, a.minutes);
  if (!rollout.ok) {
    say(`  not ready: ${rollout.out}\n  kubectl -n ${a.namespace} logs deploy/arc-reaper says why`);
    return false;
  }
  const forward = healthUrl === "" ? await startPortForward(k, a.namespace) : undefined;
  try {
    const health = `${(forward?.url ?? healthUrl).replace(/\/+$/, "")}/healthz/deep`;
    const deadline = Date.now() + a.minutes * 60_000;
    for (;;) {
      const answer = await fetch(health, { headers: { authorization: `Bearer ${adminToken}` }, signal: AbortSignal.timeout(10_000) })
        .then(async (r) => ({ status: r.status, body: await r.text() }))
        .catch((e: unknown) => ({ status: 0, body: e instanceof Error ? e.message : String(e) }));
      if (answer.status === 200) break;
      if (Date.now() > deadline) {
        say(
          `  not yet: /healthz/deep answered ${answer.status || "nothing"} (${answer.body.slice(0, 300)}); kubectl -n ${a.namespace} logs deploy/arc-reaper says why`,
        );
        return false;
      }
      await new Promise((r) => setTimeout(r, 2_000));
    }
  } finally {
    forward?.stop();
  }
  say(`  done: every check passed; arc-reaper runs in ${a.namespace}, in dry run`);
  say(`  The admin token is in the Secret only: kubectl -n ${a.namespace} get secret arc-reaper-secrets -o jsonpath='{.data.ADMIN_TOKEN}' | base64 -d`);
  return true;
}
