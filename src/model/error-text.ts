// What went wrong, in words, whatever was thrown: an Error's message, or the
// thrown value as a string (a rejected promise may carry anything).

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
