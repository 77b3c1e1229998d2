// Why a Failed runner's row says what it says, as a code that code reads (as
// VERDICT_CODES are for the judge's verdicts, src/model/verdict.ts). A sibling
// set, not more VERDICT_CODES: a Verdict never carries these and a Failed row
// never carries the judge's, so each closed set names only what its decisions make.
// Codes of the same meaning share the name (BeingDeleted, DryRun, Paused, Cap,
// DeleteFailed, Gone), so a log query on one finds both kinds of runner.

export const FAILED_CODES = [
  // The judge of row 15 (src/reaper/judge-failed.ts).
  "CarriesRun", // busy on a run: its job's rules judge it
  "AlreadyDeleted", // we deleted it, ARC still holds it: never deleted again
  "BeingDeleted", // a deletionTimestamp
  "NeverDeleted", // REAPER_FAILED_SECONDS unset
  "NotDue", // kept until REAPER_FAILED_SECONDS after it failed (or was made)
  "FailedLong", // delete: failed at least REAPER_FAILED_SECONDS ago
  // What the sweep made of a delete (src/reaper/failed-runners.ts).
  "DryRun",
  "Paused",
  "DeleteBackingOff", // its last DELETE failed: not sent again before its back-off ends
  "Cap", // the deletion cap of the last 60 s
  "Deleted",
  "AlreadyGone", // the DELETE answered 404
  "DeleteFailed",
  // How a row closed.
  "NoLongerFailed", // its object is there, no longer Failed
  "Reaped", // it went after our delete
  "Gone", // it left the cluster without us
] as const;
export type FailedCode = (typeof FAILED_CODES)[number];
