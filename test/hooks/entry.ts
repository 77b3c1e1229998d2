// The Worker as tests and the bench run it: the production entry, the test
// ledger (test-ledger.ts) and one bench route, POST /test/seed-history?from=&count=
// (admin bearer). Used by vitest's workerd project and by scripts/lib/local-stack.ts
// when a stack asks for ARC_REAPER_TEST_HOOKS; `npm start` and deploys use src/index.ts.
import worker from "../../src/index.ts";
import { settingsFor } from "../../src/config/settings-for.ts";
import type { WorkerEnv } from "../../src/env.ts";
import { constantTimeEqual } from "../../src/http/constant-time.ts";
import type { Ledger } from "./test-ledger.ts";

export { Ledger } from "./test-ledger.ts";

const MAX_COUNT = 50_000;

async function seedHistoryRoute(request: Request, env: WorkerEnv): Promise<Response> {
  const result = settingsFor(env);
  if (!result.ok) return Response.json({ error: "arc-reaper is misconfigured" }, { status: 503 });
  const token = result.settings.adminToken;
  const auth = request.headers.get("authorization") ?? "";
  if (!token || !constantTimeEqual(auth, `Bearer ${token}`)) return Response.json({ error: "the admin token is needed" }, { status: 401 });
  const url = new URL(request.url);
  const from = Number(url.searchParams.get("from"));
  const count = Number(url.searchParams.get("count"));
  if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(count) || count < 1 || count > MAX_COUNT) {
    return Response.json({ error: `from must be a whole number and count 1 to ${MAX_COUNT}` }, { status: 400 });
  }
  const ledgers = env.LEDGER as unknown as DurableObjectNamespace<Ledger>;
  const stub = ledgers.get(ledgers.idFromName(result.settings.ledgerName));
  return Response.json({ written: await stub.seedHistory(from, count) });
}

export default {
  fetch(request, env, ctx) {
    if (request.method === "POST" && new URL(request.url).pathname === "/test/seed-history") return seedHistoryRoute(request, env);
    return worker.fetch(request, env, ctx);
  },
  scheduled: worker.scheduled,
} satisfies ExportedHandler<WorkerEnv>;
