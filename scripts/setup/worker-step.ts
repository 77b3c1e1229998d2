// Step 1: the Worker, deployed in dry run from its environment in the config a
// team commits (wrangler-config.ts). A Worker of that name that setup did not
// make is named and kept, unless --replace.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { StepError, type StepContext } from "./context.ts";
import { deploy, ensureLogin, secretNames } from "./wrangler.ts";
import { renderEnvironment, setupBlock } from "./wrangler-config.ts";

export function workerVars(c: StepContext): Record<string, string> {
  const { a } = c;
  const vars: Record<string, string> = {
    GITHUB_API_URL: a.github.api,
    REAPER_NAMESPACES: a.namespaces.join(","),
    REAPER_DRY_RUN: "true",
    CLUSTER_MODE: a.mode,
  };
  if (a.mode === "agent" && (a.clusters.length > 1 || a.clusters[0] !== "default")) vars["AGENT_CLUSTERS"] = a.clusters.join(",");
  if (a.mode === "direct") {
    vars["KUBE_API_URL"] = a.kubeApiUrl ?? "";
    vars["KUBE_CLUSTER_NAME"] = a.clusters[0] ?? "default";
  }
  return vars;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The command that deploys the deployment's config, as the docs give it. */
export function deployCommand(c: StepContext): string {
  const config = relative(c.root, c.wrangler.config);
  return `npm run deploy -- --env ${c.wrangler.env}${config === "wrangler.toml" ? "" : ` --config ${config}`}`;
}

/**
 * Writes setup's environment into the config and answers its digest (a changed
 * answer changes it, and the Worker is deployed again). A block edited since
 * setup wrote it (e.g. REAPER_DRY_RUN = "false", step 8) is the user's now:
 * kept, never rewritten.
 */
export function writeWorkerConfig(c: StepContext): { digest: string; edited: boolean } {
  const text = readFileSync(c.wrangler.config, "utf8");
  const current = setupBlock(text, c.wrangler.env);
  const deployed = c.state.worker?.digest;
  if (deployed && current !== undefined && sha256(current) !== deployed) return { digest: sha256(current), edited: true };
  if (current === undefined && new RegExp(`^\\s*\\[env\\.${c.wrangler.env}[\\].]`, "m").test(text))
    throw new StepError(
      `${c.wrangler.config} already has [env.${c.wrangler.env}] without setup's marker lines: kept. Add the marker lines around it (docs/deploy.md, step 4) or choose another --env.`,
    );
  const next = renderEnvironment(text, c.wrangler.env, c.a.name, workerVars(c));
  if (next !== text) writeFileSync(c.wrangler.config, next);
  return { digest: sha256(setupBlock(next, c.wrangler.env) ?? ""), edited: false };
}

export async function workerStep(c: StepContext): Promise<void> {
  c.say.step("1. The Worker, in dry run");
  const { digest, edited } = writeWorkerConfig(c);
  const done = c.state.worker;
  if (done && edited) {
    c.say.done(
      `[env.${c.wrangler.env}] in ${c.wrangler.config} was edited since setup deployed it: kept as you left it, not deployed (${deployCommand(c)} deploys it)`,
    );
    return;
  }
  if (done && done.name === c.a.name && done.digest === digest) {
    c.say.done(`Worker ${done.name} was deployed by an earlier run (${done.url}): kept as it is`);
    return;
  }
  try {
    if ((await ensureLogin(c.wrangler, c.a.interactive)) === "login") c.say.done("logged in to Cloudflare (wrangler login)");
  } catch (e) {
    throw new StepError(e instanceof Error ? e.message : String(e));
  }
  const existing = await secretNames(c.wrangler);
  const ours = (done?.name === c.a.name && done.createdBySetup) || (c.state.deploying?.name === c.a.name && c.state.deploying.createdBySetup);
  if (existing !== undefined && !ours && !c.a.replace) {
    throw new StepError(
      `A Worker named ${c.a.name} already exists on this Cloudflare account and setup did not make it: kept. Choose another --name, or add --replace to deploy arc-reaper over it.`,
    );
  }
  c.state.deploying = { name: c.a.name, createdBySetup: ours || existing === undefined };
  c.save();
  c.say.info(`deploying ${c.a.name} with REAPER_DRY_RUN=true (config: [env.${c.wrangler.env}] in ${c.wrangler.config}) ...`);
  const reported = await deploy(c.wrangler);
  const url = c.a.workerUrl ?? reported;
  if (!url) throw new StepError("wrangler deployed the Worker but reported no workers.dev URL: give the Worker's URL with --worker-url and run again");
  c.state.worker = { name: c.a.name, url, createdBySetup: ours || existing === undefined, config: c.wrangler.config, digest };
  delete c.state.deploying;
  c.save();
  c.say.done(
    `${existing === undefined ? "deployed" : ours ? "deployed again (an answer changed)" : "deployed over the existing"} Worker ${c.a.name} at ${url} (dry run: it deletes nothing)`,
  );
}
