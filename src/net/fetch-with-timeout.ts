/**
 * fetch with a deadline whose timer is cleared once the answer is in:
 * AbortSignal.timeout leaves its timer running after the request ended, which
 * keeps a Durable Object busy (and its eviction waiting) for the whole timeout.
 * `read` consumes the answer inside the deadline.
 */
export async function fetchWithTimeout<T>(url: string | URL | Request, init: RequestInit, timeoutMs: number, read: (r: Response) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("The operation timed out.", "TimeoutError")), timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal });
    return await read(response);
  } finally {
    clearTimeout(timer);
  }
}
