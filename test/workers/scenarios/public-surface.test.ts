// The public surface: the login throttle (counted in the ledger, per client
// address) and the Origin check on every POST route.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { clientAddress } from "../../../src/http/client-address.ts";
import { SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { ADMIN_TOKEN, call, configureLedger, evictLedger, ledgerOf, testEnv } from "../support/worker.ts";

const BASE = "https://arc-reaper.test";

function post(env: WorkerEnv, path: string, o: { headers?: Record<string, string>; form?: Record<string, string> } = {}): Promise<Response> {
  return call(
    env,
    new Request(`${BASE}${path}`, {
      method: "POST",
      headers: { ...(o.form ? { "content-type": "application/x-www-form-urlencoded" } : {}), ...o.headers },
      body: o.form ? new URLSearchParams(o.form).toString() : undefined,
      redirect: "manual",
    }),
  );
}

const login = (env: WorkerEnv, token: string, headers: Record<string, string> = {}) =>
  post(env, "/admin/login", { form: { token }, headers: { origin: BASE, ...headers } });

async function sessionCookie(env: WorkerEnv): Promise<string> {
  const res = await login(env, ADMIN_TOKEN);
  expect(res.status).toBe(303);
  return (res.headers.get("set-cookie") ?? "").split(";")[0]!;
}

async function logged<T>(run: () => Promise<T>): Promise<{ result: T; lines: Record<string, unknown>[]; raw: string }> {
  const log = vi.spyOn(console, "log");
  try {
    const result = await run();
    const raw = log.mock.calls.map(([line]) => String(line)).join("\n");
    return { result, lines: log.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>), raw };
  } finally {
    log.mockRestore();
  }
}

describe("the login throttle", () => {
  it("allows 5 failures a minute per address, then answers 429 even to the right token; another address is not held", async () => {
    const env = testEnv();
    const ip = { "cf-connecting-ip": "203.0.113.7" };
    const {
      result: statuses,
      lines,
      raw,
    } = await logged(async () => {
      const out: number[] = [];
      for (let i = 1; i <= 5; i++) out.push((await login(env, `wrong-token-number-${i}-xxxx`, ip)).status);
      return out;
    });
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    // Each failure logged with the address and the count, never the submitted token.
    expect(lines.filter((l) => l.msg === "admin login failed")).toEqual(
      [1, 2, 3, 4, 5].map((n) => expect.objectContaining({ client: "203.0.113.7", failures: n })),
    );
    expect(raw).not.toContain("wrong-token-number");

    const held = await login(env, ADMIN_TOKEN, ip);
    expect(held.status).toBe(429);
    expect(held.headers.get("set-cookie")).toBeNull();
    expect(Number(held.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(held.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(await held.text()).toContain("Too many failed logins from this address");

    // Counted in the ledger, so every isolate sees the same count.
    const rows = await runInDurableObject(ledgerOf(env), (_i, state) =>
      state.storage.sql.exec<{ client: string }>("SELECT client FROM login_failures").toArray(),
    );
    expect(rows.map((r) => r.client)).toEqual(Array(5).fill("203.0.113.7"));

    expect((await login(env, ADMIN_TOKEN, { "cf-connecting-ip": "198.51.100.1" })).status).toBe(303);
  });

  it("lets the address in again once its failures are a minute old", async () => {
    const env = testEnv();
    const ip = { "cf-connecting-ip": "2001:db8::1" };
    for (let i = 0; i < 5; i++) expect((await login(env, "wrong-token-wrong-token", ip)).status).toBe(401);
    expect((await login(env, ADMIN_TOKEN, ip)).status).toBe(429);
    await runInDurableObject(ledgerOf(env), (_i, state) => void state.storage.sql.exec("UPDATE login_failures SET at = at - 60000"));
    expect((await login(env, ADMIN_TOKEN, ip)).status).toBe(303);
  });

  it("puts requests without CF-Connecting-IP in one shared bucket", async () => {
    const env = testEnv();
    for (let i = 0; i < 5; i++) expect((await login(env, "wrong-token-wrong-token")).status).toBe(401);
    expect((await login(env, ADMIN_TOKEN, { "cf-connecting-ip": "not an address" })).status).toBe(429);
    expect((await login(env, ADMIN_TOKEN, { "cf-connecting-ip": "192.0.2.9" })).status).toBe(303);
  });
});

describe("the ledger's sessions", () => {
  it("a ledger made before sessions existed (schema 1) gains them on its next start; its runners stay", async () => {
    const env = testEnv();
    await configureLedger(env);
    await runInDurableObject(ledgerOf(env), (_i, state) => {
      state.storage.sql.exec("INSERT INTO memory (key, value) VALUES ('kept', '1')");
      state.storage.sql.exec("DROP TABLE sessions");
      state.storage.sql.exec("DROP TABLE login_failures");
      state.storage.sql.exec("DROP TABLE agent_view"); // migration 3 (agent mode), rerun too
      state.storage.sql.exec("DROP TABLE agent_snapshot");
      // Migrations 4 (one reconcile), 5 (watched deletions), 6 (names), 7 (many clusters) and 9 (next looks), undone too.
      for (const statement of [
        "DROP INDEX runners_by_prune",
        "ALTER TABLE runners DROP COLUMN prune_at",
        "ALTER TABLE runners DROP COLUMN failures",
        "ALTER TABLE unseen DROP COLUMN failures",
        "DROP TABLE deletions",
        "DROP INDEX runners_held_by_cluster",
        "DROP INDEX runners_held",
        "DROP INDEX unseen_by_due",
        "DROP TABLE agent_removed",
        "ALTER TABLE runners DROP COLUMN held_for",
        "ALTER TABLE runners DROP COLUMN cluster",
        "ALTER TABLE runners DROP COLUMN fact_at",
        "ALTER TABLE unseen DROP COLUMN held_for",
        "ALTER TABLE unseen DROP COLUMN cluster",
      ])
        state.storage.sql.exec(statement);
      // Migration 6 (names, hourly counters, listing indexes), undone too.
      for (const column of ["workflow_name", "job_name", "head_branch", "run_url"]) state.storage.sql.exec(`ALTER TABLE runners DROP COLUMN ${column}`);
      state.storage.sql.exec("ALTER TABLE runs DROP COLUMN names");
      state.storage.sql.exec("DROP TABLE hourly_outcomes");
      state.storage.sql.exec("DROP INDEX runners_by_state_id");
      state.storage.sql.exec("DROP INDEX runners_by_repo_id");
      // Migrations 12 (runner ids), 14 (unseen rows' verdict keys) and 15 (deletion checks' codes), undone too.
      state.storage.sql.exec("ALTER TABLE runners DROP COLUMN runner_id");
      state.storage.sql.exec("ALTER TABLE unseen DROP COLUMN verdict_key");
      state.storage.sql.exec("ALTER TABLE runners DROP COLUMN check_code");
      state.storage.sql.exec("UPDATE schema_version SET version = 1");
    });
    await evictLedger(env);
    expect((await login(env, ADMIN_TOKEN)).status).toBe(303);
    const after = await runInDurableObject(ledgerOf(env), (_i, state) => ({
      version: state.storage.sql.exec<{ version: number }>("SELECT version FROM schema_version").one().version,
      sessions: state.storage.sql.exec("SELECT * FROM sessions").toArray().length,
      kept: state.storage.sql.exec<{ value: string }>("SELECT value FROM memory WHERE key = 'kept'").one().value,
    }));
    expect(after).toEqual({ version: SCHEMA_VERSION, sessions: 1, kept: "1" });
  });
});

describe("the client address a login counts against", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7"],
    [" 198.51.100.1 ", "198.51.100.1"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:DB8:0001:0002::5", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    [undefined, "unknown"],
    ["", "unknown"],
    ["not an address", "unknown"],
    ["1:2:3", "unknown"],
    ["1::2::3", "unknown"],
  ])("%s counts as %s", (header, bucket) => {
    expect(clientAddress(header)).toBe(bucket);
  });

  it("holds a whole IPv6 /64 once it reached the limit, and not its neighbour", async () => {
    const env = testEnv();
    for (let i = 1; i <= 5; i++) expect((await login(env, "wrong-token-wrong-token", { "cf-connecting-ip": `2001:db8:aa:bb::${i}` })).status).toBe(401);
    expect((await login(env, ADMIN_TOKEN, { "cf-connecting-ip": "2001:db8:aa:bb:ffff::9" })).status).toBe(429);
    expect((await login(env, ADMIN_TOKEN, { "cf-connecting-ip": "2001:db8:aa:bc::1" })).status).toBe(303);
  });
});

describe("Origin on POST routes", () => {
  it("refuses a login posted from another origin, and takes one without Origin (a script, not a browser)", async () => {
    const env = testEnv();
    const foreign = await login(env, ADMIN_TOKEN, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("set-cookie")).toBeNull();
    const noOrigin = await post(env, "/admin/login", { form: { token: ADMIN_TOKEN } });
    expect(noOrigin.status).toBe(303);
  });

  it("refuses a cookie logout without Origin or from another origin, and keeps the session", async () => {
    const env = testEnv();
    const cookie = await sessionCookie(env);
    expect((await post(env, "/admin/logout", { headers: { cookie } })).status).toBe(403);
    expect((await post(env, "/admin/logout", { headers: { cookie, origin: "https://evil.example" } })).status).toBe(403);
    expect((await call(env, new Request(`${BASE}/admin`, { headers: { cookie } }))).status).toBe(200);
    expect((await post(env, "/admin/logout", { headers: { cookie, origin: BASE } })).status).toBe(303);
  });

  it("pause and resume: a session needs its own Origin, a bearer call may omit it but never send another", async () => {
    const env = testEnv();
    const cookie = await sessionCookie(env);
    const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
    for (const path of ["/admin/pause", "/admin/resume"]) {
      expect((await post(env, path, { headers: { cookie } })).status).toBe(403);
      expect((await post(env, path, { headers: { cookie, origin: "https://evil.example" } })).status).toBe(403);
      expect((await post(env, path, { headers: { cookie, origin: "null" } })).status).toBe(403);
      expect((await post(env, path, { headers: { ...bearer, origin: "https://evil.example" } })).status).toBe(403);
      expect((await post(env, path)).status).toBe(401);
    }
    expect((await ledgerOf(env).admin().snapshot()).paused).toBeNull(); // nothing refused above took effect
    const byForm = await post(env, "/admin/pause", { headers: { cookie, origin: BASE } });
    expect(byForm.status).toBe(303);
    expect(byForm.headers.get("location")).toBe("/admin");
    expect((await ledgerOf(env).admin().snapshot()).paused).toMatchObject({ by: "session" });
    const byApi = await post(env, "/admin/resume", { headers: bearer });
    expect(byApi.status).toBe(200);
    expect(await byApi.json()).toMatchObject({ paused: null, wasPaused: true });
  });
});
