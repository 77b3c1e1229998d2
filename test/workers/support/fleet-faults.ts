// The faults of the fleet's fault sweeps (fleet.ts): 5xx, 429 and slow answers on both stand-ins,
// Cloudflare Access answers in front of the API server, a broken proxy's lists, and 403 secondary rate limits.
import type { AccessAnswer, accessFaults } from "../../standins/kube/access-faults-client.ts";
import { MANGLES } from "../../standins/kube/proxy-mangle.ts";
import { type FleetOptions, OTHER_NS } from "./fleet-types.ts";
import { NS, type Stack } from "./stack.ts";

const SECONDARY_LIMIT = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
const ACCESS_ANSWERS: AccessAnswer[] = ["access-login", "access-login-local", "redirect-local", "html-200", "empty-object-200", "html-404"];

/** Sweep k's faults (k below faultSweeps); answers how many of each kind were added. */
export async function injectFaults(
  s: Stack,
  access: ReturnType<typeof accessFaults>,
  o: FleetOptions,
  k: number,
  random: () => number,
  pick: <T>(xs: readonly T[]) => T,
): Promise<{ faults: number; access: number }> {
  let faultsInjected = 0;
  let accessInjected = 0;
  const faults = [
    () => s.kube.addFault({ match: { method: "GET" }, status: pick([500, 503, 429]), times: 1 }),
    // Not 409: on a DELETE with a uid precondition it means that uid is gone (sweep.test.ts), which a fault cannot fake.
    () => s.kube.addFault({ match: { method: "DELETE" }, status: pick([500, 503, 429]), times: 1 + Math.floor(random() * 3) }),
    () => s.kube.addFault({ match: { method: "DELETE" }, delayMs: 50, times: 2 }),
    () => s.github.addFault({ match: { pathIncludes: "/actions/" }, status: pick([500, 502, 503]), times: 1 + Math.floor(random() * 3) }),
    () => s.github.addFault({ match: { pathIncludes: "/actions/" }, status: 429, retryAfterSeconds: 1, times: 1 }),
    () => s.github.addFault({ match: { pathIncludes: "/app/hook/deliveries" }, status: 500, times: 1 }),
    () => s.github.addFault({ match: { pathIncludes: "access_tokens" }, status: 500, times: 1 }),
  ];
  const n = 1 + Math.floor(random() * 3);
  for (let i = 0; i < n; i++) await pick(faults)();
  faultsInjected += n;
  // Cloudflare Access in front of the API server (an expired service token): on list, read and delete,
  // every kind of answer on every verb over the fault sweeps (direct mode: the agent talks to the API server itself).
  for (const [v, verb] of (o.agent ? [] : ["list", "get", "delete"]).entries()) {
    // Lists in the first namespace only: the second's go through a broken proxy (below), which Access would answer first.
    const match = verb === "list" ? { verb, namespace: NS } : { verb };
    await access.add({ answer: ACCESS_ANSWERS[(k + v) % ACCESS_ANSWERS.length]!, match, times: 1 + Math.floor(random() * 3) });
    accessInjected++;
  }
  // A broken proxy in front of the API server (issue 46, direct mode), on the second namespace's lists: a Table with a
  // row cut short or numbers sent as text, or a page cut with remainingItemCount saying more is coming and no continue.
  // Each is an unreadable namespace: its runners are never absent, never idle.
  if (!o.agent) {
    const mangle = MANGLES[k % MANGLES.length]!;
    await s.kube.addFault({ match: { verb: "list", pathIncludes: `/namespaces/${OTHER_NS}/` }, mangle, times: 1 + Math.floor(random() * 3) });
    faultsInjected++;
  }
  // A secondary rate limit: 403, no Retry-After (every other fault sweep).
  if (k % 2 === 0) {
    await s.github.addFault({ match: { pathIncludes: "/actions/" }, status: 403, message: SECONDARY_LIMIT, times: 1 });
    faultsInjected++;
  }
  return { faults: faultsInjected, access: accessInjected };
}
