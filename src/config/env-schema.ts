// Schema pieces for settings read from an environment (the Worker's vars and
// secrets, the agent's process.env): every message names the setting and never
// shows its value. Pure valibot: usable in workerd and Node.
import * as v from "valibot";

/** The text of a setting: surrounding whitespace dropped; blank (or null) is unset. */
export function blankIsUnset(x: unknown): unknown {
  const t = typeof x === "string" ? x.trim() : x;
  return t === "" || t === null ? undefined : t;
}

const notAString = (name: string) => (issue: v.StringIssue) => `${name} must be a string, got ${typeof issue.input}`;

/** A setting that must be given: `<name> is missing` (or `missing`, the caller's words) when it is not. */
export function required(name: string, missing = `${name} is missing`) {
  return v.pipe(
    v.unknown(),
    v.transform(blankIsUnset),
    v.string((issue) => (issue.input === undefined ? missing : notAString(name)(issue))),
  );
}

/** A setting with a default when unset. */
export function withDefault(name: string, fallback: string) {
  return v.pipe(
    v.unknown(),
    v.transform((x) => blankIsUnset(x) ?? fallback),
    v.string(notAString(name)),
  );
}

/** A whole number setting of at least `min` (digits only: no sign, no fraction, no unit). */
export function wholeNumber(name: string, fallback: number, min = 0) {
  const message = `${name} must be a whole number >= ${min}`;
  return v.pipe(
    withDefault(name, String(fallback)),
    v.regex(/^\d+$/, message),
    v.transform(Number),
    v.number(),
    v.safeInteger(message),
    v.minValue(min, message),
  );
}

/** A yes/no setting: one of `accepted` (any case; "true" and "1" mean yes), else `message`; unset is `fallback`. */
export function flag(name: string, accepted: readonly string[], message: v.ErrorMessage<v.PicklistIssue>, fallback: "true" | "false" = "false") {
  return v.pipe(
    withDefault(name, fallback),
    v.toLowerCase(),
    v.picklist(accepted, message),
    v.transform((t) => t === "true" || t === "1"),
  );
}

/** The hosts http:// may go to: a token sent in clear never leaves the machine. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Each setting stops at its first problem (one message a setting); the settings are all checked. */
export function eachStopsAtFirst<T extends Record<string, v.GenericSchema>>(settings: T): T {
  return Object.fromEntries(Object.entries(settings).map(([k, s]) => [k, v.config(s, { abortPipeEarly: true })])) as T;
}

/** A comma-separated list: blank entries dropped. */
export const commaList = (text: string): string[] =>
  text
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");

/** The messages of a failed parse, in the order of `order` (by the setting each names), else as they came. */
export function messagesOf(issues: readonly v.BaseIssue<unknown>[], order: readonly string[]): string[] {
  const rank = (i: v.BaseIssue<unknown>): number => {
    const key = i.path?.[0]?.key;
    const at = typeof key === "string" ? order.indexOf(key) : -1;
    return at < 0 ? order.length : at;
  };
  return [...issues].sort((a, b) => rank(a) - rank(b)).map((i) => i.message);
}
