// The bearer on the admin and metrics routes (src/http/require-token.ts).
import { describe, expect, it } from "vitest";
import { requireToken } from "../../../src/http/require-token.ts";
import { rig } from "../support/hono-rig.ts";

const settings = { adminToken: "admin-tok", metricsToken: "metrics-tok" };
const ask = async (which: "admin" | "metrics", authorization?: string) => {
  const r = rig(settings, {}, { path: "/x", middleware: [requireToken(which)] });
  const res = await r.request("/x", { headers: authorization === undefined ? {} : { authorization } });
  return { status: res.status, body: await res.text(), www: res.headers.get("www-authenticate") };
};
const ADMIN_WANTED = JSON.stringify({ error: "a valid ADMIN_TOKEN bearer token is required" });
const METRICS_WANTED = JSON.stringify({ error: "a valid METRICS_TOKEN (or ADMIN_TOKEN when METRICS_TOKEN is unset) bearer token is required" });

describe("requireToken", () => {
  it("passes the route's own token only", async () => {
    expect(await ask("admin", "Bearer admin-tok")).toEqual({ status: 200, body: "passed", www: null });
    expect(await ask("metrics", "Bearer metrics-tok")).toEqual({ status: 200, body: "passed", www: null });
    expect((await ask("admin", "Bearer metrics-tok")).status).toBe(401);
    expect((await ask("metrics", "Bearer admin-tok")).status).toBe(401);
  });

  it.each([
    ["no header", undefined],
    ["another scheme", "Basic YWRtaW4tdG9r"],
    ["a wrong token", "Bearer admin-tok2"],
  ])("answers %s 401 with a JSON error naming the token wanted", async (_what, header) => {
    expect(await ask("admin", header)).toEqual({ status: 401, body: ADMIN_WANTED, www: "Bearer" });
    expect(await ask("metrics", header)).toEqual({ status: 401, body: METRICS_WANTED, www: "Bearer" });
  });
});
