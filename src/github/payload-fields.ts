// Schema pieces for webhook payloads (facts-from-webhook.ts, installation-from-webhook.ts):
// a field's message names its path, as the payload's readers know it, and the value it got.
import * as v from "valibot";
import { isPlainObject } from "../model/shapes.ts";

export type Obj = Record<string, unknown>;
export const isObj: (x: unknown) => x is Obj = isPlainObject;
export const isId = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x > 0;

export const shown = (x: unknown): string => (x === undefined ? "nothing" : JSON.stringify(x));

/** A field that must pass `check`: the message names its path and the value. */
export const must = <T>(path: string, what: string, check: (x: unknown) => x is T) =>
  v.custom<T>(check, (issue) => `${path} must be ${what}, got ${shown(issue.input)}`);
