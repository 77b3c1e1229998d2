// The in-cluster server's front door, against the server as the image runs it
// behind a proxy that writes X-Forwarded-For as an Ingress controller does
// (server-rig.ts trustedProxy; clients connect from their own 127.0.0.x).
// FRONT_DOOR's window is wrangler.toml's 600 requests per 10 s, counted in
// fixed windows: a flood is sent at the start of one, so a real wait of at
// most a few seconds comes first (the server's clock is the machine's).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflowJobPayload } from "../../../scripts/lib/local-stack.ts";
import { ADDRESS_NOT_SET } from "../../../src/config/home.ts";
import { INSTALLATION, REPO, serverWorld, trustedProxy, type ServerWorld } from "./server-rig.ts";

const LIMIT = 600;
const PERIOD_MS = 10_000;
let world: ServerWorld;
beforeAll(async () => {
  world = await serverWorld();
}, 120_000);
afterAll(async () => world?.close());

/**
 * Waits (at most PERIOD_MS - 1.5 s) until a window has just begun, so the next few seconds fall in one window.
 * Real time: the running server's limiter counts in windows of the wall clock, which no test hook moves.
 */
async function windowStart(): Promise<void> {
  const into = Date.now() % PERIOD_MS;
  if (into > 500) await new Promise((r) => setTimeout(r, PERIOD_MS - into + 50));
}

/**
 * Runs `send` from the start of a window until one run fits inside a single window (at most 3 tries:
 * on a loaded machine 650 requests may outlast what is left of one). Each try gets its attempt number.
 */
async function inOneWindow<T>(send: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    await windowStart();
    const window = Math.floor(Date.now() / PERIOD_MS);
    const result = await send(attempt);
    // Else the next window starts afresh (the limiter's windows are fixed), and the next try waits for it.
    if (Math.floor(Date.now() / PERIOD_MS) === window || attempt === 2) return result;
  }
}

/** `n` requests, `concurrency` at a time; the statuses in order. */
async function flood(n: number, concurrency: number, one: () => Promise<number>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += concurrency) statuses.push(...(await Promise.all(Array.from({ length: Math.min(concurrency, n - i) }, one))));
  return statuses;
}

const shed = (statuses: number[]) => statuses.filter((s) => s === 429).length;

describe("the in-cluster server's front door", () => {
  it("sheds a flood from one forwarded address, takes no forged address, and throttles logins per address", async () => {
    const server = await world.start({ settings: { REAPER_CLIENT_ADDRESS_HEADER: "X-Forwarded-For", REAPER_TRUSTED_PROXIES: "1" } });
    const proxy = await trustedProxy(server.url);
    try {
      const { statuses, flooder } = await inOneWindow((attempt) => {
        const client = `127.0.0.${2 + 10 * attempt}`;
        return flood(LIMIT + 50, 25, async () => (await proxy.via(client, "/agent")).status).then((statuses) => ({ statuses, flooder: client }));
      });
      expect(shed(statuses)).toBe(50);
      // A forged X-Forwarded-For does not let the flooder out of its bucket, nor another client into it.
      expect((await proxy.via(flooder, "/agent", { headers: { "x-forwarded-for": "192.0.2.77" } })).status).toBe(429);
      expect((await proxy.via("127.0.0.3", "/agent", { headers: { "x-forwarded-for": flooder } })).status).not.toBe(429);
      // A signed delivery from another address is recorded meanwhile.
      const runner = "arc-runners-door-runner-1";
      const payload = workflowJobPayload("in_progress", {
        runner,
        repo: REPO,
        runId: 8100,
        runAttempt: 1,
        jobId: 81000,
        installationId: INSTALLATION,
        startedAt: new Date().toISOString(),
      });
      const body = JSON.stringify(payload);
      const delivery = await proxy.via("127.0.0.3", "/webhook", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "workflow_job",
          "x-github-delivery": crypto.randomUUID(),
          "x-hub-signature-256": await world.sign(body),
        },
        body,
      });
      expect(delivery.status).toBeLessThan(300);
      const rows = await proxy.via("127.0.0.4", "/admin/runners", { headers: { authorization: `Bearer ${world.adminToken}` } });
      expect(rows.status).toBe(200);
      expect(JSON.parse(rows.body).runners.map((r: { name: string }) => r.name)).toContain(runner);

      // Failed logins from one address lock out that address only.
      const login = (client: string, token: string) =>
        proxy.via(client, "/admin/login", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: `token=${encodeURIComponent(token)}`,
        });
      const failures = [];
      for (let i = 0; i < 6; i++) failures.push((await login("127.0.0.5", "not-the-admin-token")).status);
      expect(failures).toEqual([401, 401, 401, 401, 401, 429]);
      expect((await login("127.0.0.6", world.adminToken)).status).toBe(303);
    } finally {
      await proxy.close();
      await server.kill();
    }
  });

  it("counts every client in one shared bucket, which is limited, when the header is not set, and says so; the probe is never shed", async () => {
    const server = await world.start();
    try {
      const deep = await fetch(`${server.url}/healthz/deep`, { headers: { authorization: `Bearer ${world.adminToken}` } });
      expect(((await deep.json()) as { warnings?: string[] }).warnings).toContain(ADDRESS_NOT_SET);
      const statuses = await inOneWindow(() =>
        flood(LIMIT + 50, 25, async () => {
          const res = await fetch(`${server.url}/agent`, { headers: { "x-forwarded-for": "198.51.100.1" } });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      expect(shed(statuses)).toBe(50);
      // The probe (no address header, as the kubelet sends it) still answers: the pod stays on its Service.
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      // A request the bucket holds is still shed: the flood's window has not ended.
      expect((await fetch(`${server.url}/agent`)).status).toBe(429);
    } finally {
      await server.kill();
    }
  });
});
