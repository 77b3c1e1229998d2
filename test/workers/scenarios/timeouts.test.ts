// A stand-in that answers too slowly: the cluster and GitHub edges give up at
// their timeout with an error that says so, and the sweep keeps.
import { expect, inject, it } from "vitest";
import { ClusterError, createCluster } from "../../../src/cluster/ephemeral-runners.ts";
import { newCallBudget } from "../../../src/github/call-budget.ts";
import { createGithub, GithubError } from "../../../src/github/github-client.ts";
import { newGithubCache } from "../../../src/github/installation-and-rate-memory.ts";
import { createGithubTenant } from "../../standins/github/control.ts";
import { createKubeTenant, makeEphemeralRunner } from "../../standins/kube/control.ts";
import { sleep, waitFor } from "../support/wait-for.ts";

it("a slow API server: list and delete time out, named as such, and the delete is not applied", async () => {
  const kube = await createKubeTenant(inject("kubeStandinUrl"));
  const er = await kube.seed(makeEphemeralRunner({ namespace: "arc-runners", scaleSet: "arc-runners", name: "arc-runners-slow-runner-1" }));
  const cluster = createCluster({ apiUrl: kube.baseUrl, token: kube.adminToken, timeoutMs: 200 });
  const DELAY_MS = 600;
  await kube.addFault({ match: {}, delayMs: DELAY_MS });
  const listed = await cluster.listRunners("arc-runners").catch((e: unknown) => e);
  expect(listed).toBeInstanceOf(ClusterError);
  expect((listed as Error).message).toBe("listing ephemeralrunners in arc-runners: timed out");
  const sentAt = Date.now();
  expect(await cluster.deleteRunner({ namespace: "arc-runners", name: er.metadata.name, uid: er.metadata.uid })).toEqual({
    kind: "failed",
    status: null,
    why: "timed out",
  });
  await kube.clearFaults();
  // The DELETE reached the stand-in and was dropped unanswered when the client gave up (status 0)...
  const dropped = await waitFor("the stand-in to record the dropped DELETE", async () =>
    (await kube.calls()).find((c) => c.method === "DELETE" && c.status === 0),
  );
  expect(dropped.body).toMatchObject({ preconditions: { uid: er.metadata.uid } });
  // ...and once the stand-in's delay has run out, when a delete it still held would have been applied, the object is untouched.
  await sleep(sentAt + DELAY_MS + 300 - Date.now());
  expect((await kube.get("arc-runners", er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
  expect((await kube.calls()).filter((c) => c.method === "DELETE").map((c) => c.status)).toEqual([0]);
});

it("a slow GitHub: the read times out with a GithubError that says so", async () => {
  const github = await createGithubTenant(inject("githubStandinUrl"));
  await github.addInstallation({ id: 77, repositories: ["o/r"] });
  const job = await github.putJob({ repo: "o/r", run_id: 1, status: "in_progress", runner_name: "arc-x-1" });
  const client = createGithub({
    apiUrl: github.baseUrl,
    appId: String(github.appId),
    privateKey: github.privateKeyPkcs1,
    budget: newCallBudget(10),
    cache: newGithubCache(),
    timeoutMs: 200,
  });
  await github.addFault({ match: { pathIncludes: "/actions/jobs/" }, delayMs: 2000 });
  const error = await client.job("o/r", Number(job.id), 77).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(GithubError);
  expect((error as Error).message).toBe(`reading job ${job.id} in o/r: timed out`);
});
