// The network reason code (src/net/network-cause.ts) somewhere in an error's chain of causes: the
// NetworkFailure fetchWithTimeout threw, however many errors wrapped it, or the runtime's TimeoutError.
import type { NetworkReason } from "./network-cause.ts";
import { NetworkFailure } from "./fetch-with-timeout.ts";

export function networkReasonOf(e: unknown): NetworkReason | undefined {
  for (let at: unknown = e, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    if (at instanceof NetworkFailure && at.reason !== undefined) return at.reason;
    if (at.name === "TimeoutError") return "Timeout";
  }
  return undefined;
}
