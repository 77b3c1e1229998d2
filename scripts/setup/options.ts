// The command line: one flag per answer, --yes to ask nothing (every answer
// missing then takes its default, or is an error when it has none).
import { parseArgs, type ParseArgsConfig } from "node:util";

export const FLAGS = {
  org: { type: "string", help: "the GitHub organization (or, with --account-type user, your user name) that owns the App" },
  "account-type": { type: "string", help: "org (default) or user: where the App is made" },
  "github-url": { type: "string", help: "https://github.com (default) or your GitHub Enterprise Server, e.g. https://github.example.com" },
  "github-api-url": { type: "string", help: "the REST API, when not https://api.github.com or <github-url>/api/v3" },
  name: { type: "string", help: "the Worker's name (default arc-reaper); it is in its URL" },
  mode: { type: "string", help: "agent (default: an agent in the cluster dials out) or direct (the Worker calls the API server)" },
  clusters: { type: "string", help: "agent mode: cluster names, comma-separated DNS labels (default: default)" },
  namespaces: { type: "string", help: "runner namespaces, comma-separated (default arc-runners)" },
  "agent-image": {
    type: "string",
    help: "agent mode: the agent's image (default: the one this version's release publishes, ghcr.io/<owner>/arc-reaper-agent:<version>)",
  },
  "kube-api-url": { type: "string", help: "direct mode: the API server as the Worker reaches it (https://, publicly trusted)" },
  "app-id": { type: "string", help: "use an App you already have (its id) instead of making one; with --app-key-file" },
  "app-key-file": { type: "string", help: "that App's private key (.pem); read once, never copied" },
  "webhook-secret-file": { type: "string", help: "that App's webhook secret, in a file (set a new one on its settings page); with --app-id" },
  "worker-url": { type: "string", help: "the Worker's URL, when not the workers.dev one wrangler reports (a route of your own)" },
  "wrangler-config": { type: "string", help: "the config setup writes the deployment into (default ./wrangler.toml; commit it)" },
  env: { type: "string", help: "the wrangler environment that is this deployment (default production): [env.NAME] in that config" },
  "state-dir": { type: "string", help: "where setup keeps its progress and the agent overlays (default .setup/)" },
  "wait-minutes": { type: "string", help: "how long to wait for /healthz/deep to pass (default 30)" },
  apply: { type: "boolean", help: "apply to the cluster with kubectl (its current context) without asking" },
  replace: { type: "boolean", help: "allow replacing what setup did not make: an existing Worker, its secrets, the agent's Secret" },
  "show-tokens": { type: "boolean", help: "print the admin and metrics tokens at the end (interactive mode always does, once)" },
  yes: { type: "boolean", short: "y", help: "ask nothing: flags or defaults for every answer" },
  help: { type: "boolean", short: "h", help: "this list" },
} as const;

/** The flags that are answers (kept in <state dir>/answers.json); the rest say how to run. */
export const ANSWER_FLAGS = [
  "org",
  "account-type",
  "github-url",
  "github-api-url",
  "name",
  "mode",
  "clusters",
  "namespaces",
  "agent-image",
  "kube-api-url",
  "app-id",
  "app-key-file",
  "webhook-secret-file",
  "worker-url",
  "wrangler-config",
  "env",
] as const satisfies readonly (keyof typeof FLAGS)[];
export type AnswerFlag = (typeof ANSWER_FLAGS)[number];

export type Flags = { [K in keyof typeof FLAGS]?: (typeof FLAGS)[K]["type"] extends "string" ? string : boolean };

export function parseFlags(argv: string[]): Flags {
  const options: ParseArgsConfig["options"] = Object.fromEntries(
    Object.entries(FLAGS).map(([k, v]) => [k, "short" in v ? { type: v.type, short: v.short } : { type: v.type }]),
  );
  const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  return values as Flags;
}

export function helpText(): string {
  const rows = Object.entries(FLAGS).map(([k, v]) => {
    const flag = `--${k}${v.type === "string" ? " VALUE" : ""}${"short" in v ? `, -${v.short}` : ""}`;
    return `  ${flag.padEnd(30)} ${v.help}`;
  });
  return [
    "npm run setup [-- FLAGS]: from a clone to arc-reaper deployed in dry run.",
    "",
    "Makes the GitHub App (manifest flow, one click in your browser), deploys the Worker",
    "with REAPER_DRY_RUN=true and its secrets, writes the agent's overlay per cluster and",
    "applies it (or prints the one command to), then waits for /healthz/deep to pass.",
    "Interactive unless --yes; any answer given as a flag is not asked. Safe to stop and",
    "run again: the answers are kept in <state dir>/answers.json from the first one given",
    "(a flag replaces one), it resumes where it stopped and never replaces what it did not make.",
    "Before the first change it shows what it will do and asks once (--yes: shows it and goes on).",
    "",
    ...rows,
    "",
    "Cloudflare: wrangler's own login (npx wrangler login), or, on a machine without a browser,",
    "CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID (the token's permissions: docs/deploy.md#a-cloudflare-api-token).",
  ].join("\n");
}
