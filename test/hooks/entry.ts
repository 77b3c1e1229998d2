// The Worker as tests and the bench run it: the production entry, the test
// ledger (test-ledger.ts) and the bench's routes, all 404 unless ARC_REAPER_TEST_HOOKS=on:
//   POST /test/seed-history?from=&count=   closed rows of history in bulk (admin bearer)
//        [&failed=<scale set>&spreadMs=]     ... of Failed runners of that scale set, deleted over the last spreadMs
//   POST /test/ledger-receive[?dry=1|rpc=1] a workflow_job body straight to the ledger,
//        without the signature check or the door: what one ledger sustains
//   POST /test/ledger-loop?count=&first=    recorded deliveries made inside the ledger
//   POST /test/read-open?whole=0|1&times=N   the open rows read N times, whole or as the sweep judges them (bench/read-open.ts)
//   POST /test/seed-live                     [{event, guid, payload}] webhook bodies recorded in bulk, each through receive() (admin bearer) Used by vitest's workerd project and by scripts/lib/local-stack.ts
// when a stack asks for ARC_REAPER_TEST_HOOKS; `npm start` and deploys use src/index.ts.
import worker from "../../src/index.ts";
import { settingsFor } from "../../src/config/settings-for.ts";
import type { WorkerEnv } from "../../src/durable/ledger-for.ts";
import { constantTimeEqual } from "../../src/http/constant-time.ts";
import { factsFromWebhook } from "../../src/github/facts-from-webhook.ts";
import type { Ledger } from "./test-ledger.ts";
import { batchConsoleLogs, flushConsoleLogs, heldConsoleLines } from "./batch-console-logs.ts";

export { Ledger } from "./test-ledger.ts";

const MAX_COUNT = 50_000;
const MAX_LOOP = 20_000;

type Route = (request: Request, url: URL, ledger: DurableObjectStub<Ledger>) => Promise<Response>;

/** Routes that need the admin bearer (the load client of the ledger-rate bench sends none). */
const NEEDS_ADMIN = new Set(["/test/seed-history", "/test/seed-live"]);
const MAX_LIVE = 2_000;

const bad = (error: string) => Response.json({ error }, { status: 400 });

const routes: Record<string, Route> = {
  "/test/seed-history": async (_request, url, ledger) => {
    const from = Number(url.searchParams.get("from"));
    const count = Number(url.searchParams.get("count"));
    if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(count) || count < 1 || count > MAX_COUNT) {
      return bad(`from must be a whole number and count 1 to ${MAX_COUNT}`);
    }
    const failed = url.searchParams.get("failed");
    if (failed) return Response.json({ written: await ledger.seedFailedHistory(from, count, failed, Number(url.searchParams.get("spreadMs") ?? 3_600_000)) });
    return Response.json({ written: await ledger.seedHistory(from, count) });
  },
  "/test/ledger-receive": async (request, url, ledger) => {
    const guid = request.headers.get("x-github-delivery") ?? crypto.randomUUID();
    const outcome = factsFromWebhook(request.headers.get("x-github-event") ?? "workflow_job", guid, await request.json());
    if (outcome.kind !== "facts") return bad(`not a recorded delivery: ${outcome.kind}`);
    // ?dry=1: everything but the ledger; ?rpc=1: a call to the ledger that writes nothing.
    if (url.searchParams.get("dry") === "1") return Response.json({ outcome: "dry", facts: outcome.facts.length }, { status: 202 });
    if (url.searchParams.get("rpc") === "1") {
      await ledger.idle();
      return Response.json({ outcome: "rpc", facts: outcome.facts.length }, { status: 202 });
    }
    return Response.json(await ledger.receive({ event: "workflow_job", guid, facts: outcome.facts }), { status: 202 });
  },
  "/test/seed-live": async (request, _url, ledger) => {
    const body = (await request.json()) as { event: string; guid: string; payload: unknown }[];
    if (!Array.isArray(body) || body.length < 1 || body.length > MAX_LIVE) return bad(`the body must be an array of 1 to ${MAX_LIVE} deliveries`);
    const deliveries = [];
    for (const d of body) {
      const outcome = factsFromWebhook(d.event, d.guid, d.payload);
      if (outcome.kind !== "facts") return bad(`delivery ${d.guid} is not a recorded delivery: ${outcome.kind}`);
      deliveries.push({ event: d.event, guid: d.guid, facts: outcome.facts });
    }
    return Response.json({ written: await ledger.receiveMany(deliveries) });
  },
  "/test/read-open": async (_request, url, ledger) => {
    const times = Number(url.searchParams.get("times") ?? 1);
    if (!Number.isSafeInteger(times) || times < 1 || times > 100) return bad("times must be 1 to 100");
    return Response.json({ rows: await ledger.readOpen(url.searchParams.get("whole") === "1", times) });
  },
  "/test/ledger-loop": async (_request, url, ledger) => {
    const count = Number(url.searchParams.get("count"));
    const first = Number(url.searchParams.get("first") ?? 1);
    if (!Number.isSafeInteger(count) || count < 1 || count > MAX_LOOP || !Number.isSafeInteger(first) || first < 1) {
      return bad(`count must be 1 to ${MAX_LOOP} and first a positive whole number`);
    }
    return Response.json(await ledger.receiveLoop(first, count));
  },
};

async function benchRoute(route: Route, request: Request, env: WorkerEnv): Promise<Response> {
  const result = settingsFor(env);
  if (!result.ok) return Response.json({ error: "arc-reaper is misconfigured" }, { status: 503 });
  if (env.ARC_REAPER_TEST_HOOKS !== "on") return Response.json({ error: "the test hooks are off (ARC_REAPER_TEST_HOOKS)" }, { status: 404 });
  const token = result.settings.adminToken;
  const auth = request.headers.get("authorization") ?? "";
  const url = new URL(request.url);
  if (NEEDS_ADMIN.has(url.pathname) && (!token || !constantTimeEqual(auth, `Bearer ${token}`)))
    return Response.json({ error: "the admin token is needed" }, { status: 401 });
  const ledgers = env.LEDGER as unknown as DurableObjectNamespace<Ledger>;
  return route(request, url, ledgers.get(ledgers.idFromName(result.settings.ledgerName)));
}

export default {
  async fetch(request, env, ctx) {
    const route = request.method === "POST" ? routes[new URL(request.url).pathname] : undefined;
    const batching =
      env.ARC_REAPER_TEST_HOOKS === "on" && typeof env.ARC_REAPER_TEST_LOG_BATCH === "string" && batchConsoleLogs(Number(env.ARC_REAPER_TEST_LOG_BATCH));
    try {
      return await (route ? benchRoute(route, request, env) : worker.fetch(request, env, ctx));
    } finally {
      // The request's own lines (a webhook's) are written soon after it, within its lifetime.
      if (batching && heldConsoleLines() > 0) ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 25)).then(flushConsoleLogs));
    }
  },
  scheduled: worker.scheduled,
} satisfies ExportedHandler<WorkerEnv>;
