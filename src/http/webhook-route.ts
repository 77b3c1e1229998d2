import { Webhooks } from "@octokit/webhooks";
import type { Context } from "hono";
import { factsFromWebhook } from "../github/facts-from-webhook.ts";
import { logLine } from "../log.ts";
import { countWebhookDelivery } from "../metrics/webhook-deliveries.ts";
import type { Settings } from "../config/settings.ts";
import { writeFact } from "../store/kv-facts.ts";
import { factTtlSeconds } from "../store/fact-ttl.ts";
import type { FactsKV } from "../store/kv-facts.ts";

// One verifier per settings (per isolate), not one per delivery on the hot path.
const verifiers = new WeakMap<Settings, Webhooks>();
function verifierFor(settings: Settings): Webhooks {
  let verifier = verifiers.get(settings);
  if (!verifier) verifiers.set(settings, (verifier = new Webhooks({ secret: settings.webhookSecret })));
  return verifier;
}

/**
 * POST /webhook: verify, parse, record facts. Nothing is recorded unless the
 * signature is valid and the payload has every field the facts need.
 */
export async function receiveWebhook(c: Context, settings: Settings, kv: FactsKV): Promise<Response> {
  const event = c.req.header("x-github-event") ?? "";
  const delivery = c.req.header("x-github-delivery") ?? "";
  const signature = c.req.header("x-hub-signature-256");
  const body = await c.req.text();
  const answer = (status: 200 | 202 | 400 | 401, outcome: string, detail: string): Response => {
    logLine({ msg: "webhook", event, delivery, status, outcome, detail });
    countWebhookDelivery(event, outcome);
    return c.json(status < 300 ? { outcome, detail } : { error: detail }, status);
  };

  if (!signature) return answer(401, "rejected", "X-Hub-Signature-256 header is missing");
  const verified = await verifierFor(settings).verify(body, signature).catch(() => false);
  if (!verified) return answer(401, "rejected", "X-Hub-Signature-256 does not match the body (check GITHUB_WEBHOOK_SECRET)");
  if (!event) return answer(400, "invalid", "X-GitHub-Event header is missing");
  if (!delivery) return answer(400, "invalid", "X-GitHub-Delivery header is missing");

  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch (e) {
    return answer(400, "invalid", `body is not valid JSON: ${(e as Error).message}`);
  }
  const outcome = factsFromWebhook(event, delivery, payload);
  if (outcome.kind === "invalid") return answer(400, "invalid", outcome.error);
  if (outcome.kind === "ignored") return answer(200, "ignored", outcome.why);

  const ttl = factTtlSeconds(settings);
  await Promise.all(outcome.facts.map((fact) => writeFact(kv, fact, ttl)));
  return answer(202, "recorded", outcome.summary);
}
