// Starts the stand-in GitHub and Kubernetes API servers in Node for the whole
// test run; tests inside workerd reach them over real HTTP at the provided URLs.
// Each test creates its own tenant on them (POST /__tenants), so files can run
// in parallel without sharing state.
import type { TestProject } from "vitest/node";
import { startGithubStandin } from "./github/server.ts";
import { startKubeStandin } from "./kube/server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    githubStandinUrl: string;
    kubeStandinUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const github = await startGithubStandin();
  const kube = await startKubeStandin();
  project.provide("githubStandinUrl", github.url);
  project.provide("kubeStandinUrl", kube.url);
  return async () => {
    await Promise.all([github.close(), kube.close()]);
  };
}
