// Why a check of a deletion we made (src/reaper/check-deletion.ts, finish-stuck.ts)
// says what it says, as a code that code reads: a sibling of VERDICT_CODES
// (src/model/verdict.ts) and FAILED_CODES, since a check is no verdict (it
// restates a closed row) and each closed set names only what its decisions make.
// Codes of one meaning share the name (DryRun, Paused, Cap, GithubError).

export const DELETION_CODES = [
  // One look (check-deletion.ts).
  "Went", // its object left after our delete
  "CannotTell", // its place could not be read, or not freshly
  "Stuck", // still there REAPER_STUCK_SECONDS after our delete, held by ARC's finalizer
  // A stuck deletion finished, when asked (finish-stuck.ts, REAPER_FINISH_STUCK).
  "Finished", // ARC's finalizers removed, GitHub says its work is over
  "GoneWhenFinishing", // 404 when finishing it
  "NoFinishLink", // the link to its cluster cannot remove finalizers
  "NoFinalizer",
  "ForeignFinalizer", // a finalizer not ARC's: never removed
  "GithubUnavailable", // GitHub cannot be asked (no App key)
  "NothingToAsk", // no job and no run recorded
  "StillRunning", // GitHub says its job (or run) is not over
  "GithubError", // GitHub could not be read
  "JobNamesAnotherRunner", // GitHub's job names another runner than the deleted one: its word is not about it
  "DryRun",
  "Paused",
  "Cap", // the deletion cap of the last 60 s
  "FinishRefused", // 403: the Role lacks patch on ephemeralrunners
  "FinishConflict", // the object changed since it was read (409/422)
  "FinishFailed",
] as const;
export type DeletionCode = (typeof DELETION_CODES)[number];
