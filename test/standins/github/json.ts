// JSON text with bigints written as bare numbers, as GitHub writes delivery ids
// above 2^53. JSON.stringify cannot emit a bigint, so each one goes through a
// quoted marker that is then unquoted.
import { randomBytes } from "node:crypto";

export type WireJson = null | boolean | number | string | bigint | WireJson[] | { [key: string]: WireJson };

const marker = `__bigint_${randomBytes(6).toString("hex")}__`;
const markerPattern = new RegExp(`"${marker}(-?\\d+)"`, "g");

export function toWireJson(value: WireJson): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${marker}${v.toString()}` : v));
  return text.replace(markerPattern, "$1");
}
