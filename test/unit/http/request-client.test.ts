// Who a request counts as at the front door (src/http/request-client.ts); forwardedClient's
// own cases are test/unit/server/front-door-address.test.ts's.
import { describe, expect, it } from "vitest";
import { doorClient } from "../../../src/http/request-client.ts";
import { rig } from "../support/hono-rig.ts";

const clientOf = async (vars: Record<string, unknown>, headers: Record<string, string>): Promise<unknown> => {
  const r = rig({}, {}, { path: "/x", handler: (c) => c.json(doorClient(c)) }, vars);
  return await (await r.request("/x", { headers })).json();
};

describe("doorClient", () => {
  it("on Cloudflare counts CF-Connecting-IP, and exempts loopback and a missing address", async () => {
    expect(await clientOf({}, { "cf-connecting-ip": "203.0.113.9" })).toEqual({ key: "203.0.113.9", exempt: false });
    expect(await clientOf({}, { "cf-connecting-ip": "2001:db8:1:2::5" })).toEqual({ key: "2001:db8:1:2::/64", exempt: false });
    expect(await clientOf({}, { "cf-connecting-ip": "127.0.0.1" })).toEqual({ key: "127.0.0.1", exempt: true });
    expect(await clientOf({}, { "cf-connecting-ip": "::1" })).toEqual({ key: "0:0:0:0::/64", exempt: true });
    expect(await clientOf({}, {})).toEqual({ key: "unknown", exempt: true });
    // Cloudflare's header only: X-Forwarded-For is the client's own word there.
    expect(await clientOf({}, { "x-forwarded-for": "203.0.113.9" })).toEqual({ key: "unknown", exempt: true });
  });

  it("in the cluster reads the trusted proxy's header, and never exempts", async () => {
    const cluster = { ARC_REAPER_HOME: "cluster", REAPER_CLIENT_ADDRESS_HEADER: "X-Forwarded-For", REAPER_TRUSTED_PROXIES: "1" };
    expect(await clientOf(cluster, { "x-forwarded-for": "6.6.6.6, 203.0.113.9" })).toEqual({ key: "203.0.113.9", exempt: false });
    expect(await clientOf(cluster, { "x-forwarded-for": "127.0.0.1" })).toEqual({ key: "127.0.0.1", exempt: false });
    expect(await clientOf(cluster, { "cf-connecting-ip": "203.0.113.9" })).toEqual({ key: "unknown", exempt: false });
  });

  it("in the cluster without a header setting, or with bad settings, counts everyone in the shared bucket", async () => {
    expect(await clientOf({ ARC_REAPER_HOME: "cluster" }, { "x-forwarded-for": "203.0.113.9" })).toEqual({ key: "unknown", exempt: false });
    expect(await clientOf({ ARC_REAPER_HOME: "cluster", REAPER_TRUSTED_PROXIES: "0" }, { "x-forwarded-for": "203.0.113.9" })).toEqual({
      key: "unknown",
      exempt: false,
    });
  });
});
