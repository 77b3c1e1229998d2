// Drives the real Worker entry (fetch and scheduled) inside workerd with a
// settings env of the test's choosing. Every env gets a ledger of its own (a
// Durable Object by a fresh LEDGER_NAME) that is given the same settings.
import { env as bindings } from "cloudflare:workers";
import {
  createExecutionContext,
  createScheduledController,
  evictDurableObject,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { Webhooks } from "@octokit/webhooks";
import worker from "../../../src/index.ts";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import type { Ledger as TestLedger } from "../../hooks/test-ledger.ts";

const WEBHOOK_SECRET = "test-webhook-secret-0123456789";
export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

// The test entry binds the test ledger (test/hooks/test-ledger.ts): the production class and its hooks.
const LEDGER = (bindings as unknown as { LEDGER: DurableObjectNamespace<TestLedger> }).LEDGER;
// The front door's rate limit (wrangler.toml's [[ratelimits]]); it counts only requests that carry CF-Connecting-IP.
const FRONT_DOOR = (bindings as unknown as { FRONT_DOOR: unknown }).FRONT_DOOR;
let ledgerCounter = 0;
const configured = new WeakSet<WorkerEnv>();

/** A complete, valid settings env; cluster and GitHub URLs point nowhere unless a test sets them. */
export function testEnv(overrides: Record<string, string | undefined> = {}): WorkerEnv {
  const base: Record<string, string> = {
    GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
    GITHUB_APP_ID: "1",
    GITHUB_APP_PRIVATE_KEY:
      "-----BEGIN RSA PRIVATE KEY-----\\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\\n-----END RSA PRIVATE KEY-----",
    GITHUB_API_URL: "http://127.0.0.1:9/github",
    KUBE_API_URL: "http://127.0.0.1:9/kube",
    KUBE_TOKEN: "test-kube-token",
    REAPER_NAMESPACES: "arc-runners",
    REAPER_GRACE_SECONDS: "300",
    REAPER_MAX_JOB_SECONDS: "432000",
    REAPER_DRY_RUN: "false",
    REAPER_MAX_DELETIONS_PER_MINUTE: "50",
    ADMIN_TOKEN,
  };
  const merged: Record<string, unknown> = { ...base, LEDGER_NAME: `test-${Date.now().toString(36)}-${++ledgerCounter}`, LEDGER, FRONT_DOOR };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  return merged as WorkerEnv;
}

/** The ledger of this env. */
export function ledgerOf(env: WorkerEnv) {
  return LEDGER.get(LEDGER.idFromName(String(env.LEDGER_NAME ?? "ledger")));
}

/** Gives the env's ledger the env's settings once, as a deployed ledger reads them from its own env. */
export async function configureLedger(env: WorkerEnv): Promise<void> {
  if (configured.has(env)) return;
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"));
  await ledgerOf(env).useTestSettings(vars);
  configured.add(env);
}

/** Runs the ledger's alarm now, if one is set; answers whether it ran. */
export async function runAlarm(env: WorkerEnv): Promise<boolean> {
  await configureLedger(env);
  return runDurableObjectAlarm(ledgerOf(env));
}

/** Runs every alarm that is due now (the runtime may fire one on its own meanwhile) and waits until none is running. */
export async function settleAlarms(env: WorkerEnv, timeoutMs = 10_000): Promise<void> {
  await configureLedger(env);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await ledgerOf(env).idle();
    const at = await alarmAt(env);
    if (at === null || at > Date.now() + 50 || Date.now() > deadline) return;
    await runDurableObjectAlarm(ledgerOf(env));
  }
}

/** When the ledger's alarm is set for (ms), or null. */
export async function alarmAt(env: WorkerEnv): Promise<number | null> {
  return runInDurableObject(ledgerOf(env), (_instance, state) => state.storage.getAlarm());
}

/** Tears down the ledger's instance, as when the next call lands in a fresh isolate; storage stays. */
export async function evictLedger(env: WorkerEnv): Promise<void> {
  await evictDurableObject(ledgerOf(env)).catch(() => undefined); // not running: nothing to evict
}

/** Rows in the ledger's tables of facts (runners and runs): zero means nothing was recorded. */
export async function ledgerRows(env: WorkerEnv): Promise<number> {
  return runInDurableObject(ledgerOf(env), (_instance, state) => {
    const runners = state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runners").one().n;
    const runs = state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runs").one().n;
    return runners + runs;
  });
}

export async function call(env: WorkerEnv, request: Request): Promise<Response> {
  await configureLedger(env);
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

let deliveryCounter = 0;
function newDeliveryId(): string {
  deliveryCounter++;
  return `72d3162e-cc78-11e3-81ab-${String(deliveryCounter).padStart(12, "0")}`;
}

export async function signedDelivery(event: string, payload: unknown, opts: { delivery?: string; secret?: string; body?: string } = {}): Promise<Request> {
  const body = opts.body ?? JSON.stringify(payload);
  const signature = await new Webhooks({ secret: opts.secret ?? WEBHOOK_SECRET }).sign(body);
  return new Request("https://arc-reaper.test/webhook", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": opts.delivery ?? newDeliveryId(),
      "x-hub-signature-256": signature,
    },
    body,
  });
}

export async function deliver(env: WorkerEnv, event: string, payload: unknown, opts: { delivery?: string } = {}): Promise<Response> {
  return call(env, await signedDelivery(event, payload, opts));
}

export async function adminRunners(env: WorkerEnv, query = ""): Promise<{ runners: Record<string, unknown>[]; nextCursor: string | null }> {
  const response = await call(env, new Request(`https://arc-reaper.test/admin/runners${query}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
  if (response.status !== 200) throw new Error(`admin/runners answered ${response.status}: ${await response.text()}`);
  return response.json();
}

export async function runScheduled(env: WorkerEnv, scheduledTime = Date.now()): Promise<void> {
  await configureLedger(env);
  const ctx = createExecutionContext();
  const handler = (worker as ExportedHandler<WorkerEnv>).scheduled;
  if (!handler) throw new Error("the Worker has no scheduled handler");
  await handler(createScheduledController({ scheduledTime, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** Prints a line at the end of the test run, even when the test passes. */
export async function report(line: string): Promise<void> {
  const { inject } = await import("vitest");
  await fetch(inject("reportUrl"), { method: "POST", body: line });
}

/** A sweep's report; a sweep that was skipped (misconfigured, or queued behind another) fails the test, saying why. */
export function ran<T extends object>(outcome: T): Exclude<T, { skipped: string }> {
  if ("skipped" in outcome) throw new Error(`the sweep was skipped: ${String(outcome.skipped)}`);
  return outcome as Exclude<T, { skipped: string }>;
}
