// This site's origin as the browser sees it (src/http/own-origin.ts): behind a
// TLS-terminating proxy the forwarded protocol counts, but only on a request the
// trusted proxies named a client for; a forged header from anyone else does not.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../../src/http/app-env.ts";
import { ownOrigin } from "../../../src/http/own-origin.ts";

const app = new Hono<AppEnv>().post("*", (c) => c.text(ownOrigin(c)));
const CLUSTER = { ARC_REAPER_HOME: "cluster", REAPER_CLIENT_ADDRESS_HEADER: "X-Forwarded-For", REAPER_TRUSTED_PROXIES: "1" };

async function origin(env: Record<string, string>, headers: Record<string, string>): Promise<string> {
  return (await app.request("http://arc-reaper.example.invalid/admin/login", { method: "POST", headers }, env)).text();
}

describe("ownOrigin", () => {
  it("takes the protocol a trusted proxy forwarded", async () => {
    expect(await origin({ ...CLUSTER }, { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" })).toBe("https://arc-reaper.example.invalid");
    expect(await origin({ ...CLUSTER }, { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "HTTPS, http" })).toBe("https://arc-reaper.example.invalid");
  });

  it("ignores it from a request no trusted proxy named a client for, or without a proxy configured", async () => {
    expect(await origin({ ...CLUSTER }, { "x-forwarded-proto": "https" })).toBe("http://arc-reaper.example.invalid");
    expect(await origin({ ...CLUSTER, REAPER_TRUSTED_PROXIES: "2" }, { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" })).toBe(
      "http://arc-reaper.example.invalid",
    );
    expect(await origin({ ARC_REAPER_HOME: "cluster" }, { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" })).toBe(
      "http://arc-reaper.example.invalid",
    );
    expect(await origin({}, { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" })).toBe("http://arc-reaper.example.invalid");
  });

  it("takes only http or https", async () => {
    expect(await origin({ ...CLUSTER }, { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "javascript" })).toBe("http://arc-reaper.example.invalid");
  });
});
