// Starts the stand-in GitHub and Kubernetes API servers in Node for the whole
// test run; tests inside workerd reach them over real HTTP at the provided URLs.
// Each test creates its own tenant on them (POST /__tenants), so files can run
// in parallel without sharing state.
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { TestProject } from "vitest/node";
import { startGithubStandin } from "./github/server.ts";
import { startKubeStandin } from "./kube/server.ts";
import { loadReaperRbac, type ReaperRbac } from "../node/infra/infra-rbac.ts";

declare module "vitest" {
  export interface ProvidedContext {
    githubStandinUrl: string;
    kubeStandinUrl: string;
    /** The RBAC of infra/kubernetes for the runner namespace arc-runners, read from the manifests. */
    reaperRbac: ReaperRbac;
    /** POST text here to have it printed at the end of the run (passing tests' logs are silenced). */
    reportUrl: string;
    /** The real payloads of @octokit/webhooks-examples for the events arc-reaper reads. */
    webhookExamples: { name: string; examples: Record<string, unknown>[] }[];
    /** SOAK_SEED from the shell (tests inside workerd cannot read Node's environment). */
    soakSeed: string | undefined;
  }
}

export default async function setup(project: TestProject) {
  const github = await startGithubStandin();
  const kube = await startKubeStandin();
  project.provide("githubStandinUrl", github.url);
  project.provide("kubeStandinUrl", kube.url);
  project.provide("reaperRbac", loadReaperRbac("arc-runners"));
  project.provide("soakSeed", process.env.SOAK_SEED);
  // The package's index is 4 MB; workerd's test channel refuses messages that big
  // when a second test file loads it, so only the events we use cross over.
  const all = createRequire(import.meta.url)("@octokit/webhooks-examples") as { name: string; examples: Record<string, unknown>[] }[];
  project.provide(
    "webhookExamples",
    all.filter((e) => ["workflow_job", "workflow_run", "ping", "installation", "installation_repositories"].includes(e.name)),
  );
  const reports: string[] = [];
  const reporter = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      reports.push(body);
      res.end();
    });
  });
  await new Promise<void>((resolve) => reporter.listen(0, "127.0.0.1", resolve));
  const address = reporter.address();
  project.provide("reportUrl", `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`);
  return async () => {
    await Promise.all([github.close(), kube.close(), new Promise<void>((resolve) => reporter.close(() => resolve()))]);
    for (const line of reports) process.stdout.write(`${line}\n`);
  };
}
