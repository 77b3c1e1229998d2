// Drives the real Worker entry (fetch and scheduled) inside workerd with a
// settings env of the test's choosing and the test project's KV binding.
import { env as bindings } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { Webhooks } from "@octokit/webhooks";
import worker from "../../../src/index.ts";
import type { WorkerEnv } from "../../../src/env.ts";

export const WEBHOOK_SECRET = "test-webhook-secret-0123456789";
export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

const kv = (bindings as unknown as { FACTS: KVNamespace }).FACTS;

/** A complete, valid settings env; cluster and GitHub URLs point nowhere unless a test sets them. */
export function testEnv(overrides: Record<string, string | undefined> = {}): WorkerEnv {
  const base: Record<string, string> = {
    GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
    GITHUB_APP_ID: "1",
    GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\\n-----END RSA PRIVATE KEY-----",
    GITHUB_API_URL: "http://127.0.0.1:9/github",
    KUBE_API_URL: "http://127.0.0.1:9/kube",
    KUBE_TOKEN: "test-kube-token",
    REAPER_NAMESPACES: "arc-runners",
    REAPER_GRACE_SECONDS: "300",
    REAPER_MAX_JOB_SECONDS: "432000",
    REAPER_DRY_RUN: "false",
    REAPER_MAX_DELETIONS_PER_SWEEP: "50",
    ADMIN_TOKEN,
  };
  const merged: Record<string, unknown> = { ...base, FACTS: kv };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  return merged as WorkerEnv;
}

export async function call(env: WorkerEnv, request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

let deliveryCounter = 0;
export function newDeliveryId(): string {
  deliveryCounter++;
  return `72d3162e-cc78-11e3-81ab-${String(deliveryCounter).padStart(12, "0")}`;
}

export async function signedDelivery(
  event: string,
  payload: unknown,
  opts: { delivery?: string; secret?: string; body?: string } = {},
): Promise<Request> {
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

export async function adminRunners(env: WorkerEnv, query = ""): Promise<{ runners: Record<string, unknown>[] }> {
  const response = await call(
    env,
    new Request(`https://arc-reaper.test/admin/runners${query}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
  );
  if (response.status !== 200) throw new Error(`admin/runners answered ${response.status}: ${await response.text()}`);
  return response.json();
}

export async function kvKeys(): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown, string> = await kv.list(cursor ? { cursor } : {});
    keys.push(...page.keys.map((k) => k.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return keys;
}

export async function clearKv(): Promise<void> {
  for (const key of await kvKeys()) await kv.delete(key);
}

export async function runScheduled(env: WorkerEnv, scheduledTime = Date.now()): Promise<void> {
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
