// The in-cluster front door's pure parts: the client address a trusted proxy's
// header names, the home's settings, the server's own limiter and the sweep clock's alarm time.
import { afterEach, describe, expect, it, vi } from "vitest";
import { readHome } from "../../../src/config/home.ts";
import { forwardedClient } from "../../../src/http/request-client.ts";
import { alarmTime } from "../../../src/durable/sweep-clock.ts";
import frontDoor from "../../../src/server/front-door-limiter.ts";

describe("forwardedClient", () => {
  const xff = (trustedProxies: number) => ({ header: "x-forwarded-for" as const, trustedProxies });
  it("takes the address the last trusted proxy saw, whatever the client wrote before it", () => {
    expect(forwardedClient(xff(1), "203.0.113.9")).toBe("203.0.113.9");
    expect(forwardedClient(xff(1), "6.6.6.6, 203.0.113.9")).toBe("203.0.113.9");
    expect(forwardedClient(xff(2), "6.6.6.6, 203.0.113.9, 10.0.0.4")).toBe("203.0.113.9");
    expect(forwardedClient(xff(1), "2001:db8:1:2::5")).toBe("2001:db8:1:2::/64");
  });
  it("answers the shared bucket when the header is missing, too short or malformed", () => {
    expect(forwardedClient(xff(1), undefined)).toBe("unknown");
    expect(forwardedClient(xff(2), "203.0.113.9")).toBe("unknown");
    expect(forwardedClient(xff(1), "203.0.113.9, nonsense")).toBe("unknown");
    expect(forwardedClient({ header: "x-real-ip", trustedProxies: 1 }, " 198.51.100.4 ")).toBe("198.51.100.4");
  });
});

describe("readHome", () => {
  it("is Cloudflare unless the server's config says cluster, and never reads the cluster settings there", () => {
    expect(readHome({ REAPER_SWEEP_EVERY_SECONDS: "soon" })).toEqual({ ok: true, home: { kind: "cloudflare" }, warnings: [] });
  });
  it("names each bad cluster setting, and warns when the address header is unset", () => {
    expect(readHome({ ARC_REAPER_HOME: "cluster", REAPER_CLIENT_ADDRESS_HEADER: "Forwarded", REAPER_TRUSTED_PROXIES: "0" })).toEqual({
      ok: false,
      errors: ["REAPER_CLIENT_ADDRESS_HEADER must be X-Forwarded-For or X-Real-IP, or unset", "REAPER_TRUSTED_PROXIES must be a whole number >= 1"],
    });
    const home = readHome({ ARC_REAPER_HOME: "cluster" });
    expect(home).toMatchObject({ ok: true, home: { kind: "cluster", sweepEverySeconds: 60 } });
    expect(home.ok && home.warnings[0]).toMatch(/^REAPER_CLIENT_ADDRESS_HEADER is not set/);
    expect(readHome({ ARC_REAPER_HOME: "cluster", REAPER_CLIENT_ADDRESS_HEADER: "X-Real-IP" })).toMatchObject({
      home: { clientAddress: { header: "x-real-ip", trustedProxies: 1 } },
      warnings: [],
    });
  });
});

describe("the server's FRONT_DOOR", () => {
  afterEach(() => vi.useRealTimers());
  it("lets `limit` requests of one key through per period, each key counted apart", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const door = frontDoor({ limit: 3, period: 10 });
    const pass = async (key: string) => (await door.limit({ key })).success;
    expect([await pass("a"), await pass("a"), await pass("a"), await pass("a")]).toEqual([true, true, true, false]);
    expect(await pass("b")).toBe(true);
    vi.setSystemTime(1_010_000);
    expect(await pass("a")).toBe(true);
  });
  it("refuses a config without a positive limit and period", () => {
    expect(() => frontDoor({ limit: 0, period: 10 })).toThrow("FRONT_DOOR needs a positive limit and period, got 0 and 10");
  });
});

describe("alarmTime", () => {
  it("is the earlier of the due row and the next sweep", () => {
    expect(alarmTime(null, undefined)).toBeNull();
    expect(alarmTime(5, undefined)).toBe(5);
    expect(alarmTime(null, 7)).toBe(7);
    expect(alarmTime(9, 7)).toBe(7);
    expect(alarmTime(3, 7)).toBe(3);
  });
});
