// The baseline for the intake benchmark: a Worker that only verifies
// X-Hub-Signature-256 with the same @octokit/webhooks call as POST /webhook
// (src/http/webhook-route.ts), and records nothing. What arc-reaper adds on top
// (routing, settings, JSON parsing, facts, the KV write, its log line) is the
// difference between the two.
import { Webhooks } from "@octokit/webhooks";

interface BaselineEnv {
  GITHUB_WEBHOOK_SECRET: string;
}

export default {
  async fetch(request, env) {
    if (request.method !== "POST") return Response.json({ error: "POST only" }, { status: 405 });
    const signature = request.headers.get("x-hub-signature-256");
    const body = await request.text();
    if (!signature) return Response.json({ error: "X-Hub-Signature-256 header is missing" }, { status: 401 });
    // A new Webhooks per request, as the product does.
    const verified = await new Webhooks({ secret: env.GITHUB_WEBHOOK_SECRET }).verify(body, signature).catch(() => false);
    return verified ? Response.json({ outcome: "verified" }, { status: 202 }) : Response.json({ error: "signature does not match" }, { status: 401 });
  },
} satisfies ExportedHandler<BaselineEnv>;
