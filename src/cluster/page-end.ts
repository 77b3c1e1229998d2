// The end of a list: a page that says more items remain must carry the way to
// them. Read for Tables (runner-table.ts) and full lists (runner-answers.ts).
import { UnacceptableAnswer } from "./http-answer.ts";

/**
 * Throws unless a page that says more is coming carries the way to it: `remainingItemCount` above 0 without a
 * `continue` token is a cut answer (a proxy's), never the end of the namespace. A page with neither cannot be told
 * from the end: the API server always sends `continue` when it cut a page, so that is read as the end.
 */
export function checkPageEnd(status: number, metadata: Record<string, unknown>, what: string): void {
  const remaining = metadata["remainingItemCount"];
  if (remaining !== undefined && (typeof remaining !== "number" || !Number.isSafeInteger(remaining) || remaining < 0))
    throw new UnacceptableAnswer(status, `HTTP ${status}: ${what}.metadata.remainingItemCount: expected a whole number`);
  if (typeof remaining === "number" && remaining > 0 && !metadata["continue"])
    throw new UnacceptableAnswer(status, `HTTP ${status}: ${what} says ${remaining} more items remain but carries no continue token`);
}
