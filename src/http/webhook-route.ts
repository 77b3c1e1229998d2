import { Webhooks } from "@octokit/webhooks";
import type { Context } from "hono";
import { factsFromWebhook } from "../github/facts-from-webhook.ts";
import { logLine } from "../log.ts";
import type { Settings } from "../config/settings.ts";
import type { AppEnv } from "./app-env.ts";
import type { DeliveryOutcome } from "../ledger/delivery-counter.ts";
import { ledgerFor } from "../ledger/ledger-for.ts";

// One verifier per settings (per isolate), not one per delivery on the hot path.
const verifiers = new WeakMap<Settings, Webhooks>();
function verifierFor(settings: Settings): Webhooks {
  let verifier = verifiers.get(settings);
  if (!verifier) verifiers.set(settings, (verifier = new Webhooks({ secret: settings.webhookSecret })));
  return verifier;
}

/**
 * POST /webhook: verify and parse here, record the facts in the ledger, then
 * answer. Nothing is recorded unless the signature is valid and the payload has
 * every field the facts need; every answer is counted in the ledger.
 */
export async function receiveWebhook(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const ledger = ledgerFor(c.env, settings.ledgerName);
  const event = c.req.header("x-github-event") ?? "";
  const delivery = c.req.header("x-github-delivery") ?? "";
  const signature = c.req.header("x-hub-signature-256");
  const body = await c.req.text();
  const answer = (status: 200 | 202 | 400 | 401, outcome: DeliveryOutcome, detail: string): Response => {
    logLine({ msg: "webhook", event, delivery, status, outcome, detail });
    // Counted without holding the answer back; a recorded delivery was counted with its facts.
    if (outcome !== "recorded") c.executionCtx.waitUntil(ledger.count(event, outcome).catch(() => undefined));
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

  await ledger.receive({ event, outcome: "recorded", facts: outcome.facts });
  return answer(202, "recorded", outcome.summary);
}
