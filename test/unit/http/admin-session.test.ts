// The admin page's login session (src/http/admin-session.ts): a random id in a __Host- cookie,
// only hashes in the ledger, the bearer ADMIN_TOKEN accepted as it is.
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Settings } from "../../../src/config/settings.ts";
import { endSession, isAdmin, startSession } from "../../../src/http/admin-session.ts";
import type { LoginOutcome } from "../../../src/ledger/sessions-table.ts";
import { rig } from "../support/hono-rig.ts";

const settings = { adminToken: "admin-tok", ledgerName: "ledger-s" } as Settings;
const sha = (text: string): string => createHash("sha256").update(text).digest("base64url");
const ID = "A".repeat(43);
const NOW = 1_700_000_000_000;

beforeEach(() => vi.useFakeTimers({ now: NOW, toFake: ["Date"] }));
afterEach(() => vi.useRealTimers());

function sessions(opts: { live?: boolean; login?: LoginOutcome } = {}) {
  const calls: unknown[][] = [];
  // The ledger itself answers logins and sessions: no RpcTarget to dispose.
  const target = {
    checkSession: async (...args: unknown[]) => {
      calls.push(["checkSession", ...args]);
      return opts.live ?? false;
    },
    login: async (attempt: unknown) => {
      calls.push(["login", attempt]);
      return opts.login ?? { kind: "session", expiresAt: NOW + 43_200_000 };
    },
    endSession: async (...args: unknown[]) => {
      calls.push(["endSession", ...args]);
    },
  };
  const r = rig(settings, target, {
    path: "/admin/:what",
    handler: async (c) => {
      const what = c.req.param("what");
      if (what === "check") return c.json({ admin: (await isAdmin(c, settings)) ?? null });
      if (what === "login") return c.json(await startSession(c, settings, "203.0.113.9", c.req.query("token") ?? ""));
      await endSession(c, settings);
      return c.text("out");
    },
  });
  return { r, calls, target };
}

describe("isAdmin", () => {
  it("accepts the bearer ADMIN_TOKEN without asking the ledger", async () => {
    const s = sessions();
    const res = await s.r.request("/admin/check", { headers: { authorization: "Bearer admin-tok" } });
    expect(await res.json()).toEqual({ admin: "bearer" });
    expect(s.calls).toEqual([]);
  });

  it("checks a session cookie's id and token hashes with the ledger", async () => {
    const live = sessions({ live: true });
    const res = await live.r.request("/admin/check", { headers: { cookie: `__Host-arc-reaper-admin=${ID}`, authorization: "Bearer wrong" } });
    expect(await res.json()).toEqual({ admin: "session" });
    expect(live.calls).toEqual([["checkSession", sha(ID), sha("arc-reaper admin token v1|admin-tok"), NOW]]);
    expect(live.r.names).toEqual(["ledger-s"]);
    const dead = sessions({ live: false });
    expect(await (await dead.r.request("/admin/check", { headers: { cookie: `__Host-arc-reaper-admin=${ID}` } })).json()).toEqual({ admin: null });
  });

  it.each([
    ["no cookie", undefined],
    ["a cookie without the __Host- prefix", `arc-reaper-admin=${ID}`],
    ["an id too short", `__Host-arc-reaper-admin=${"A".repeat(42)}`],
    ["an id too long", `__Host-arc-reaper-admin=${"A".repeat(44)}`],
    ["an id with a character not base64url", `__Host-arc-reaper-admin=${"A".repeat(42)}+`],
  ])("is not admin with %s, and asks the ledger nothing", async (_what, cookie) => {
    const s = sessions({ live: true });
    const res = await s.r.request("/admin/check", { headers: cookie === undefined ? {} : { cookie } });
    expect(await res.json()).toEqual({ admin: null });
    expect(s.calls).toEqual([]);
  });
});

describe("startSession", () => {
  it("sends the attempt with the new id's and the token's hashes and a 12 h life, and sets the cookie", async () => {
    const s = sessions();
    const res = await s.r.request("/admin/login?token=admin-tok");
    expect(await res.json()).toEqual({ kind: "session", expiresAt: NOW + 43_200_000 });
    const cookie = res.headers.get("set-cookie") ?? "";
    const id = /^__Host-arc-reaper-admin=([A-Za-z0-9_-]{43}); /.exec(cookie)?.[1];
    expect(id).toBeDefined();
    expect(cookie).toBe(`__Host-arc-reaper-admin=${id}; Max-Age=43200; Path=/; HttpOnly; Secure; SameSite=Strict`);
    expect(s.calls).toEqual([
      [
        "login",
        {
          client: "203.0.113.9",
          tokenMatches: true,
          session: { idHash: sha(id ?? ""), tokenHash: sha("arc-reaper admin token v1|admin-tok"), ttlMs: 43_200_000 },
          now: NOW,
        },
      ],
    ]);
  });

  it("sets no cookie when the ledger refuses or throttles, and says the token did not match", async () => {
    const s = sessions({ login: { kind: "refused", failures: 1 } });
    const res = await s.r.request("/admin/login?token=guess");
    expect(await res.json()).toEqual({ kind: "refused", failures: 1 });
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(s.calls[0]?.[1]).toMatchObject({ tokenMatches: false });
  });

  it("makes a new id each time", async () => {
    const s = sessions();
    const a = (await s.r.request("/admin/login?token=admin-tok")).headers.get("set-cookie");
    const b = (await s.r.request("/admin/login?token=admin-tok")).headers.get("set-cookie");
    expect(a).not.toBe(b);
  });
});

describe("endSession", () => {
  it("has the ledger forget the session's id hash, and clears the cookie", async () => {
    const s = sessions();
    const res = await s.r.request("/admin/logout", { headers: { cookie: `__Host-arc-reaper-admin=${ID}` } });
    expect(s.calls).toEqual([["endSession", sha(ID)]]);
    expect(res.headers.get("set-cookie")).toBe("__Host-arc-reaper-admin=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Strict");
  });

  it("without a session cookie only clears it", async () => {
    const s = sessions();
    const res = await s.r.request("/admin/logout");
    expect(s.calls).toEqual([]);
    expect(res.headers.get("set-cookie")).toMatch(/^__Host-arc-reaper-admin=; Max-Age=0; /);
  });
});
