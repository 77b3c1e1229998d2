// A held deletion finished, when asked (REAPER_FINISH_STUCK=true): a deletion
// that is stuck (check-deletion.ts) and whose job GitHub says is completed,
// read now (a row whose job is unknown, 0: its run), has ARC's finalizers
// removed by a JSON patch that tests the uid and those finalizers
// (finish-patch.ts); the row then closes reaped with how long ARC held it. Never while GitHub says the job runs or cannot be asked, never
// when the object changed (the patch's tests), never a finalizer not ARC's, never
// in a dry run or a pause, and each finish takes a slot of the deletion cap. A
// 403 (the Role overlay is not applied) is shown on the row and in
// /healthz/deep, and tried again only at the next look (REAPER_STUCK_SECONDS).
import { isArcFinalizer } from "../cluster/finish-patch.ts";
import type { Github } from "../github/github-client.ts";
import type { DeletionCode } from "../model/deletion-codes.ts";
import { errorText } from "../model/error-text.ts";
import type { ClusterRunner, DeletionWatch } from "../model/runner.ts";
import type { DeletionCheck } from "./check-deletion.ts";
import { JobNamesAnotherRunner, jobNamingRunner } from "./job-names-runner.ts";
import { clusterOf } from "./look.ts";
import type { PassDeps } from "./reconcile-all.ts";

type Stuck = Extract<DeletionCheck, { kind: "stuck" }>;

/** The overlay that grants `patch` on ephemeralrunners, as /healthz/deep and the rows name it. */
export const FINISH_OVERLAY_COMMAND = "kubectl apply -k infra/kubernetes/finish-stuck (agent mode: kubectl apply -k infra/agent/finish-stuck)";

export async function finishStuck(w: DeletionWatch, runner: ClusterRunner, stuck: Stuck, deps: PassDeps): Promise<DeletionCheck> {
  const keep = (code: DeletionCode, why: string, finishRefused?: string): Stuck => ({
    ...stuck,
    code,
    reason: `${stuck.reason}; not finished: ${why}`,
    ...(finishRefused ? { finishRefused } : {}),
  });
  const cluster = clusterOf(deps.watched, { cluster: w.cluster })?.cluster;
  if (!cluster?.finishDeletion) return keep("NoFinishLink", `the link to cluster ${w.cluster} cannot remove finalizers`);
  const finalizers = runner.finalizers ?? [];
  // The agent's view carries no finalizers: the agent reads them from the API server and checks they are ARC's.
  const agent = cluster.errorKind === "agent";
  if (finalizers.length === 0 && !agent) return keep("NoFinalizer", "no finalizer was seen on it");
  const foreign = finalizers.filter((f) => !isArcFinalizer(f));
  if (foreign.length > 0) return keep("ForeignFinalizer", `it has finalizers that are not ARC's (${foreign.join(", ")}): only ARC's are ever removed`);
  const { github } = deps;
  if (github instanceof Error) return keep("GithubUnavailable", `GitHub cannot be asked (${github.message})`);
  let says: string;
  try {
    const now = await githubOnDeletion(w, github);
    if (now === undefined) return keep("NothingToAsk", `its job is unknown and no run is recorded: GitHub cannot be asked about it`);
    says = now.says;
    if (!now.over) return keep("StillRunning", `GitHub says ${says}`);
  } catch (e) {
    if (e instanceof JobNamesAnotherRunner) return keep("JobNamesAnotherRunner", e.message);
    return keep("GithubError", `GitHub could not be read (${errorText(e)})`);
  }
  // Removing finalizers completes a deletion: never in a dry run or a pause, and a slot of the deletion cap each.
  if (deps.settings.dryRun) return keep("DryRun", `dry run: would remove ARC's finalizers (GitHub says ${says})`);
  if (deps.ledger.paused()) return keep("Paused", `paused: would remove ARC's finalizers (GitHub says ${says})`);
  const deletions = deps.ledger.deletions(deps.clock());
  if (deletions.left(deps.clock()) <= 0) return keep("Cap", `deletion cap of ${deletions.limit} in 60s reached, held back (GitHub says ${says})`);
  deletions.take(deps.clock());
  deps.ledger.saveDeletions(deletions);
  const outcome = await cluster.finishDeletion(runner, finalizers);
  deps.ledger.countFinish?.(outcome.kind === "gone" ? "finished" : outcome.kind);
  const heldFor = Math.max(0, Math.round((deps.now - w.deletedAt) / 1000));
  switch (outcome.kind) {
    case "finished":
      return {
        kind: "went",
        code: "Finished",
        reason: `finished: ARC held it ${heldFor}s after our delete; GitHub says ${says}, so its finalizers (${finalizers.length > 0 ? finalizers.join(", ") : "ARC's, as the agent read them"}) were removed (REAPER_FINISH_STUCK)`,
      };
    case "gone":
      return { kind: "went", code: "GoneWhenFinishing", reason: `went ${heldFor}s after our delete (404 when finishing it)` };
    case "refused":
      return keep(
        "FinishRefused",
        `removing its finalizers was refused (${outcome.why}): the Role lacks patch on ephemeralrunners; apply the overlay: ${FINISH_OVERLAY_COMMAND}`,
        outcome.why,
      );
    case "conflict":
      return keep("FinishConflict", `the object changed since it was read (${outcome.why}); looked at again in ${deps.settings.stuckSeconds}s`);
    default:
      return keep("FinishFailed", `removing its finalizers failed (${outcome.why}); looked at again in ${deps.settings.stuckSeconds}s`);
  }
}

/**
 * What GitHub says now of a deletion's work: its job, or, for a row whose job is unknown (0: learned
 * from a completed run, learn-from-github.ts), its run, since no job 0 can ever be read. Undefined
 * when there is nothing to ask; throws when GitHub cannot be read.
 */
export async function githubOnDeletion(w: DeletionWatch, github: Github): Promise<{ says: string; over: boolean } | undefined> {
  const as = (status: string, conclusion: string | null) => `${status}${conclusion ? ` (${conclusion})` : ""}`;
  if (w.jobId !== 0) {
    // Only a job that names the deleted runner speaks for it (JobNamesAnotherRunner otherwise).
    const job = jobNamingRunner(await github.job(w.repo, w.jobId, w.installationId ?? (await github.installationFor(w.repo))), { name: w.name });
    return { says: `job ${w.jobId} is ${as(job.status, job.conclusion)}`, over: job.status === "completed" };
  }
  if (w.runId === undefined) return undefined;
  const run = await github.run(w.repo, w.runId, w.installationId ?? (await github.installationFor(w.repo)));
  return { says: `run ${w.runId} is ${as(run.status, run.conclusion)}`, over: run.status === "completed" };
}
