// POST routes' Origin check (src/http/origin-check.ts).
import { describe, expect, it } from "vitest";
import { checkOrigin } from "../../../src/http/origin-check.ts";
import { rig } from "../support/hono-rig.ts";

const verdictOf = async (cookieAuth: boolean, origin?: string): Promise<unknown> => {
  const r = rig({}, {}, { path: "/admin/pause", handler: (c) => c.json(checkOrigin(c, cookieAuth)) });
  const res = await r.request("https://reaper.example.com/admin/pause", { method: "POST", headers: origin === undefined ? {} : { origin } });
  return await res.json();
};

describe("checkOrigin", () => {
  it("accepts our own origin, cookie or not", async () => {
    expect(await verdictOf(true, "https://reaper.example.com")).toEqual({ ok: true });
    expect(await verdictOf(false, "https://reaper.example.com")).toEqual({ ok: true });
  });

  it("refuses another origin, naming it", async () => {
    expect(await verdictOf(false, "https://evil.example")).toEqual({ ok: false, why: 'Origin "https://evil.example" is not this site\'s origin' });
    expect(await verdictOf(true, "http://reaper.example.com")).toEqual({ ok: false, why: 'Origin "http://reaper.example.com" is not this site\'s origin' });
    expect(await verdictOf(true, "null")).toEqual({ ok: false, why: 'Origin "null" is not this site\'s origin' });
  });

  it("shows at most 200 characters of a long origin", async () => {
    const long = `https://${"a".repeat(300)}.example`;
    expect(await verdictOf(false, long)).toEqual({ ok: false, why: `Origin ${JSON.stringify(long.slice(0, 200))} is not this site's origin` });
  });

  it("accepts no Origin only where a cookie cannot be what authenticates", async () => {
    expect(await verdictOf(false)).toEqual({ ok: true });
    expect(await verdictOf(true)).toEqual({ ok: false, why: "a form post with the session cookie must carry an Origin header" });
  });
});
