// What ARC says about a runner besides its job: the phase, why it Failed, when,
// its scale set and its finalizers. One reader for both the direct-mode parser
// (runner-answers.ts) and the agent (runner-view.ts). The phase is shown and
// acted on only when it is "Failed": identity never depends on it (since ARC
// 0.15, #4646, the listener writes "Running" when a job is assigned).
import { boundText } from "../github/job-names.ts";
import type { ClusterRunner } from "../model/runner.ts";
import type { AgentArcFields } from "./agent-protocol.ts";
import { runnerVersionOf } from "./runner-version.ts";
import { isPlainObject as isObj } from "../model/shapes.ts";

/** ARC's label naming the scale set an EphemeralRunner belongs to. */
const SCALE_SET_LABEL = "actions.github.com/scale-set-name";
/** ARC's messages quote webhooks and quotas: kept longer than a name, cut beyond this. */
const MAX_ARC_MESSAGE_CHARS = 1000;

export type ArcFields = Pick<ClusterRunner, "phase" | "arcReason" | "arcMessage" | "failedAt" | "scaleSet" | "finalizers" | "runnerVersion">;

/** The phase ARC gives a runner that exited 7 (its version is outdated): its scale set is parked (#4652/#4660). */
export const OUTDATED_PHASE = "Outdated";

/** The fields of an EphemeralRunner object (as the API server sends it) that say how ARC sees it; only those present. */
export function arcFieldsOf(obj: unknown): ArcFields {
  const meta = isObj(obj) && isObj(obj["metadata"]) ? obj["metadata"] : {};
  const status = isObj(obj) && isObj(obj["status"]) ? obj["status"] : {};
  const out: ArcFields = {};
  const phase = boundText(status["phase"], 40);
  if (phase) out.phase = phase;
  const reason = boundText(status["reason"], 200);
  if (reason) out.arcReason = reason;
  const message = boundText(status["message"], MAX_ARC_MESSAGE_CHARS);
  if (message) out.arcMessage = message;
  const failedAt = latestFailure(status["failures"]);
  if (failedAt) out.failedAt = failedAt;
  const labels = isObj(meta["labels"]) ? meta["labels"] : {};
  const scaleSet = boundText(labels[SCALE_SET_LABEL], 63);
  if (scaleSet) out.scaleSet = scaleSet;
  const finalizers = meta["finalizers"];
  if (Array.isArray(finalizers) && finalizers.length > 0 && finalizers.every((f) => typeof f === "string" && f !== ""))
    out.finalizers = [...(finalizers as string[])];
  // --- runners that never work: the version they run, as far as the object tells ---
  const runnerVersion = runnerVersionOf(obj);
  if (runnerVersion) out.runnerVersion = runnerVersion;
  // --- end of runners that never work ---
  return out;
}

/** `status.failures` maps each failed pod's uid to a time: the latest that parses, as ISO. */
export function latestFailure(failures: unknown): string | undefined {
  if (!isObj(failures)) return undefined;
  let latest: number | undefined;
  for (const v of Object.values(failures)) {
    const t = typeof v === "string" ? Date.parse(v) : Number.NaN;
    if (Number.isFinite(t) && (latest === undefined || t > latest)) latest = t;
  }
  return latest === undefined ? undefined : new Date(latest).toISOString();
}

/** Whether ARC marked the runner Failed (its pod could not be made; it holds a slot of the scale set). */
export const isFailed = (r: Pick<ClusterRunner, "phase">): boolean => r.phase === "Failed";

/**
 * What the agent reports of ARC's fields: a Failed or Outdated runner's phase, reason, message and
 * failure time; and for those and for an idle runner (no run, not being deleted) the scale set and the
 * runner version, which the sweep counts runners that never work by. A busy runner carries none.
 */
export function agentArcFields(f: ArcFields & { workflowRunId?: number; deletionTimestamp?: string }): AgentArcFields | undefined {
  const marked = f.phase === "Failed" || f.phase === OUTDATED_PHASE;
  const idle = f.workflowRunId === undefined && !f.deletionTimestamp;
  if (!marked && !idle) return undefined;
  const out: AgentArcFields = {};
  if (marked && f.phase) out.phase = f.phase;
  if (marked && f.arcReason) out.reason = f.arcReason;
  if (marked && f.arcMessage) out.message = f.arcMessage;
  if (marked && f.failedAt) out.failedAt = f.failedAt;
  if (f.scaleSet) out.scaleSet = f.scaleSet;
  if (f.runnerVersion) out.runnerVersion = f.runnerVersion;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The same fields as the judge's runner carries them. */
export function fromAgentArcFields(a: AgentArcFields | undefined): ArcFields {
  if (!a) return {};
  // Cleaned again: the ledger shows what the agent sent, and trusts its text no more than ARC's.
  const out: ArcFields = {};
  const phase = boundText(a.phase, 40);
  if (phase) out.phase = phase;
  const reason = boundText(a.reason, 200);
  if (reason) out.arcReason = reason;
  const message = boundText(a.message, MAX_ARC_MESSAGE_CHARS);
  if (message) out.arcMessage = message;
  if (a.failedAt) out.failedAt = a.failedAt;
  const scaleSet = boundText(a.scaleSet, 63);
  if (scaleSet) out.scaleSet = scaleSet;
  const runnerVersion = boundText(a.runnerVersion, 40);
  if (runnerVersion) out.runnerVersion = runnerVersion;
  return out;
}
