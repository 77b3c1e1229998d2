// Verifies a GitHub App JWT the way GitHub does, with GitHub's 401 messages
// (octokit's auth-app matches some of them to correct clock skew, so the exact
// words matter).
import { verify, type KeyObject } from "node:crypto";

export const JWT_DECODE = "A JSON web token could not be decoded";
const JWT_IAT = "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued";
const JWT_EXP_PAST = "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires";
const JWT_EXP_FAR = "'Expiration time' claim ('exp') is too far in the future";

export type JwtCheck = { ok: true } | { ok: false; message: string };

function decodeSegment(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** True when the bearer value has the shape of a JWT (three dot-separated parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);
}

export function verifyAppJwt(token: string, publicKey: KeyObject, appId: number, nowSeconds: number): JwtCheck {
  const parts = token.split(".");
  const [headerPart, payloadPart, signaturePart] = parts;
  if (parts.length !== 3 || headerPart === undefined || payloadPart === undefined || signaturePart === undefined) {
    return { ok: false, message: JWT_DECODE };
  }
  const header = decodeSegment(headerPart);
  const payload = decodeSegment(payloadPart);
  if (header === null || payload === null || header.alg !== "RS256") return { ok: false, message: JWT_DECODE };
  let signed = false;
  try {
    signed = verify("RSA-SHA256", Buffer.from(`${headerPart}.${payloadPart}`), publicKey, Buffer.from(signaturePart, "base64url"));
  } catch {
    signed = false;
  }
  if (!signed) return { ok: false, message: JWT_DECODE };
  // GitHub takes iss as a number or a numeric string.
  const iss = payload.iss;
  if ((typeof iss !== "number" && typeof iss !== "string") || String(iss) !== String(appId)) {
    return { ok: false, message: JWT_DECODE };
  }
  const { iat, exp } = payload;
  if (typeof iat !== "number" || !Number.isInteger(iat) || iat > nowSeconds + 60) return { ok: false, message: JWT_IAT };
  if (typeof exp !== "number" || exp <= nowSeconds) return { ok: false, message: JWT_EXP_PAST };
  if (exp - iat > 600 || exp > nowSeconds + 600) return { ok: false, message: JWT_EXP_FAR };
  return { ok: true };
}
