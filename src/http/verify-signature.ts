// X-Hub-Signature-256: HMAC-SHA256 of the raw body with the webhook secret, as
// "sha256=<64 hex digits>". Checked with WebCrypto against a key imported once
// per settings (per isolate): importing the key on every delivery, as
// @octokit/webhooks' verify does, was a fifth of an ignored delivery's CPU in the
// intake profile (BENCHMARKS.md). crypto.subtle.verify compares in constant time.
import type { Settings } from "../config/settings.ts";

const keys = new WeakMap<Settings, Promise<CryptoKey>>();
const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

function keyFor(settings: Settings): Promise<CryptoKey> {
  let key = keys.get(settings);
  if (!key) {
    key = crypto.subtle.importKey("raw", new TextEncoder().encode(settings.webhookSecret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    keys.set(settings, key);
  }
  return key;
}

/** Whether `header` is the body's signature with the webhook secret; false for any malformed header. */
export async function verifySignature(settings: Settings, body: Uint8Array, header: string): Promise<boolean> {
  const hex = SIGNATURE.exec(header.trim())?.[1];
  if (!hex) return false;
  const signature = new Uint8Array(32);
  for (let i = 0; i < 32; i++) signature[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return crypto.subtle.verify("HMAC", await keyFor(settings), signature, body);
}
