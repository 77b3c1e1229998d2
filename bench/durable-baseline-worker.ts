// The durable minimum for the intake benchmark (issue 25): the least any design
// that never loses a delivery does before answering. It verifies
// X-Hub-Signature-256 with the same @octokit/webhooks call as the signature-only
// baseline (bench/baseline-worker.ts), then stores the delivery (its GUID, event
// and body) with one INSERT in a SQLite-backed Durable Object over RPC, and
// answers 202 once that write is stored (the object's output gate). No facts,
// no runner rows, no alarm.
import { DurableObject } from "cloudflare:workers";
import { Webhooks } from "@octokit/webhooks";

interface DurableBaselineEnv {
  GITHUB_WEBHOOK_SECRET: string;
  DELIVERIES: DurableObjectNamespace<Deliveries>;
}

export class Deliveries extends DurableObject<DurableBaselineEnv> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: DurableBaselineEnv) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS deliveries (guid TEXT PRIMARY KEY, event TEXT NOT NULL, body TEXT NOT NULL, at INTEGER NOT NULL)");
  }

  /** One INSERT; the answer leaves once the write is stored. */
  store(guid: string, event: string, body: string): boolean {
    return (
      this.sql.exec("INSERT INTO deliveries (guid, event, body, at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", guid, event, body, Date.now()).rowsWritten > 0
    );
  }
}

export default {
  async fetch(request, env) {
    if (request.method !== "POST") return Response.json({ error: "POST only" }, { status: 405 });
    const signature = request.headers.get("x-hub-signature-256");
    const body = await request.text();
    if (!signature) return Response.json({ error: "X-Hub-Signature-256 header is missing" }, { status: 401 });
    const verified = await new Webhooks({ secret: env.GITHUB_WEBHOOK_SECRET }).verify(body, signature).catch(() => false);
    if (!verified) return Response.json({ error: "signature does not match" }, { status: 401 });
    const guid = request.headers.get("x-github-delivery") ?? crypto.randomUUID();
    const event = request.headers.get("x-github-event") ?? "unknown";
    // One ledger, as arc-reaper has one.
    const stored = await env.DELIVERIES.get(env.DELIVERIES.idFromName("deliveries")).store(guid, event, body);
    return Response.json({ outcome: stored ? "stored" : "duplicate" }, { status: 202 });
  },
} satisfies ExportedHandler<DurableBaselineEnv>;
