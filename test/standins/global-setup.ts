// Starts the stand-in GitHub and Kubernetes API servers in Node for the whole
// test run; tests inside workerd reach them over real HTTP at the provided URLs.
// Each test creates its own tenant on them (POST /__tenants), so files can run
// in parallel without sharing state.
import { createRequire } from "node:module";
import type { TestProject } from "vitest/node";
import { startGithubStandin } from "./github/server.ts";
import { startKubeStandin } from "./kube/server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    githubStandinUrl: string;
    kubeStandinUrl: string;
    /** The real payloads of @octokit/webhooks-examples for the events arc-reaper reads. */
    webhookExamples: { name: string; examples: Record<string, unknown>[] }[];
  }
}

export default async function setup(project: TestProject) {
  const github = await startGithubStandin();
  const kube = await startKubeStandin();
  project.provide("githubStandinUrl", github.url);
  project.provide("kubeStandinUrl", kube.url);
  // The package's index is 4 MB; workerd's test channel refuses messages that big
  // when a second test file loads it, so only the events we use cross over.
  const all = createRequire(import.meta.url)("@octokit/webhooks-examples") as { name: string; examples: Record<string, unknown>[] }[];
  project.provide("webhookExamples", all.filter((e) => ["workflow_job", "workflow_run", "ping"].includes(e.name)));
  return async () => {
    await Promise.all([github.close(), kube.close()]);
  };
}
