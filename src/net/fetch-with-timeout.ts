/**
 * fetch with a deadline whose timer is cleared once the answer is in:
 * AbortSignal.timeout leaves its timer running after the request ended, which
 * keeps a Durable Object busy (and its eviction waiting) for the whole timeout.
 * `read` consumes the answer inside the deadline.
 *
 * A request that fails on the way (workerd says only "Network connection
 * lost.") fails with the method and URL it was for (origin and path; never the
 * query or a header), so the sweep line and /admin say which address is down.
 * A timeout stays the runtime's TimeoutError (callers say "timed out").
 */
export async function fetchWithTimeout<T>(url: string | URL | Request, init: RequestInit, timeoutMs: number, read: (r: Response) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("The operation timed out.", "TimeoutError")), timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal }).catch((e: unknown) => {
      throw controller.signal.aborted ? e : new NetworkFailure(init.method ?? (url instanceof Request ? url.method : "GET"), url, e);
    });
    return await read(response);
  } finally {
    clearTimeout(timer);
  }
}

/** A request that never got an answer: the runtime's words, and where it was going. */
class NetworkFailure extends Error {
  constructor(method: string, url: string | URL | Request, cause: unknown) {
    const u = new URL(url instanceof Request ? url.url : url.toString());
    const words = cause instanceof Error ? cause.message : String(cause);
    super(`${words.replace(/\.$/, "")} (${method.toUpperCase()} ${u.origin}${u.pathname})`, { cause });
    this.name = "NetworkFailure";
  }
}
