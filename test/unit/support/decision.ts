// A verdict as code reads it, for tests that check a decision: its code and the fields
// that act on it, without its words. The words are pinned once per code, through the
// real code paths, in test/unit/model/verdict-wording.test.ts.
import type { Verdict } from "../../../src/model/verdict.ts";

export type Decision = Omit<Verdict, "reason" | "subject">;

/** The verdict without `reason` and `subject` (text for people), every other field as it is. */
export function decision(verdict: Verdict): Decision {
  const { reason: _reason, subject: _subject, ...decided } = verdict;
  return decided;
}
