import { networkCause, settleDnsOrTls, type NetworkCause, type NetworkReason } from "./network-cause.ts";

/** How long the plain-HTTP probe that tells DNS from TLS may take (src/net/network-cause.ts). */
const PROBE_MS = 2_000;

/**
 * fetch with a deadline whose timer is cleared once the answer is in:
 * AbortSignal.timeout leaves its timer running after the request ended, which
 * keeps a Durable Object busy (and its eviction waiting) for the whole timeout.
 * `read` consumes the answer inside the deadline.
 *
 * A request that fails on the way fails with a NetworkFailure: its reason code
 * (DNS, TLS, a connection refused or cut; src/net/network-cause.ts), in words
 * naming the host, the method and URL it was for (origin and path; never the
 * query or a header), and the runtime's own words, so the sweep line,
 * /healthz/deep and /admin say which address is down and why. workerd's
 * "internal error; reference = …" (DNS or TLS) is told apart by a plain-HTTP
 * probe of the same host and port, which carries nothing of the request.
 * A timeout stays the runtime's TimeoutError (callers say "timed out").
 */
export async function fetchWithTimeout<T>(url: string | URL | Request, init: RequestInit, timeoutMs: number, read: (r: Response) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("The operation timed out.", "TimeoutError")), timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal }).catch(async (e: unknown) => {
      if (controller.signal.aborted) throw e;
      const target = new URL(url instanceof Request ? url.url : url.toString());
      throw new NetworkFailure(init.method ?? (url instanceof Request ? url.method : "GET"), target, e, await causeOf(target, e));
    });
    return await read(response);
  } finally {
    clearTimeout(timer);
  }
}

/** Why the request to `target` failed, DNS told from TLS by a probe when the runtime does not say. */
async function causeOf(target: URL, e: unknown): Promise<NetworkCause | undefined> {
  const cause = e instanceof Error ? networkCause(withInnerWords(e), target.host) : undefined;
  if (cause?.code !== "DnsOrTlsFailure") return cause;
  const https = target.protocol === "https:";
  if (!https) return settleDnsOrTls(target.host, false, cause);
  const probe = new AbortController();
  const timer = setTimeout(() => probe.abort(new DOMException("The operation timed out.", "TimeoutError")), PROBE_MS);
  try {
    const answer = await fetch(`http://${target.hostname}:${target.port || "443"}/`, { signal: probe.signal, redirect: "manual" });
    await answer.body?.cancel();
    return settleDnsOrTls(target.host, true, "answered");
  } catch (p) {
    return settleDnsOrTls(target.host, true, p instanceof Error ? networkCause(p, target.host) : undefined);
  } finally {
    clearTimeout(timer);
  }
}

/** Node's fetch says only "fetch failed" and puts the system error (ECONNREFUSED, ENOTFOUND, ...) in its cause: read both. */
function withInnerWords(e: Error): { name: string; message: string } {
  const inner = e.cause instanceof Error ? ` ${String((e.cause as { code?: unknown }).code ?? "")} ${e.cause.message}` : "";
  return { name: e.name, message: `${e.message}${inner}` };
}

/** A request that never got an answer: why (a reason code and words), where it was going, and the runtime's words. */
export class NetworkFailure extends Error {
  readonly reason: NetworkReason | undefined;
  constructor(method: string, target: URL, cause: unknown, why: NetworkCause | undefined) {
    const words = (cause instanceof Error ? cause.message : String(cause)).replace(/\.$/, "");
    const where = `${method.toUpperCase()} ${target.origin}${target.pathname}`;
    super(why ? `${why.words} [${why.code}] (${where}; the runtime said: ${words})` : `${words} (${where})`, { cause });
    this.name = "NetworkFailure";
    this.reason = why?.code;
  }
}
