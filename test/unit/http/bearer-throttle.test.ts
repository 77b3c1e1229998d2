// The throttle bearer tokens share with the login form (src/http/bearer-throttle.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { BearerOutcome } from "../../../src/ledger/sessions-table.ts";
import { throttleBearer } from "../../../src/http/bearer-throttle.ts";
import { rig } from "../support/hono-rig.ts";

const settings = { adminToken: "admin-tok", metricsToken: "metrics-tok", ledgerName: "ledger-x" };
type Attempt = { client: string; tokenMatches: boolean; now: number };

function throttled(outcome: BearerOutcome, accepts: "admin" | "metrics" = "admin") {
  const attempts: Attempt[] = [];
  const sessions = {
    bearer: (a: Attempt) => {
      attempts.push(a);
      return outcome;
    },
  };
  const r = rig(settings, sessions, { path: "/admin/runners", middleware: [throttleBearer(accepts)] });
  return { r, attempts, sessions };
}
let lines: string[];
beforeEach(() => {
  vi.useFakeTimers({ now: 1_700_000_000_000, toFake: ["Date"] });
  lines = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});
const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).map(({ at: _at, ...rest }) => rest);

describe("throttleBearer", () => {
  it("costs nothing without a bearer: no ledger call, no line", async () => {
    const { r, attempts } = throttled({ kind: "accepted" });
    const res = await r.request("/admin/runners", { headers: { authorization: "Basic x" } });
    expect([res.status, await res.text()]).toEqual([200, "passed"]);
    expect(attempts).toEqual([]);
    expect(r.names).toEqual([]);
  });

  it("counts the attempt against the client's address on the ledger named in the settings, and passes an accepted one", async () => {
    const { r, attempts } = throttled({ kind: "accepted" });
    const res = await r.request("/admin/runners", { headers: { authorization: "Bearer admin-tok", "cf-connecting-ip": "203.0.113.9" } });
    expect([res.status, await res.text()]).toEqual([200, "passed"]);
    expect(attempts).toEqual([{ client: "203.0.113.9", tokenMatches: true, now: 1_700_000_000_000 }]);
    expect(r.names).toEqual(["ledger-x"]);
    expect(lines).toEqual([]);
  });

  it("compares with the token the route accepts", async () => {
    const admin = throttled({ kind: "accepted" }, "admin");
    await admin.r.request("/admin/runners", { headers: { authorization: "Bearer metrics-tok" } });
    const metrics = throttled({ kind: "accepted" }, "metrics");
    await metrics.r.request("/admin/runners", { headers: { authorization: "Bearer metrics-tok" } });
    expect([admin.attempts[0]?.tokenMatches, metrics.attempts[0]?.tokenMatches]).toEqual([false, true]);
  });

  it("passes a refused token on (the route answers 401) and logs who tried, never the token", async () => {
    const { r } = throttled({ kind: "refused", failures: 3 });
    const res = await r.request("/admin/runners", { headers: { authorization: "Bearer guess", "cf-connecting-ip": "203.0.113.9" } });
    expect(res.status).toBe(200);
    expect(logged()).toEqual([{ msg: "bearer refused", path: "/admin/runners", client: "203.0.113.9", failures: 3 }]);
    expect(lines.join("")).not.toContain("guess");
  });

  it("answers a throttled address 429 with Retry-After, even with the right token", async () => {
    const { r } = throttled({ kind: "throttled", failures: 11, retryAfterSeconds: 42 });
    const res = await r.request("/admin/runners", { headers: { authorization: "Bearer admin-tok", "cf-connecting-ip": "203.0.113.9" } });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("42");
    expect(await res.json()).toEqual({ error: "too many failed tokens from this address: try again in 42s" });
    expect(logged()).toEqual([{ msg: "bearer throttled", path: "/admin/runners", client: "203.0.113.9", failures: 11, retryAfterSeconds: 42 }]);
  });
});
