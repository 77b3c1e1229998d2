// Step 1: the Worker, deployed in dry run from setup's own config. A Worker of
// that name that setup did not make is named and kept, unless --replace.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { StepError, type StepContext } from "./context.ts";
import { deploy, secretNames } from "./wrangler.ts";
import { renderWranglerConfig } from "./wrangler-config.ts";

export function workerVars(c: StepContext): Record<string, string> {
  const { a } = c;
  const vars: Record<string, string> = { GITHUB_API_URL: a.github.api, REAPER_NAMESPACES: a.namespaces.join(","), REAPER_DRY_RUN: "true", CLUSTER_MODE: a.mode };
  if (a.mode === "agent" && (a.clusters.length > 1 || a.clusters[0] !== "default")) vars["AGENT_CLUSTERS"] = a.clusters.join(",");
  if (a.mode === "direct") {
    vars["KUBE_API_URL"] = a.kubeApiUrl ?? "";
    vars["KUBE_CLUSTER_NAME"] = a.clusters[0] ?? "default";
  }
  return vars;
}

export function writeWorkerConfig(c: StepContext): void {
  const source = c.a.wranglerConfig ?? join(c.root, "wrangler.toml");
  mkdirSync(c.a.stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(c.wrangler.config, renderWranglerConfig(readFileSync(source, "utf8"), source, c.wrangler.config, c.a.name, workerVars(c)));
}

export async function workerStep(c: StepContext): Promise<void> {
  c.say.step("1. The Worker, in dry run");
  writeWorkerConfig(c);
  const done = c.state.worker;
  if (done && done.name === c.a.name) {
    c.say.done(`Worker ${done.name} was deployed by an earlier run (${done.url}): kept as it is`);
    return;
  }
  const existing = await secretNames(c.wrangler, c.a.name);
  if (existing !== undefined && !c.a.replace) {
    throw new StepError(`A Worker named ${c.a.name} already exists on this Cloudflare account and setup did not make it: kept. Choose another --name, or add --replace to deploy arc-reaper over it.`);
  }
  c.say.info(`deploying ${c.a.name} with REAPER_DRY_RUN=true (config: ${c.wrangler.config}) ...`);
  const reported = await deploy(c.wrangler, c.a.name);
  const url = c.a.workerUrl ?? reported;
  if (!url) throw new StepError("wrangler deployed the Worker but reported no workers.dev URL: give the Worker's URL with --worker-url and run again");
  c.state.worker = { name: c.a.name, url, createdBySetup: existing === undefined, config: c.wrangler.config };
  c.save();
  c.say.done(`${existing === undefined ? "deployed" : "deployed over the existing"} Worker ${c.a.name} at ${url} (dry run: it deletes nothing)`);
}
