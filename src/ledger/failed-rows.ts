// A Failed runner's row as the admin listing and the story show it: the same
// RunnerRow as a job's runner, with no job, and ARC's reason and message.
import type { FailedRunner } from "../model/failed.ts";
import type { RunnerRow } from "./queries.ts";

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function toFailedRow(f: FailedRunner): RunnerRow {
  const open = f.state === "failed";
  return {
    name: f.name,
    state: f.state,
    repository: "",
    runId: f.runId ?? 0,
    runAttempt: 0,
    jobId: 0,
    cluster: f.cluster,
    namespace: f.namespace,
    uid: f.uid,
    startedAt: null,
    completedAt: null,
    conclusion: null,
    dueAt: null,
    decidedAt: iso(f.deletedAt ?? f.firstSeen),
    closedAt: open ? null : iso(f.closedAt),
    cause: f.deletedAt !== undefined ? "failed" : null,
    prunedAt: null,
    reason: f.reason || "seen Failed; not judged yet",
    workflow: null,
    job: null,
    branch: null,
    runUrl: null,
    scaleSet: f.scaleSet ?? null,
    arcReason: f.arcReason ?? null,
    arcMessage: f.arcMessage ?? null,
    failedAt: iso(f.failedAt),
  };
}
