// The answers, from flags first and then, in interactive mode, from questions
// for what is missing. Everything is checked before any step runs.
import { join, resolve } from "node:path";
import { readRelease } from "../lib/release.ts";
import { GITHUB_COM, githubPlace, type GithubPlace } from "./github-urls.ts";
import type { AnswerFlag, Flags } from "./options.ts";
import type { Prompter } from "./prompter.ts";
import {
  checkAppId,
  checkFile,
  checkImage,
  checkLabels,
  checkLogin,
  checkPrivateKey,
  checkWaitMinutes,
  checkWebUrl,
  checkWorkerName,
  splitList,
  type Check,
} from "./validate.ts";

export interface Answers {
  org: string;
  accountType: "org" | "user";
  github: GithubPlace;
  name: string;
  mode: "agent" | "direct";
  clusters: string[];
  namespaces: string[];
  agentImage: string;
  kubeApiUrl: string | undefined;
  existingApp: { id: number; keyFile: string; webhookSecretFile: string | undefined } | undefined;
  workerUrl: string | undefined;
  /** The config the deployment is written into, as an environment (wrangler-config.ts). */
  wranglerConfig: string;
  env: string;
  stateDir: string;
  apply: boolean;
  replace: boolean;
  showTokens: boolean;
  interactive: boolean;
}

/** A bad answer: exit code 2, and nothing was created. */
export class AnswerError extends Error {}

function must(check: Check): void {
  if (!check.ok) throw new AnswerError(check.problem);
}
const asMessage = (check: Check) => (check.ok ? undefined : check.problem);

/** ARC_REAPER_SETUP_GITHUB_COM="WEB API": where "github.com" is (the tests' stand-in). */
function dotcomOverride(env: NodeJS.ProcessEnv): { web: string; api: string } | undefined {
  const [web, api] = (env["ARC_REAPER_SETUP_GITHUB_COM"] ?? "").split(/\s+/);
  return web && api ? { web, api } : undefined;
}

/** Asks one question: its flag if given, else the prompt (remembered at once), else its fallback; neither is an AnswerError naming `what`. */
type Ask = (key: AnswerFlag, fallback: string | undefined, question: (() => Promise<string>) | undefined, what: string) => Promise<string>;

function questions(flags: Flags, ask: Prompter | undefined, remember: (key: AnswerFlag, value: string) => void): Ask {
  return async (key, fallback, question, what) => {
    const flag = flags[key];
    if (flag !== undefined) return flag;
    if (ask && question) {
      const answer = await question();
      remember(key, answer);
      return answer;
    }
    if (fallback !== undefined) return fallback;
    throw new AnswerError(`${what} is needed: give it as a flag (npm run setup -- --help lists them)`);
  };
}

/**
 * `remember` is told each answer given to a question as soon as it is given
 * (saved-answers.ts keeps them), so a setup stopped mid-questions asks only the rest.
 */
export async function resolveAnswers(
  flags: Flags,
  ask: Prompter | undefined,
  root: string,
  env: NodeJS.ProcessEnv,
  remember: (key: AnswerFlag, value: string) => void = () => undefined,
): Promise<Answers> {
  const q = questions(flags, ask, remember);
  const { accountType, org } = await askOwner(q, ask);
  const github = await askGithub(q, ask, flags, env);
  const name = await askWorkerName(q, ask);
  const { mode, clusters, namespaces } = await askPlaces(q, ask, flags);
  const agentImage = await askAgentImage(q, ask, mode, root);
  const kubeApiUrl = mode === "direct" ? await askKubeApiUrl(q, ask) : undefined;
  const existingApp = existingAppOf(flags);
  const wranglerEnv = checkOtherFlags(flags);
  return {
    org,
    accountType,
    github,
    name,
    mode,
    clusters,
    namespaces,
    agentImage,
    kubeApiUrl,
    existingApp,
    workerUrl: flags["worker-url"]?.replace(/\/+$/, ""),
    wranglerConfig: resolve(flags["wrangler-config"] ?? join(root, "wrangler.toml")),
    env: wranglerEnv,
    stateDir: resolve(flags["state-dir"] ?? join(root, ".setup")),
    apply: flags.apply === true,
    replace: flags.replace === true,
    showTokens: flags["show-tokens"] === true || ask !== undefined,
    interactive: ask !== undefined,
  };
}

/** Who owns the GitHub App: an organization or a user, and its login. */
async function askOwner(q: Ask, ask: Prompter | undefined): Promise<{ accountType: Answers["accountType"]; org: string }> {
  const accountType = await q(
    "account-type",
    "org",
    ask &&
      (() =>
        ask.select({
          message: "Who owns the GitHub App?",
          options: [
            { value: "org", label: "an organization", hint: "recommended" },
            { value: "user", label: "my personal account" },
          ],
          initial: "org",
        })),
    "--account-type",
  );
  if (accountType !== "org" && accountType !== "user") throw new AnswerError(`--account-type ${JSON.stringify(accountType)} must be org or user`);
  const orgWhat = accountType === "org" ? "--org (the organization)" : "--org (your GitHub user name)";
  const org = await q(
    "org",
    undefined,
    ask &&
      (() =>
        ask.text({
          message: accountType === "org" ? "The organization's name on GitHub" : "Your GitHub user name",
          placeholder: "octo-org",
          validate: (v) => asMessage(checkLogin("--org", v)),
        })),
    orgWhat,
  );
  must(checkLogin("--org", org));
  return { accountType, org };
}

/** github.com or a GitHub Enterprise Server, web and API. */
async function askGithub(q: Ask, ask: Prompter | undefined, flags: Flags, env: NodeJS.ProcessEnv): Promise<GithubPlace> {
  const githubUrl = await q(
    "github-url",
    GITHUB_COM,
    ask &&
      (() =>
        ask.text({
          message: "GitHub: https://github.com, or your GitHub Enterprise Server's URL",
          initial: GITHUB_COM,
          validate: (v) => asMessage(checkWebUrl("--github-url", v)),
        })),
    "--github-url",
  );
  must(checkWebUrl("--github-url", githubUrl));
  if (flags["github-api-url"] !== undefined) must(checkWebUrl("--github-api-url", flags["github-api-url"]));
  return githubPlace(githubUrl, flags["github-api-url"], dotcomOverride(env));
}

async function askWorkerName(q: Ask, ask: Prompter | undefined): Promise<string> {
  const name = await q(
    "name",
    "arc-reaper",
    ask && (() => ask.text({ message: "The Worker's name (it is in its URL)", initial: "arc-reaper", validate: (v) => asMessage(checkWorkerName(v)) })),
    "--name",
  );
  must(checkWorkerName(name));
  return name;
}

/** Agent or direct mode, the clusters (one in direct mode) and the runners' namespaces. */
async function askPlaces(q: Ask, ask: Prompter | undefined, flags: Flags): Promise<Pick<Answers, "mode" | "clusters" | "namespaces">> {
  const mode = await q(
    "mode",
    "agent",
    ask &&
      (() =>
        ask.select({
          message: "How does the Worker reach the cluster?",
          options: [
            { value: "agent", label: "agent mode", hint: "an agent in the cluster dials out; nothing to expose (recommended)" },
            { value: "direct", label: "direct mode", hint: "the API server has a public, publicly trusted endpoint" },
          ],
          initial: "agent",
        })),
    "--mode",
  );
  if (mode !== "agent" && mode !== "direct") throw new AnswerError(`--mode ${JSON.stringify(mode)} must be agent or direct`);
  const clustersText =
    mode === "agent"
      ? await q(
          "clusters",
          "default",
          ask &&
            (() =>
              ask.text({
                message: "Cluster names, comma-separated (one agent each)",
                initial: "default",
                validate: (v) => asMessage(checkLabels("--clusters", splitList(v))),
              })),
          "--clusters",
        )
      : (flags.clusters ?? "default");
  const clusters = splitList(clustersText);
  must(checkLabels("--clusters", clusters));
  if (mode === "direct" && clusters.length > 1) throw new AnswerError("--clusters: direct mode serves one cluster; use agent mode for several");
  const namespaces = splitList(
    await q(
      "namespaces",
      "arc-runners",
      ask &&
        (() =>
          ask.text({
            message: "Runner namespaces, comma-separated (where ARC's runners live)",
            initial: "arc-runners",
            validate: (v) => asMessage(checkLabels("--namespaces (REAPER_NAMESPACES)", splitList(v))),
          })),
      "--namespaces",
    ),
  );
  must(checkLabels("--namespaces (REAPER_NAMESPACES)", namespaces));
  return { mode, clusters, namespaces };
}

/** The agent's image: the release's unless asked otherwise (agent mode only). */
async function askAgentImage(q: Ask, ask: Prompter | undefined, mode: Answers["mode"], root: string): Promise<string> {
  // The image the release workflow publishes for this version (scripts/lib/release.ts).
  const defaultImage = readRelease(root).agentImage;
  const agentImage =
    mode === "agent"
      ? await q(
          "agent-image",
          defaultImage,
          ask &&
            (() =>
              ask.text({
                message: "The agent's image (docker build . && docker push it there)",
                initial: defaultImage,
                validate: (v) => asMessage(checkImage(v)),
              })),
          "--agent-image",
        )
      : defaultImage;
  must(checkImage(agentImage));
  return agentImage;
}

/** Direct mode: the API server as the Worker reaches it. */
async function askKubeApiUrl(q: Ask, ask: Prompter | undefined): Promise<string> {
  const kubeApiUrl = await q(
    "kube-api-url",
    undefined,
    ask &&
      (() =>
        ask.text({
          message: "The API server as the Worker reaches it (https://, publicly trusted): KUBE_API_URL",
          validate: (v) => asMessage(checkWebUrl("--kube-api-url (KUBE_API_URL)", v)),
        })),
    "--kube-api-url",
  );
  must(checkWebUrl("--kube-api-url (KUBE_API_URL)", kubeApiUrl));
  return kubeApiUrl;
}

/** An existing App's id, key file and webhook secret file, checked now: by the App step the Worker would be deployed. */
function existingAppOf(flags: Flags): Answers["existingApp"] {
  let existingApp: Answers["existingApp"];
  if (flags["app-id"] !== undefined || flags["app-key-file"] !== undefined || flags["webhook-secret-file"] !== undefined) {
    if (flags["app-id"] === undefined || flags["app-key-file"] === undefined)
      throw new AnswerError("--app-id and --app-key-file go together (an existing App's id and its private key file)");
    must(checkAppId(flags["app-id"]));
    // Checked here, not when the App step reads them: by then the Worker would be deployed.
    if (flags["webhook-secret-file"] === undefined)
      throw new AnswerError(
        `--app-id ${flags["app-id"]}: setup also needs that App's webhook secret, in a file given with --webhook-secret-file (on the App's settings page, set a new one and save it to that file)`,
      );
    must(checkPrivateKey(resolve(flags["app-key-file"])));
    must(checkFile("--webhook-secret-file", resolve(flags["webhook-secret-file"])));
    existingApp = {
      id: Number(flags["app-id"]),
      keyFile: resolve(flags["app-key-file"]),
      webhookSecretFile: flags["webhook-secret-file"] && resolve(flags["webhook-secret-file"]),
    };
  }
  return existingApp;
}

/** The flags no question asks for, checked; answers the wrangler environment. */
function checkOtherFlags(flags: Flags): string {
  if (flags["worker-url"] !== undefined) must(checkWebUrl("--worker-url", flags["worker-url"]));
  if (flags["wrangler-config"] !== undefined) must(checkFile("--wrangler-config", resolve(flags["wrangler-config"])));
  if (flags["wait-minutes"] !== undefined) must(checkWaitMinutes(flags["wait-minutes"]));
  const wranglerEnv = flags.env ?? "production";
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(wranglerEnv))
    throw new AnswerError(`--env ${JSON.stringify(wranglerEnv)} is not a wrangler environment name (letters, digits, _ and -)`);
  return wranglerEnv;
}
