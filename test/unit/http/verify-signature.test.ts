// X-Hub-Signature-256 against the webhook secret (src/http/verify-signature.ts).
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Settings } from "../../../src/config/settings.ts";
import { verifySignature } from "../../../src/http/verify-signature.ts";

const settings = (webhookSecret: string) => ({ webhookSecret }) as Settings;
const body = new TextEncoder().encode('{"action":"completed"}');
const sign = (secret: string, data: Uint8Array = body): string => createHmac("sha256", secret).update(data).digest("hex");

describe("verifySignature", () => {
  const s = settings("whsec");
  it("accepts the body's HMAC with the secret, any case of hex and prefix, spaces around", async () => {
    expect(await verifySignature(s, body, `sha256=${sign("whsec")}`)).toBe(true);
    expect(await verifySignature(s, body, `SHA256=${sign("whsec").toUpperCase()}`)).toBe(true);
    expect(await verifySignature(s, body, `  sha256=${sign("whsec")} `)).toBe(true);
  });

  it("refuses another secret's, another body's, and one wrong digit", async () => {
    expect(await verifySignature(s, body, `sha256=${sign("other")}`)).toBe(false);
    expect(await verifySignature(s, body, `sha256=${sign("whsec", new TextEncoder().encode("{}"))}`)).toBe(false);
    const good = sign("whsec");
    const last = good.endsWith("0") ? "1" : "0";
    expect(await verifySignature(s, body, `sha256=${good.slice(0, -1)}${last}`)).toBe(false);
    const first = good.startsWith("0") ? "1" : "0";
    expect(await verifySignature(s, body, `sha256=${first}${good.slice(1)}`)).toBe(false);
  });

  it.each([
    ["an empty header", ""],
    ["the sha1 header's form", `sha1=${"a".repeat(40)}`],
    ["no prefix", "a".repeat(64)],
    ["63 digits", `sha256=${"a".repeat(63)}`],
    ["65 digits", `sha256=${"a".repeat(65)}`],
    ["a digit that is not hex", `sha256=${"g".repeat(64)}`],
    ["text before", `x sha256=${"a".repeat(64)}`],
  ])("refuses %s", async (_what, header) => {
    expect(await verifySignature(s, body, header)).toBe(false);
  });

  it("keys each settings object with its own secret", async () => {
    expect(await verifySignature(settings("one"), body, `sha256=${sign("one")}`)).toBe(true);
    expect(await verifySignature(settings("two"), body, `sha256=${sign("one")}`)).toBe(false);
    expect(await verifySignature(settings("two"), body, `sha256=${sign("two")}`)).toBe(true);
  });
});
