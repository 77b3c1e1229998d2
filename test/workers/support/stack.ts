// A whole arc-reaper world for one test: a fresh GitHub App tenant and a fresh
// cluster tenant on the stand-ins (reached over real HTTP), and the Worker's
// env pointing at them.
import { inject } from "vitest";
import { createGithubTenant, type GithubTenant, type TenantOptions } from "../../standins/github/control.ts";
import { standinRunnerId } from "../../standins/github/runner-id.ts";
import { createKubeTenant, makeEphemeralRunner, type ArcVersion, type KubeTenant, type EphemeralRunner } from "../../standins/kube/control.ts";
import { workflowJobPayload, workflowRunPayload } from "./payloads.ts";
import { deliver, runScheduled, testEnv } from "./worker.ts";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";

export const REPO = "octo-org/octo-repo";
export const NS = "arc-runners";
export const INSTALLATION = 4242;

export interface Stack {
  github: GithubTenant;
  kube: KubeTenant;
  env: WorkerEnv;
  /** One scheduled sweep at `now` (ms). */
  sweep(now?: number): Promise<void>;
  /** An EphemeralRunner as ARC creates it; with a run id it is busy. */
  /** Created 10 days ago unless `createdAt` says otherwise: before any job a test starts on it. */
  /** `runnerId`: status.runnerId as ARC's controller writes it (default: one of the stand-in's, never a payload's). */
  runner(o: {
    name: string;
    workflowRunId?: number;
    namespace?: string;
    deletionTimestamp?: string;
    createdAt?: string;
    runnerId?: number;
  }): Promise<EphemeralRunner>;
  jobStarted(o: JobFacts): Promise<Response>;
  jobCompleted(o: JobFacts & { completedAt: string; conclusion: string }): Promise<Response>;
  runCompleted(o: { runId: number; runAttempt?: number; updatedAt: string; conclusion: string }): Promise<Response>;
}

interface JobFacts {
  runner: string;
  runId: number;
  jobId: number;
  runAttempt?: number;
  startedAt: string;
  /** workflow_job.runner_id (default: the one the GitHub stand-in gives the job, so its webhook and its reads agree). */
  runnerId?: number | null;
}

export async function stack(
  settings: Record<string, string | undefined> = {},
  opts: { namespaces?: string[]; arcVersion?: ArcVersion; autoFinalize?: boolean; github?: TenantOptions } = {},
): Promise<Stack> {
  const github = await createGithubTenant(inject("githubStandinUrl"), opts.github);
  await github.addInstallation({ id: INSTALLATION, repositories: [REPO] });
  const kube = await createKubeTenant(inject("kubeStandinUrl"), {
    namespaces: opts.namespaces ?? [NS, "other-runners"],
    ...(opts.arcVersion ? { arcVersion: opts.arcVersion } : {}),
    ...(opts.autoFinalize ? { autoFinalize: true } : {}),
  });
  const env = testEnv({
    GITHUB_API_URL: github.baseUrl,
    GITHUB_APP_ID: String(github.appId),
    GITHUB_APP_PRIVATE_KEY: github.privateKeyPkcs1,
    KUBE_API_URL: kube.baseUrl,
    KUBE_TOKEN: kube.adminToken,
    REAPER_NAMESPACES: NS,
    ...settings,
  });
  return {
    github,
    kube,
    env,
    sweep: (now = Date.now()) => runScheduled(env, now),
    runner: (o) =>
      kube.seed(
        makeEphemeralRunner({
          namespace: o.namespace ?? NS,
          scaleSet: "arc-runners",
          name: o.name,
          workflowRunId: o.workflowRunId,
          jobRepositoryName: o.workflowRunId === undefined ? undefined : REPO,
          deletionTimestamp: o.deletionTimestamp,
          ...(o.runnerId !== undefined ? { runnerId: o.runnerId } : {}),
          arcVersion: opts.arcVersion,
          creationTimestamp: o.createdAt ?? new Date(Date.now() - 10 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
        }),
      ),
    jobStarted: (o) =>
      deliver(
        env,
        "workflow_job",
        workflowJobPayload("in_progress", {
          runnerId: standinRunnerId(o.jobId),
          ...o,
          runAttempt: o.runAttempt ?? 1,
          repo: REPO,
          installationId: INSTALLATION,
        }),
      ),
    jobCompleted: (o) =>
      deliver(
        env,
        "workflow_job",
        workflowJobPayload("completed", { runnerId: standinRunnerId(o.jobId), ...o, runAttempt: o.runAttempt ?? 1, repo: REPO, installationId: INSTALLATION }),
      ),
    runCompleted: (o) => deliver(env, "workflow_run", workflowRunPayload({ ...o, runAttempt: o.runAttempt ?? 1, repo: REPO, installationId: INSTALLATION })),
  };
}

/** An ISO time `seconds` before `now`. */
export const before = (now: number, seconds: number): string => new Date(now - seconds * 1000).toISOString();
