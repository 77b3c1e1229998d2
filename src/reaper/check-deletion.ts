// After our DELETE: ARC's finalizer may hold the object while GitHub says its job
// runs (or a finalizer wedges). A deletion whose object is still there
// REAPER_STUCK_SECONDS later is stuck: shown, counted, alerted, never deleted
// again; when it finally goes, the row closes as reaped with how long it took.
// Decides from one look (a read by name in the runner's place). Pure.
import type { DeletionCode } from "../model/deletion-codes.ts";
import type { DeletionWatch } from "../model/runner.ts";
import type { ClusterView } from "../model/view.ts";
import { nextLook } from "./next-look.ts";

export type DeletionCheck =
  | { kind: "went"; code: "Went" | "Finished" | "GoneWhenFinishing"; reason: string }
  | { kind: "stuck"; code: DeletionCode; reason: string; dueAt: number; newly: boolean; finishRefused?: string }
  | { kind: "unknown"; code: "CannotTell"; reason: string; dueAt: number };

export function checkDeletion(w: DeletionWatch, view: ClusterView, now: number, stuckSeconds: number, githubSays?: string): DeletionCheck {
  const after = Math.max(0, Math.round((now - w.deletedAt) / 1000));
  if (view.kind === "missing" || (view.kind === "found" && view.runner.uid !== w.uid)) {
    return { kind: "went", code: "Went", reason: `went ${after}s after our delete` };
  }
  if (view.kind === "unknown")
    return {
      kind: "unknown",
      code: "CannotTell",
      reason: `cannot tell whether it went: ${view.why}`,
      dueAt: nextLook({ kind: "deletion-watch", now, stuckSeconds }).at,
    };
  const since = view.runner.deletionTimestamp ? ` (Terminating since ${view.runner.deletionTimestamp})` : "";
  const github = githubSays ? `; GitHub says ${githubSays}` : "";
  return {
    kind: "stuck",
    code: "Stuck",
    reason: `stuck: deleted ${after}s ago and still in ${w.namespace}${since}, held by ARC's finalizer${github}; never deleted again`,
    dueAt: nextLook({ kind: "deletion-watch", now, stuckSeconds }).at,
    newly: w.stuckAt === undefined,
  };
}
