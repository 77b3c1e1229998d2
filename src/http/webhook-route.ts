import type { Context } from "hono";
import { factsFromWebhook } from "../github/facts-from-webhook.ts";
import { logLine } from "../log.ts";
import type { Settings } from "../config/settings.ts";
import type { AppEnv } from "./app-env.ts";
import type { DeliveryOutcome } from "../ledger/count-delivery.ts";
import { ledgerFor } from "../durable/ledger-for.ts";
import { countAtDoor, type DoorExtras } from "./door-tally.ts";
import { verifySignature } from "./verify-signature.ts";
import { errorText } from "../model/error-text.ts";
import { isOwnerRepo } from "../model/shapes.ts";

const WORKFLOW_EVENTS = new Set(["workflow_job", "workflow_run"]);
// One decoder per isolate (a decoder without streaming keeps no state between calls).
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * POST /webhook: verify and parse here, record the facts in the ledger, then
 * answer. Nothing is recorded unless the signature is valid and the payload has
 * every field the facts need. Only a delivery with something to record waits on
 * the ledger; every other answer is counted in the isolate (door-tally.ts).
 */
export async function receiveWebhook(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const event = c.req.header("x-github-event") ?? "";
  const delivery = c.req.header("x-github-delivery") ?? "";
  const signature = c.req.header("x-hub-signature-256");
  const answer = (status: 200 | 202 | 400 | 401, outcome: DeliveryOutcome, detail: string, extras?: DoorExtras): Response => {
    // Deliveries that change nothing are many (every event of the org): counted, not logged one by one.
    if (outcome !== "ignored") logLine({ msg: "webhook", event, delivery, status, outcome, detail });
    if (outcome !== "recorded" && outcome !== "duplicate" && outcome !== "stale") countAtDoor(c, settings.ledgerName, event, outcome, extras);
    return c.json(status < 300 ? { outcome, detail } : { error: detail }, status);
  };

  if (!signature) return answer(401, "rejected", "X-Hub-Signature-256 header is missing");
  // The signature is over the raw bytes; the text is decoded only after it matched.
  const raw = new Uint8Array(await c.req.arrayBuffer());
  const verified = await verifySignature(settings, raw, signature).catch(() => false);
  if (!verified) return answer(401, "rejected", "X-Hub-Signature-256 does not match the body (check GITHUB_WEBHOOK_SECRET)");
  if (!event) return answer(400, "invalid", "X-GitHub-Event header is missing");
  if (!delivery) return answer(400, "invalid", "X-GitHub-Delivery header is missing");

  let payload: unknown;
  try {
    payload = JSON.parse(UTF8.decode(raw));
  } catch (e) {
    return answer(400, "invalid", `body is not valid JSON: ${errorText(e)}`);
  }
  const outcome = factsFromWebhook(event, delivery, payload);
  if (outcome.kind === "invalid") return answer(400, "invalid", outcome.error);
  if (outcome.kind === "ignored") {
    // A workflow delivery's GUID and installation are remembered even when it teaches nothing.
    const extras: DoorExtras = WORKFLOW_EVENTS.has(event) ? { guid: delivery, installation: installationOf(payload) } : {};
    return answer(200, "ignored", outcome.why, extras);
  }

  const ledger = ledgerFor(c.env, settings.ledgerName);
  const facts = outcome.kind === "facts" ? outcome.facts : [];
  const change = outcome.kind === "installation" ? { installation: outcome.change } : {};
  const receipt = await ledger.receive({ event, guid: delivery, facts, ...change });
  if (receipt.outcome === "duplicate") return answer(202, "duplicate", `delivery ${delivery} was received before: nothing recorded`);
  if (receipt.outcome === "stale") return answer(200, "stale", `${outcome.summary}: older than REAPER_HISTORY_DAYS, not recorded`);
  return answer(202, "recorded", outcome.summary);
}

/** The repository and installation a delivery names, when it names both. */
function installationOf(payload: unknown): { repo: string; id: number } | undefined {
  const p = payload as { repository?: { full_name?: unknown }; installation?: { id?: unknown } } | null;
  const repo = p?.repository?.full_name;
  const id = p?.installation?.id;
  return isOwnerRepo(repo) && typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? { repo, id } : undefined;
}
