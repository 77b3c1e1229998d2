// The in-cluster server behind an Ingress that terminates TLS: the browser is on
// https:// and sends that Origin, the server is reached over plain HTTP. The
// admin page's login and its pause button work through the trusted proxy (which
// writes X-Forwarded-For and X-Forwarded-Proto); a forged X-Forwarded-Proto sent
// straight to the server, past the proxy, does not count.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverWorld, trustedProxy, type ServerWorld } from "./server-rig.ts";

let world: ServerWorld;
beforeAll(async () => {
  world = await serverWorld();
}, 120_000);
afterAll(async () => world?.close());

const FORM = { "content-type": "application/x-www-form-urlencoded" };

describe("the in-cluster server behind a TLS-terminating Ingress", () => {
  it("takes the browser's https:// Origin from the trusted proxy for login and pause, and no forged one", async () => {
    const server = await world.start({ settings: { REAPER_CLIENT_ADDRESS_HEADER: "X-Forwarded-For", REAPER_TRUSTED_PROXIES: "1" } });
    const proxy = await trustedProxy(server.url, { forwardedProto: "https" });
    try {
      const origin = `https://${new URL(server.url).host}`;
      const body = `token=${encodeURIComponent(world.adminToken)}`;
      const login = await proxy.via("127.0.0.2", "/admin/login", { method: "POST", headers: { ...FORM, origin }, body });
      expect(login.status, login.body).toBe(303);
      const cookie = String(login.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
      expect(cookie).toMatch(/^__Host-arc-reaper-admin=/);
      const pause = await proxy.via("127.0.0.2", "/admin/pause", { method: "POST", headers: { ...FORM, origin, cookie }, body: "" });
      expect(pause.status, pause.body).toBe(303);
      const page = await proxy.via("127.0.0.2", "/admin", { headers: { cookie } });
      expect(page.body).toContain('id="paused"');
      // Past the proxy, the same headers forged: the server's own origin stays http://, so https:// is another site.
      const forged = await fetch(`${server.url}/admin/login`, {
        method: "POST",
        headers: { ...FORM, origin, "x-forwarded-proto": "https" },
        body,
        redirect: "manual",
      });
      expect(forged.status).toBe(403);
      // And through the proxy, an Origin of another site is still refused.
      const other = await proxy.via("127.0.0.3", "/admin/login", { method: "POST", headers: { ...FORM, origin: "https://evil.example.invalid" }, body });
      expect(other.status).toBe(403);
    } finally {
      await proxy.close();
      await server.kill();
    }
  });
});
