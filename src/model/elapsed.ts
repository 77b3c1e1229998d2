// A throttle's one question: has a period passed since `last`? A `last` in the future
// (the wall clock stepped back since it was taken) counts as passed, so a step back
// never silences what the throttle lets through. Pure.

/** Whether `everyMs` have passed since `last` at `now` (undefined: never taken; in the future: passed). */
export function elapsed(last: number | undefined, now: number, everyMs: number): boolean {
  return last === undefined || now < last || now - last >= everyMs;
}
