// One length rule for the text the agent sends and the ledger checks (ARC's messages, names):
// a length is counted in UTF-16 code units, JavaScript's String length, which the agent
// protocol's schemas check; a cut never leaves half a surrogate pair. Counting code points on
// one side and units on the other let a message with an emoji pass the cut and fail the schema.

/** The length the bounds are in: UTF-16 code units. */
const textLength = (text: string): number => text.length;

/** Whether `text` fits a bound of `max`. */
export const fitsText = (text: string, max: number): boolean => textLength(text) <= max;

/** `text` cut to at most `max` units, ending in `ellipsis` when cut; never half a surrogate pair. */
export function cutText(text: string, max: number, ellipsis = "…"): string {
  if (fitsText(text, max)) return text;
  let end = Math.max(0, max - textLength(ellipsis));
  // A high surrogate whose low half would be cut off goes with it (before the start there is none: NaN).
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}${ellipsis}`;
}
