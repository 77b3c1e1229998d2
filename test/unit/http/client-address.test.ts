// The address a failed login or a flood counts against (src/http/client-address.ts):
// IPv4 as it is, IPv6 by its /64, anything else the one "unknown" bucket.
import { describe, expect, it } from "vitest";
import { clientAddress } from "../../../src/http/client-address.ts";

describe("clientAddress", () => {
  it("keeps an IPv4 address as it is, trimmed", () => {
    expect(clientAddress("203.0.113.9")).toBe("203.0.113.9");
    expect(clientAddress("  198.51.100.4\t")).toBe("198.51.100.4");
    expect(clientAddress("1.2.3.4")).toBe("1.2.3.4");
  });

  it("counts an IPv6 address by its /64, groups without leading zeros, lowercase", () => {
    expect(clientAddress("2001:db8:1:2::5")).toBe("2001:db8:1:2::/64");
    expect(clientAddress("2001:0DB8:0001:0002:0003:0004:0005:0006")).toBe("2001:db8:1:2::/64");
    expect(clientAddress("2001:db8::")).toBe("2001:db8:0:0::/64");
    expect(clientAddress("::1")).toBe("0:0:0:0::/64");
    expect(clientAddress("::")).toBe("0:0:0:0::/64");
    expect(clientAddress("fe80::1:2:3:4")).toBe("fe80:0:0:0::/64");
    expect(clientAddress("1:2:3:4:5:6:7::")).toBe("1:2:3:4::/64");
    expect(clientAddress("::2:3:4:5:6:7:8")).toBe("0:2:3:4::/64");
  });

  it("counts an IPv4-mapped IPv6 address as its IPv4 address, and other embedded forms as themselves", () => {
    expect(clientAddress("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(clientAddress("::FFFF:203.0.113.9")).toBe("203.0.113.9");
    expect(clientAddress("64:FF9B::203.0.113.9")).toBe("64:ff9b::203.0.113.9");
  });

  it("drops the port a proxy appends: one client is one bucket whichever port it came from", () => {
    expect(clientAddress("203.0.113.9:443")).toBe("203.0.113.9");
    expect(clientAddress("203.0.113.9:51234")).toBe("203.0.113.9");
    expect(clientAddress("[2001:db8:1:2::5]:443")).toBe("2001:db8:1:2::/64");
    expect(clientAddress("[2001:db8:1:2::5]")).toBe("2001:db8:1:2::/64");
    expect(clientAddress("[::ffff:203.0.113.9]:8080")).toBe("203.0.113.9");
  });

  it.each([
    ["nothing", undefined],
    ["an empty header", ""],
    ["a name", "localhost"],
    ["five IPv4 parts", "1.2.3.4.5"],
    ["a four-digit IPv4 part", "1.2.3.1234"],
    ["two '::'", "1::2::3"],
    ["seven groups without '::'", "1:2:3:4:5:6:7"],
    ["nine groups without '::'", "1:2:3:4:5:6:7:8:9"],
    ["eight groups and '::'", "1:2:3:4::5:6:7:8"],
    ["a five-digit group", "12345::1"],
    ["a lone colon", ":"],
    ["one hex digit", "a"],
    ["46 characters", `${"1:".repeat(22)}12`],
    ["a group that is not hex", "2001:db8:1:g::1"],
    ["an address and a comment", "2001:db8::1 (office)"],
    ["an IPv4 address and a six-digit port", "203.0.113.9:123456"],
    ["an IPv4 address and an empty port", "203.0.113.9:"],
    ["a bracketed name", "[localhost]:443"],
  ])("puts %s in the shared unknown bucket", (_what, header) => {
    expect(clientAddress(header)).toBe("unknown");
  });

  it("accepts an address of exactly 45 characters and a two-character one", () => {
    expect(clientAddress("0000:0000:0000:0000:0000:ffff:192.168.100.228")).toBe("0000:0000:0000:0000:0000:ffff:192.168.100.228");
    expect(clientAddress("::")).toBe("0:0:0:0::/64");
  });
});
