// A stand-in that answers too slowly: the cluster and GitHub edges give up at
// their timeout with an error that says so, and the sweep keeps.
import { expect, inject, it } from "vitest";
import { ClusterError, createCluster } from "../../src/cluster/ephemeral-runners.ts";
import { newCallBudget } from "../../src/github/call-budget.ts";
import { createGithub, GithubError } from "../../src/github/github-client.ts";
import { newGithubCache } from "../../src/github/github-memory.ts";
import { createGithubTenant } from "../standins/github/control.ts";
import { createKubeTenant, makeEphemeralRunner } from "../standins/kube/control.ts";

it("a slow API server: list and delete time out, named as such, and the delete is not applied", async () => {
  const kube = await createKubeTenant(inject("kubeStandinUrl"));
  const er = await kube.seed(makeEphemeralRunner({ namespace: "arc-runners", scaleSet: "arc-runners", name: "arc-runners-slow-runner-1" }));
  const cluster = createCluster({ apiUrl: kube.baseUrl, token: kube.adminToken, timeoutMs: 200 });
  await kube.addFault({ match: {}, delayMs: 2000 });
  const listed = await cluster.listRunners("arc-runners").catch((e: unknown) => e);
  expect(listed).toBeInstanceOf(ClusterError);
  expect((listed as Error).message).toBe("listing ephemeralrunners in arc-runners: timed out");
  expect(await cluster.deleteRunner({ namespace: "arc-runners", name: er.metadata.name, uid: er.metadata.uid })).toEqual({ kind: "failed", status: null, why: "timed out" });
  await kube.clearFaults();
  expect((await kube.get("arc-runners", er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
});

it("a slow GitHub: the read times out with a GithubError that says so", async () => {
  const github = await createGithubTenant(inject("githubStandinUrl"));
  await github.addInstallation({ id: 77, repositories: ["o/r"] });
  const job = await github.putJob({ repo: "o/r", run_id: 1, status: "in_progress", runner_name: "arc-x-1" });
  const client = createGithub({ apiUrl: github.baseUrl, appId: String(github.appId), privateKey: github.privateKeyPkcs1, budget: newCallBudget(10), cache: newGithubCache(), timeoutMs: 200 });
  await github.addFault({ match: { pathIncludes: "/actions/jobs/" }, delayMs: 2000 });
  const error = await client.job("o/r", Number(job.id), 77).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(GithubError);
  expect((error as Error).message).toBe(`reading job ${job.id} in o/r: timed out`);
});
