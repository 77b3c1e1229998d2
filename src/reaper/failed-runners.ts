// The sweep's look at runners ARC marked Failed: every Failed object
// in the lists gets a row (state failed, ARC's reason and message, when it
// failed, its scale set), judged by judge-failed.ts; with REAPER_FAILED_SECONDS
// set, those failed long enough are deleted once (uid precondition, within the
// deletion cap shared with the pass, cause "failed"); a DELETE that failed backs
// off per row (1 minute doubling to 1 hour) before it takes a slot again. A row whose object left
// (on a fresh list) closes: reaped when we deleted it, else gone.
import { isFailed } from "../cluster/arc-failure.ts";
import type { FailedCode } from "../model/failed-codes.ts";
import { scaleSetKey, type FailedRunner } from "../model/failed.ts";
import { nextLook } from "./next-look.ts";
import type { ClusterRunner } from "../model/runner.ts";
import type { Lookup } from "../model/view.ts";
import { failedSince, judgeFailed } from "./judge-failed.ts";
import { clusterOf } from "./look.ts";
import type { PassDeps } from "./reconcile-all.ts";

export interface FailedReport {
  /** Runners holding a slot as Failed after this look. */
  failed: number;
  deleted: number;
  closed: number;
}

interface Listing {
  lookup: (name: string) => Lookup;
  names: () => Iterable<string>;
}

const key = (r: { cluster?: string; namespace: string; name: string; uid: string }): string =>
  `${r.cluster ?? "default"}\u0000${r.namespace}\u0000${r.name}\u0000${r.uid}`;
const iso = (ms: number): string => new Date(ms).toISOString();

export async function lookAtFailed(listing: Listing, deps: PassDeps): Promise<FailedReport> {
  const port = deps.ledger.failed;
  const report: FailedReport = { failed: 0, deleted: 0, closed: 0 };
  if (!port) return report;
  const { now, settings } = deps;
  const open = new Map(port.open().map((f) => [key(f), f]));
  const seen: { row: FailedRunner; runner: ClusterRunner; isNew: boolean }[] = [];
  for (const name of listing.names()) {
    for (const runner of listing.lookup(name).found) {
      if (!isFailed(runner)) continue;
      const k = key(runner);
      const old = open.get(k);
      open.delete(k);
      seen.push({ row: rowOf(runner, old, now), runner, isNew: old === undefined });
    }
  }
  // Rows whose object is no longer Failed in the lists: closed on a fresh look only.
  for (const row of open.values()) {
    const lookup = listing.lookup(row.name);
    const same = lookup.found.find((r) => r.uid === row.uid && r.namespace === row.namespace && (r.cluster ?? "default") === row.cluster);
    const place = { cluster: row.cluster, namespace: row.namespace };
    // Its place could not be read (or was not looked in): nothing is known, the row stays. A wrong close would only
    // stop showing it until the next list brings it back; it never deletes anything.
    if (!same && (lookup.unreadable.some((u) => u.place.cluster === row.cluster && u.place.namespace === row.namespace) || !(lookup.absentAsOf(place) > 0)))
      continue;
    const [code, went]: [FailedCode, string] = same
      ? ["NoLongerFailed", `it is no longer Failed (phase ${same.phase ?? "unset"})`]
      : row.deletedAt !== undefined
        ? ["Reaped", `it went ${Math.round((now - row.deletedAt) / 1000)}s after our delete`]
        : ["Gone", "it left the cluster without us"];
    const closed: FailedRunner = {
      ...row,
      state: row.deletedAt !== undefined && !same ? "reaped" : "gone",
      closedAt: now,
      code,
      // What ARC said as of the row's last look (its story's last entry), then how it left.
      reason: `${failedSince(row, lastLookAt(row))}; ${went}`,
    };
    closed.story = [...row.story, { at: iso(now), what: `closed ${closed.state}: ${went}`, source: "sweep", code }];
    port.store(closed, { closed: true });
    report.closed++;
  }

  // The deletion window is stamped with the real clock at each delete (deps.clock), never the pass's time.
  const deletions = deps.ledger.deletions(deps.clock());
  // One count of recent deletions per scale set for the whole look (never one per runner: it grew with the history).
  const recent = new Map(settings.failedSeconds === undefined || seen.length === 0 ? [] : port.deletedSince(now - settings.failedSeconds * 1000));
  for (const { row, runner, isNew } of seen) {
    const scaleSet = scaleSetKey(row.cluster, row.namespace, row.scaleSet);
    const recentlyDeleted = recent.get(scaleSet) ?? 0;
    const verdict = judgeFailed({ row, runner, now, failedSeconds: settings.failedSeconds, recentlyDeleted });
    let { reason, code } = verdict;
    let deleted = false;
    if (verdict.verdict === "delete") {
      if (settings.dryRun) [code, reason] = ["DryRun", `dry run: would delete: ${reason}`];
      else if (deps.ledger.paused()) [code, reason] = ["Paused", `paused: would delete: ${reason}`];
      // A DELETE that failed waits out its back-off before it takes a slot of the cap again.
      else if (row.retryAt !== undefined && now < row.retryAt)
        [code, reason] = ["DeleteBackingOff", `${reason}; its delete failed (${row.deleteFailures ?? 1} in a row): tried again at ${iso(row.retryAt)}`];
      else if (deletions.left(deps.clock()) <= 0) [code, reason] = ["Cap", `deletion cap of ${deletions.limit} in 60s reached, held back: ${reason}`];
      else {
        deletions.take(deps.clock());
        const w = clusterOf(deps.watched, runner);
        const outcome = w
          ? await w.cluster.deleteRunner(runner, { reason, cause: "failed" })
          : { kind: "failed" as const, status: null, why: `no cluster named ${runner.cluster} is watched` };
        if (outcome.kind === "deleted") {
          deleted = true;
          row.deletedAt = now;
          recent.set(scaleSet, recentlyDeleted + 1);
          [code, reason] = ["Deleted", `deleted (cause failed): ${reason}`];
        } else if (outcome.kind === "gone") [code, reason] = ["AlreadyGone", `${reason}; already gone (404)`];
        else {
          row.deleteFailures = (row.deleteFailures ?? 0) + 1;
          row.retryAt = nextLook({ kind: "delete-failed", failures: row.deleteFailures, now }).at;
          code = "DeleteFailed";
          reason = `${reason}; delete failed (${row.deleteFailures} in a row), tried again at ${iso(row.retryAt)}: ${outcome.why}`;
        }
        // Through (or gone): its back-off ends (0 tells the ledger to drop it).
        if (outcome.kind !== "failed" && row.deleteFailures !== undefined) {
          row.deleteFailures = 0;
          delete row.retryAt;
        }
      }
    }
    // A new decision is a new code; every DELETE sent that failed is one too (an error is always said).
    const changed = isNew || code !== lastCode(row) || code === "DeleteFailed";
    if (changed) row.story = [...row.story, { at: iso(now), what: isNew ? `seen Failed: ${reason}` : reason, source: "sweep", code }];
    row.reason = reason;
    row.code = code;
    port.store(row, { deleted, logged: changed });
    if (deleted) report.deleted++;
    report.failed++;
  }
  deps.ledger.saveDeletions(deletions);
  return report;
}

/** The code of a row's last decision, as its story's last entry keeps it (none in entries stored before codes: a new decision). */
const lastCode = (row: FailedRunner): FailedCode | undefined => row.story.at(-1)?.code;

/** When the sweep last wrote the row's story (its first sighting, at least). */
const lastLookAt = (row: FailedRunner): number => Date.parse(row.story.at(-1)?.at ?? "") || row.firstSeen;

/** The row for a Failed object: its stored row brought up to date, or a new one (failed now if ARC gave no failure time). */
function rowOf(runner: ClusterRunner, old: FailedRunner | undefined, now: number): FailedRunner {
  const created = runner.createdAt ? Date.parse(runner.createdAt) : Number.NaN;
  const failedAt = runner.failedAt ? Date.parse(runner.failedAt) : (old?.failedAt ?? now);
  const row: FailedRunner = {
    ...(old ?? { firstSeen: now, story: [], reason: "", state: "failed" as const }),
    cluster: runner.cluster ?? "default",
    namespace: runner.namespace,
    name: runner.name,
    uid: runner.uid,
    failedAt,
    state: "failed",
  };
  if (runner.scaleSet) row.scaleSet = runner.scaleSet;
  if (runner.arcReason) row.arcReason = runner.arcReason;
  if (runner.arcMessage) row.arcMessage = runner.arcMessage;
  if (Number.isFinite(created)) row.createdAt = created;
  if (runner.workflowRunId !== undefined) row.runId = runner.workflowRunId;
  else delete row.runId;
  return row;
}
