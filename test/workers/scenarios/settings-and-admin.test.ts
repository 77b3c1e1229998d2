import { describe, expect, it, vi } from "vitest";
import { readSettings } from "../../../src/config/settings.ts";
import { workflowJobPayload } from "../support/payloads.ts";
import { ADMIN_TOKEN, call, deliver, ledgerRows, testEnv } from "../support/worker.ts";

const get = (env: ReturnType<typeof testEnv>, path: string, headers: Record<string, string> = {}) =>
  call(env, new Request(`https://arc-reaper.test${path}`, { headers }));

describe("settings", () => {
  it("GET /healthz answers 200 when every setting is valid", async () => {
    const res = await get(testEnv(), "/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  const BROKEN = {
    GITHUB_WEBHOOK_SECRET: undefined,
    GITHUB_APP_ID: "my-app",
    GITHUB_APP_PRIVATE_KEY: "not a key",
    KUBE_API_URL: "ftp://cluster",
    KUBE_TOKEN: undefined,
    REAPER_NAMESPACES: "Runners,ok-ns",
    REAPER_GRACE_SECONDS: "-5",
    REAPER_MAX_JOB_SECONDS: "5 days",
    REAPER_DRY_RUN: "maybe",
    REAPER_MAX_DELETIONS_PER_SWEEP: "1.5",
  };
  const PROBLEMS = [
    "GITHUB_WEBHOOK_SECRET is missing",
    "GITHUB_APP_ID must be the App's numeric id",
    "GITHUB_APP_PRIVATE_KEY must be a PEM RSA private key (PKCS#1 or PKCS#8)",
    'KUBE_API_URL must be an https URL, got "ftp://cluster"',
    "KUBE_TOKEN is missing",
    "REAPER_NAMESPACES: entry 1 is not a valid namespace name (lowercase letters, digits and dashes, at most 63)",
    "REAPER_GRACE_SECONDS must be a whole number >= 0",
    "REAPER_MAX_JOB_SECONDS must be a whole number >= 1",
    "REAPER_DRY_RUN must be true or false",
    "REAPER_MAX_DELETIONS_PER_SWEEP must be a whole number >= 0",
  ];

  it("GET /healthz tells anyone only {ok:false}, and logs every missing or invalid setting", async () => {
    const env = testEnv({ ...BROKEN, ADMIN_TOKEN: "short" });
    const log = vi.spyOn(console, "log");
    const res = await get(env, "/healthz");
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    log.mockRestore();
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('{"ok":false}');
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "healthz: arc-reaper is misconfigured", errors: [...PROBLEMS, "ADMIN_TOKEN must be at least 16 characters"] }),
    );
  });

  it("GET /healthz lists the problems to the admin bearer token only", async () => {
    const env = testEnv(BROKEN);
    const res = await get(env, "/healthz", { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ok: false, errors: PROBLEMS });
    const wrong = await get(env, "/healthz", { authorization: "Bearer wrong-token-wrong-token" });
    expect(await wrong.json()).toEqual({ ok: false });
  });

  it("GET /healthz with a bearer is under the bearer throttle while the settings are invalid: guessing ADMIN_TOKEN is not free", async () => {
    const env = testEnv(BROKEN);
    const from = { "cf-connecting-ip": "198.51.100.7" };
    for (let i = 0; i < 5; i++) {
      const wrong = await get(env, "/healthz", { ...from, authorization: `Bearer wrong-token-wrong-token-${i}` });
      expect(await wrong.json()).toEqual({ ok: false });
    }
    const right = await get(env, "/healthz", { ...from, authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(right.status).toBe(429);
    expect(await right.json()).toEqual({ ok: false, error: expect.stringMatching(/^too many failed tokens from this address/) });
    // Another address is not held back, and without a bearer nothing is counted.
    expect(await (await get(env, "/healthz", { "cf-connecting-ip": "198.51.100.8", authorization: `Bearer ${ADMIN_TOKEN}` })).json()).toEqual({
      ok: false,
      errors: PROBLEMS,
    });
    expect((await get(env, "/healthz", from)).status).toBe(503);
  });

  it("never echoes a secret in an error", () => {
    const result = readSettings({ ...testEnv(), GITHUB_APP_PRIVATE_KEY: "super-secret-key-material" });
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain("super-secret-key-material");
  });

  it("accepts a one-line private key with literal \\n and defaults the optional settings", () => {
    const result = readSettings({
      ...testEnv({ GITHUB_API_URL: undefined, REAPER_GRACE_SECONDS: undefined, REAPER_DRY_RUN: undefined }),
    });
    expect(result).toMatchObject({
      ok: true,
      settings: {
        githubApiUrl: "https://api.github.com",
        graceSeconds: 300,
        maxJobSeconds: 432000,
        // Unset is dry run (fail safe), with a warning that says so.
        dryRun: true,
        warnings: [expect.stringMatching(/^REAPER_DRY_RUN is unset/)],
        maxGithubCallsPerMinute: 100,
        namespaces: ["arc-runners"],
      },
    });
    if (result.ok) expect(result.settings.privateKey.split("\n")).toHaveLength(3);
  });

  it("a misconfigured Worker answers 503 on /webhook and records nothing", async () => {
    const env = testEnv({ KUBE_TOKEN: undefined });
    const res = await deliver(env, "workflow_job", workflowJobPayload("in_progress", { runner: "arc-x-1" }));
    expect(res.status).toBe(503);
    // What is wrong goes to the log (and GET /healthz with the admin token), never to whoever posted.
    expect(await res.json()).toEqual({ error: "arc-reaper is misconfigured: see the log, or GET /healthz with the admin token" });
    expect(await ledgerRows(env)).toBe(0);
  });
});

describe("GET /admin/runners", () => {
  it.each([
    ["no token", {}],
    ["a wrong token", { authorization: "Bearer wrong-token-wrong-token" }],
    ["a token with one character changed", { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}X` }],
    ["another scheme", { authorization: `Basic ${ADMIN_TOKEN}` }],
    ["a bearer that is not a token (RFC 6750)", { authorization: "Bearer not a token!" }],
  ])("answers 401 with %s", async (_what, headers) => {
    const res = await get(testEnv(), "/admin/runners", headers);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "a valid ADMIN_TOKEN bearer token is required" });
  });

  it("filters by state and refuses an unknown state", async () => {
    const env = testEnv();
    await deliver(
      env,
      "workflow_job",
      workflowJobPayload("in_progress", { runner: "arc-x-running", jobId: 1, runId: 10, runAttempt: 1, startedAt: new Date().toISOString() }),
    );
    await deliver(
      env,
      "workflow_job",
      workflowJobPayload("completed", {
        runner: "arc-x-done",
        jobId: 2,
        runId: 11,
        runAttempt: 1,
        startedAt: new Date(Date.now() - 60_000).toISOString(),
        completedAt: new Date().toISOString(),
        conclusion: "success",
      }),
    );
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const running = (await (await get(env, "/admin/runners?state=running", auth)).json()) as { runners: { name: string }[] };
    expect(running.runners.map((r) => r.name)).toEqual(["arc-x-running"]);
    const finished = (await (await get(env, "/admin/runners?state=finished", auth)).json()) as { runners: { name: string; code: string | null }[] };
    // Not judged yet (the facts' own schedule): no code, due at the grace's end.
    expect(finished.runners).toEqual([expect.objectContaining({ name: "arc-x-done", code: null, dueAt: expect.any(String) })]);
    const bad = await get(env, "/admin/runners?state=stale", auth);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'state must be one of running, finished, failed, stuck, reaped, gone, got "stale"' });
  });
});
